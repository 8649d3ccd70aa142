"""A plain reproducer's verdict, and its record written beside it."""

from __future__ import annotations

import sys
from pathlib import Path

from seedzer.finding.minimal import text as parts
from seedzer.finding.minimal.program import MINIMAL_FILE, MinimalProgram, read_record
from seedzer.finding.minimal.text import Docs
from seedzer.finding.minimal.verify import VerifySettings, minimal_verdict, verify_minimal
from seedzer.kernel.common import GONE_LINE, PRESENT_LINE


def test_a_verdict_needs_the_exit_status_and_its_line() -> None:
    assert minimal_verdict(1, f"x\n{PRESENT_LINE}\n") == ("present", "")
    assert minimal_verdict(0, f"{GONE_LINE} ok") == ("fixed", "")
    assert minimal_verdict(1, "Traceback ... SyntaxError") == ("error", "exit status 1 without its verdict line")
    assert minimal_verdict(3, "cannot run here: AttributeError: no tirx")[0] == "cannot-run"
    assert minimal_verdict(2, "ValueError: other\na different failure\n") == ("different", "ValueError: other")
    assert minimal_verdict(None, "") == ("error", "ran over its time limit")


def test_verifying_writes_the_program_and_its_record(tmp_path: Path) -> None:
    text = parts.program([parts.docstring(Docs("t"), ["numpy"]), parts.preamble([]),
                          parts.error_check(["raise ValueError('the bug')"], "the bug", "ok")])
    program = MinimalProgram(text, ("apache-tvm", "numpy"), "pass-failure", "relax.X", ("relax.transform.X()",))
    record = verify_minimal(tmp_path, program, None, VerifySettings(fresh=False, python=sys.executable))
    assert (tmp_path / MINIMAL_FILE).read_text() == text
    assert record.verified and record.verdict == "present" and record.exit_status == 1
    assert record.facts["tvm"] and read_record(tmp_path) == record
    assert record.status == f"{program.lines} lines, verified"
