"""Running a plain reproducer's text in a forked child: its exit status and output, as a real interpreter
would give them (the guard makes an uncaught error "cannot run here", never "present")."""

from __future__ import annotations

from seedzer.finding.minimal import text as parts
from seedzer.finding.minimal.harness import fails_as, identity, run_minimal
from seedzer.finding.minimal.text import Docs
from seedzer.kernel.common import Observation, Stage, Symptom


def _program(*body: list[str]) -> str:
    return parts.program([parts.docstring(Docs("t"), ["numpy"]), parts.preamble([]), *body])


def test_an_error_holding_the_mark_is_present_another_is_different_none_is_gone() -> None:
    present = run_minimal(_program(parts.error_check(["raise ValueError('boom: the mark 42')"], "the mark", "ok")), 60)
    assert present.present and present.exit_status == 1
    different = run_minimal(_program(parts.error_check(["raise ValueError('other')"], "the mark", "ok")), 60)
    assert different.exit_status == parts.DIFFERENT and not different.present
    gone = run_minimal(_program(parts.error_check(["x = 1"], "the mark", "it ran")), 60)
    assert gone.gone and "it ran" in gone.output


def test_an_error_outside_the_check_cannot_run_here() -> None:
    run = run_minimal(_program(["import surely_not_a_module"]), 60)
    assert run.exit_status == parts.CANNOT_RUN and parts.CANNOT_RUN_LINE in run.output


def test_a_death_by_a_signal_in_the_child_is_present() -> None:
    run = run_minimal(_program(parts.crash_check(["import os, signal", "os.kill(os.getpid(), signal.SIGFPE)"],
                                                 "ok")), 60)
    expected = Observation(Symptom.CRASH, Stage.PASS, "p", "killed", signal=8)
    assert run.present and fails_as(expected, run, frozenset())
    assert not fails_as(Observation(Symptom.CRASH, Stage.PASS, "p", "killed", signal=11), run, frozenset())


def test_the_same_error_is_judged_by_its_normalized_message() -> None:
    run = run_minimal(_program(parts.error_check(["raise RuntimeError('ValueError: bad var ins_12 at 3')"],
                                                 "bad var", "ok")), 60)
    same = Observation(Symptom.EXCEPTION, Stage.PASS, "p", "ValueError: bad var ins_99 at 7")
    other = Observation(Symptom.EXCEPTION, Stage.PASS, "p", "ValueError: worse var ins_99 at 7")
    assert fails_as(same, run, frozenset()) and not fails_as(other, run, frozenset())
    assert identity("InternalError: ValueError: x 1") == identity("ValueError: x 2")
