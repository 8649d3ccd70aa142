"""FuzzBench-style experiment reports: a long-format table, statistics, plots and one HTML page.

Kept free of imports so that registering the ``report`` command does not load pandas or matplotlib;
use :func:`seedzer.report.build.build_report`.
"""
