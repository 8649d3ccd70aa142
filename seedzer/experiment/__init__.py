"""Experiments: several heuristics' pools fuzzed in repeated, timed, resumable trials.

Kept free of imports so that registering the ``experiment`` command stays cheap; see
:mod:`seedzer.experiment.spec` (the YAML schema) and :mod:`seedzer.experiment.trials`.
"""
