"""The TVMScript size the tir and sched triages report: :func:`seedzer.finding.script_triage.lines`."""

from __future__ import annotations

from seedzer.finding.script_triage import lines


def test_lines_counts_code_but_not_the_printer_header_or_blank_lines() -> None:
    script = "# from tvm.script import tir as T\n\n@T.prim_func\ndef main():\n    # a note\n    T.evaluate(0)\n"
    assert lines(script) == 3
