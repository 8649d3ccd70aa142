"""The gate's rules about the input program: here the ``mandatory`` rule (a failure TVM's minimal
lowering shows too is TVM's only on a well-formed program); the
reserved-attribute and undefined-behaviour rules are exercised with the whole gate in test_gate.py."""

from __future__ import annotations

import dataclasses

from seedzer.finding.tir.input_rules import Mandatory
from seedzer.finding.tir.witness import WitnessIR
from seedzer.kernel.common import Observation, Stage, Symptom
from seedzer.kernel.tir.case import Case, Checks, Step
from tests.unit.finding.tir.test_gate import ERROR, SCRIPT, STEPS, _context

# a failure in a mandatory step (index 0, "Lower"), as a mutant the fuzz workers judge shows it
MANDATORY = Observation(Symptom.EXCEPTION, Stage.PASS, "Lower", "Check failed: (x) is false: boom", step_index=0)


def _judged(expected: Observation = MANDATORY, judge_minimal: bool = True) -> Case:
    return Case(SCRIPT, STEPS, 0, checks=Checks(judge_minimal=judge_minimal), expected=expected)


def _minimal_fails(case: Case) -> Observation:
    """Every program fails in "Lower", the minimal lowering too (no optional step is needed)."""
    return MANDATORY if any(s.name == "Lower" for s in case.steps) else Observation.ok()


def _well_formed(case: Case, index: int, timeout: float) -> WitnessIR:
    return WitnessIR(case.script)


def test_a_mandatory_failure_on_a_well_formed_program_without_ub_goes_on_to_its_culprit() -> None:
    context = _context(_judged(), _minimal_fails, got=MANDATORY, witness_ir=_well_formed)
    assert Mandatory().judge(context) is None
    assert context.notes == ["TVM's minimal lowering fails the same way on this well-formed program without "
                             "undefined behaviour: its mandatory pipeline or code generator is at fault"]
    ran = [c for c, _ in context.tester.ran]  # type: ignore[attr-defined]
    assert [s.name for s in ran[0].steps] == ["Lower", "Codegen"]  # the optional fuzzed steps left out


def test_a_mandatory_failure_on_an_ill_formed_input_is_invalid_with_the_verifiers_reason() -> None:
    def ill_formed(case: Case, index: int, timeout: float) -> WitnessIR:
        assert index == 0  # the input itself
        return WitnessIR(case.script, "it is not well-formed (Variable i is used outside its scope)")

    verdict = Mandatory().judge(_context(_judged(), _minimal_fails, got=MANDATORY, witness_ir=ill_formed))
    assert verdict is not None and verdict.verdict == "not-a-bug"
    assert verdict.reason == ("invalid: TVM's minimal lowering fails on an input that is not a program TVM accepts: "
                              "it is not well-formed (Variable i is used outside its scope)")


def test_only_failures_the_minimal_lowering_shows_of_cases_that_ask_are_judged_here() -> None:
    # a failure of an optional pass the minimal lowering does not show: the later rules judge it
    assert Mandatory().judge(_context(_judged(ERROR), lambda case: Observation.ok(), got=ERROR)) is None
    # an older case (judge_minimal off), a wrong result and a run-time failure run no test at all
    never = _context(_judged(judge_minimal=False), got=MANDATORY)
    assert Mandatory().judge(never) is None
    wrong = Observation(Symptom.MISMATCH, Stage.COMPARE, None, "outputs differ")
    assert Mandatory().judge(_context(_judged(wrong), got=wrong)) is None
    at_run = dataclasses.replace(MANDATORY, stage=Stage.RUN, pass_name="run", step_index=None)
    assert Mandatory().judge(_context(_judged(at_run), got=at_run)) is None
    assert STEPS[0] == Step("Lower")
