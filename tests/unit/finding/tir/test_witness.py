"""Witnesses of failures reached outside the pass contracts: each check of ``WitnessSearch.find``
through its public interface, with a fake observe and IR maker (no TVM)."""

from __future__ import annotations

import dataclasses

from seedzer.finding.tir.witness import WitnessIR, WitnessSearch, witness_steps
from seedzer.kernel.common import Observation, Stage, Symptom
from seedzer.kernel.tir.case import FUZZED, PIPELINE, Case, Step
from seedzer.passes.tir.contracts import pipeline_steps

PIPE = tuple(pipeline_steps())
NARROW = next(i for i, s in enumerate(PIPE) if s.name == "tirx.NarrowDataType")
EARLY = Step("tirx.LowerIntrin", role=FUZZED, optional=True)
STEPS = (EARLY, *PIPE)
FAILED = Observation(Symptom.EXCEPTION, Stage.PASS, "tirx.NarrowDataType", "Check failed: int32 vs int64",
                     step_index=NARROW + 1)
PROGRAM = Case("MUTANT", STEPS, 0, expected=FAILED)


def _search(answer: Observation, made: WitnessIR, ub: str | None = None) -> tuple[WitnessSearch, list[Case]]:
    ran: list[Case] = []

    def observe(case: Case, timeout: float) -> Observation:
        ran.append(case)
        return answer

    return WitnessSearch(observe, lambda witness, seed: ub, 30.0, lambda case, index, timeout: made), ran


def test_a_witness_that_fails_the_same_way_through_tvms_pipeline_is_found() -> None:
    search, ran = _search(dataclasses.replace(FAILED, step_index=NARROW), WitnessIR("WITNESS"))
    found = search.find(PROGRAM, FAILED, "SEED", excusable=False, names=frozenset())
    assert found.case is not None and found.observation is not None and found.why_not == ""
    assert found.case.script == "WITNESS" and found.case.steps == PIPE  # plain tvm.compile of the witness
    assert found.case.expected == found.observation and len(ran) == 1


def test_a_witness_failing_otherwise_leaves_the_dismissal_with_what_it_gave() -> None:
    search, _ = _search(Observation.ok(), WitnessIR("WITNESS"))
    found = search.find(PROGRAM, FAILED, "SEED", excusable=False, names=frozenset())
    assert found.case is None
    assert found.why_not.startswith("the IR before tirx.NarrowDataType, run through TVM's own pipeline, gives ok")


def test_ir_that_is_not_a_valid_program_is_no_witness_and_nothing_runs() -> None:
    search, ran = _search(FAILED, WitnessIR("W", "its TVMScript does not parse back (ParserError: x)"))
    found = search.find(PROGRAM, FAILED, "SEED", excusable=False, names=frozenset())
    assert found.case is None and not ran
    assert found.why_not == "the IR before tirx.NarrowDataType: its TVMScript does not parse back (ParserError: x)"


def test_a_reserved_attribute_makes_no_witness() -> None:
    search, ran = _search(FAILED, WitnessIR('T.attr(0, "compute_scope", "main_compute_")'))
    found = search.find(PROGRAM, FAILED, None, excusable=False, names=frozenset())
    assert found.case is None and "compute_scope" in found.why_not and not ran


def test_undefined_behaviour_is_checked_only_where_it_could_excuse_the_failure() -> None:
    same = dataclasses.replace(FAILED, step_index=NARROW)
    compared: list[tuple[str, str]] = []

    def ub(witness: str, seed: str) -> str | None:
        compared.append((witness, seed))
        return "ub: integer division by possibly-zero n"

    made = {"MUTANT": WitnessIR("WITNESS"), "SEED": WitnessIR("LOWERED SEED")}
    search = WitnessSearch(lambda case, timeout: same, ub, 30.0, lambda case, index, timeout: made[case.script])
    excused = search.find(PROGRAM, FAILED, "SEED", excusable=True, names=frozenset())
    assert excused.case is None and excused.why_not.endswith("(ub: integer division by possibly-zero n)")
    assert compared == [("WITNESS", "LOWERED SEED")]  # the seed lowered by the same steps: like with like
    search, _ = _search(same, WitnessIR("WITNESS"), ub="ub: integer division by possibly-zero n")
    assert search.find(PROGRAM, FAILED, "SEED", excusable=False, names=frozenset()).case is not None
    # a compiler's refusal of a division by zero is excused by a possibly-zero division only, never by NaN math
    search, _ = _search(same, WitnessIR("WITNESS"), ub="ub: NaN/Inf: atanh of a value possibly outside (-1.0, 1.0)")
    assert search.find(PROGRAM, FAILED, "SEED", excusable=True, names=frozenset()).case is not None
    wrong = Observation(Symptom.MISMATCH, Stage.COMPARE, None, "output 0 differs", step_index=NARROW + 1)
    search, _ = _search(wrong, WitnessIR("WITNESS"), ub="ub: NaN/Inf: atanh of a value possibly outside (-1.0, 1.0)")
    assert search.find(PROGRAM, wrong, "SEED", excusable=True, names=frozenset()).why_not.endswith("(-1.0, 1.0))")


def test_a_failure_without_a_step_has_no_witness() -> None:
    search, _ = _search(FAILED, WitnessIR("WITNESS"))
    found = search.find(PROGRAM, dataclasses.replace(FAILED, step_index=None), "SEED", False, frozenset())
    assert found.case is None and found.why_not == "the failure names no step of the program"


def test_a_pass_outside_the_pipeline_runs_at_its_contract_position_in_the_witness() -> None:
    hoist = Step("s_tir.HoistExpression", role=FUZZED, optional=True)
    steps = witness_steps(dataclasses.replace(PROGRAM, steps=(hoist, *PIPE)), hoist)
    assert steps is not None and [s.name for s in steps if s.role == FUZZED] == ["s_tir.HoistExpression"]
    assert [s for s in steps if s.role == PIPELINE] == list(PIPE)
    assert steps.index(next(s for s in steps if s.role == FUZZED)) > 0  # never before the pipeline's lowering
    assert witness_steps(PROGRAM, PIPE[NARROW]) == list(PIPE)
    assert witness_steps(PROGRAM, Step("no.SuchPass", role=FUZZED)) is None


def test_a_hang_has_no_witness() -> None:
    hang = Observation(Symptom.HANG, Stage.PASS, "tirx.UnrollLoop", "pass stage ran over 60s", step_index=3)
    search, ran = _search(hang, WitnessIR("WITNESS"))
    found = search.find(PROGRAM, hang, "SEED", excusable=False, names=frozenset())
    assert found.case is None and found.why_not.startswith("a hang has none") and not ran
