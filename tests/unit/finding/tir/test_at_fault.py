"""The pass at fault, from intermediate IRs, over a toy lowering whose IR is the list of steps applied."""

from __future__ import annotations

import dataclasses

from seedzer.finding.tir.at_fault import (
    MINIMAL_FAILS,
    Localizer,
    broke_unchecked,
    broken_postcondition,
    failing_index,
    from_ir,
    inner_pass,
    made_invalid,
)
from seedzer.finding.tir.witness import MAKING_FAILED, WitnessIR
from seedzer.finding.verdict import AtFault
from seedzer.kernel.common import OPT_VS_REFERENCE, Observation, Stage, Symptom
from seedzer.kernel.messages import same_failure
from seedzer.kernel.tir.case import FUZZED, Case, Step

A = Step("tirx.A", role=FUZZED, optional=True)
V = Step("tirx.V", role=FUZZED, optional=True)
S = Step("tirx.S")
O = Step("tirx.O", optional=True)  # noqa: E741 - a pipeline pass a minimal lowering leaves out
C = Step("tirx.C")
FAIL_AT_C = Observation(Symptom.EXCEPTION, Stage.PASS, "tirx.C", "InternalError: cannot handle v", step_index=4)


def toy(producer: str = "tirx.V", failing: str = "tirx.C") -> tuple[object, object]:
    """``observe`` fails at ``failing`` once ``producer`` ran before it (on this IR or an earlier one)."""
    runs: list[Case] = []

    def observe(case: Case) -> Observation:
        runs.append(case)
        applied = case.script.split(";") if case.script else []
        for i, step in enumerate(case.steps):
            if step.name == failing and producer in applied:
                return dataclasses.replace(FAIL_AT_C, pass_name=failing, step_index=i)
            applied.append(step.name)
        return Observation.ok()

    def make_ir(case: Case, index: int) -> WitnessIR:
        applied = [*(case.script.split(";") if case.script else []), *(s.name for s in case.steps[:index])]
        return WitnessIR(";".join(applied))

    return observe, make_ir


def reproduces(expected: Observation, got: Observation, _script: str) -> bool:
    return same_failure(expected, got)


def case(*steps: Step) -> Case:
    return Case("", tuple(steps), 0)


def test_the_producer_before_the_failing_pass_is_at_fault() -> None:
    observe, make_ir = toy()
    localizer = Localizer(observe, make_ir, reproduces)  # type: ignore[arg-type]
    found = localizer.error(case(A, V, S, O, C), FAIL_AT_C)
    assert found.step == V and found.tests <= 4


def test_an_input_that_fails_alone_puts_the_failing_pass_at_fault() -> None:
    observe, make_ir = toy(producer="input")  # the input fails as it is
    given = dataclasses.replace(case(A, V, S, O, C), script="input")
    found = Localizer(observe, make_ir, reproduces).error(given, FAIL_AT_C)  # type: ignore[arg-type]
    assert found.step == C


def test_an_ir_that_does_not_fail_before_the_failing_step_is_not_localized() -> None:
    observe, _ = toy()

    def broken(case_: Case, index: int) -> WitnessIR:
        return WitnessIR("", "it does not parse back")

    found = Localizer(observe, broken, reproduces).error(case(A, V, S, O, C), FAIL_AT_C)  # type: ignore[arg-type]
    assert found.step is None and "could not be made" in found.why


def test_the_minimal_remainder_drops_optional_steps_but_the_failing_one() -> None:
    rest = from_ir(case(A, V, S, O, C), "tirx.A", 1, 4)
    assert [s.name for s in rest.steps] == ["tirx.S", "tirx.C"] and rest.script == "tirx.A"
    kept = from_ir(case(A, V, S, O, C), "", 0, 3)
    assert [s.name for s in kept.steps] == ["tirx.S", "tirx.O", "tirx.C"]


def test_failing_index_of_a_pass_a_build_and_another_program() -> None:
    c = case(A, V, S, O, C)
    assert failing_index(c, FAIL_AT_C) == 4
    assert failing_index(c, Observation(Symptom.EXCEPTION, Stage.BUILD, "codegen", "x")) == 5
    assert failing_index(c, dataclasses.replace(FAIL_AT_C, pass_name="<reference>:tirx.C")) is None


def test_a_wrong_result_whose_first_culprit_only_enables_it_is_named_after_the_last() -> None:
    wrong = Observation(Symptom.MISMATCH, Stage.COMPARE, None, "values differ", comparison=OPT_VS_REFERENCE)

    def observe(case_: Case) -> Observation:  # wrong whenever V runs on an IR S has simplified
        applied = case_.script.split(";") if case_.script else []
        for step in case_.steps:
            if step.name == "tirx.V" and "tirx.A" in applied:
                return wrong
            applied.append(step.name)
        return Observation.ok()

    _, make_ir = toy()
    found = Localizer(observe, make_ir, reproduces).enabling(case(A, S, V, C), wrong, [0, 2])  # type: ignore[arg-type]
    assert found.step == V
    alone = Localizer(observe, make_ir, reproduces).enabling(case(A, S, V, C), wrong, [2])  # type: ignore[arg-type]
    assert alone.step is None


def test_a_wrong_result_made_by_the_first_culprit_keeps_both() -> None:
    wrong = Observation(Symptom.MISMATCH, Stage.COMPARE, None, "values differ")

    def observe(case_: Case) -> Observation:  # needs both A and V to run in this case
        names = [s.name for s in case_.steps]
        return wrong if "tirx.A" in names and "tirx.V" in names else Observation.ok()

    _, make_ir = toy()
    found = Localizer(observe, make_ir, reproduces).enabling(case(A, S, V, C), wrong, [0, 2])  # type: ignore[arg-type]
    assert found.step is None and "from the IR before tirx.V" in found.why


def test_a_build_failure_is_searched_before_the_host_split() -> None:
    """Code generation rejects what V made; the IRs after SplitHostDevice are not user programs."""
    split = Step("tirx.SplitHostDevice")
    codegen = Observation(Symptom.EXCEPTION, Stage.BUILD, "codegen", "unknown intrinsic tirx.sinh")

    def observe(case_: Case) -> Observation:  # the remainder's minimal lowering is the program: it fails
        applied = [*(case_.script.split(";") if case_.script else []), *(s.name for s in case_.steps)]
        wrapped = Observation(Symptom.INVALID, Stage.BUILD, None, MINIMAL_FAILS + codegen.headline())
        return wrapped if "tirx.V" in applied else Observation.ok()

    made: list[int] = []

    def make_ir(case_: Case, index: int) -> WitnessIR:
        made.append(index)
        if index > 3:
            return WitnessIR("", "the IR holds 2 PrimFuncs, not one")
        return WitnessIR(";".join(s.name for s in case_.steps[:index]))

    found = Localizer(observe, make_ir, reproduces).error(case(A, V, S, split, C), codegen)  # type: ignore[arg-type]
    assert found.step == V and made[0] == 3 and max(made) == 3


def _ir_with_defect(made_by: str, gone_after: str = "") -> object:
    """``make_ir`` of the toy whose IR fails a constructor's type check once ``made_by`` ran (until
    ``gone_after`` simplified it away); an IR before the first step never fails."""

    def make_ir(case_: Case, index: int) -> WitnessIR:
        applied = [s.name for s in case_.steps[:index]]
        broken = made_by in applied and not (gone_after and gone_after in applied)
        return WitnessIR(";".join(applied), "Check failed: mismatched types. int32 vs. int64" if broken else None)

    return make_ir


def test_a_culprit_pass_whose_output_fails_a_type_check_is_at_fault() -> None:
    steps = case(A, V, S, O, C)
    found = made_invalid(_ir_with_defect("tirx.V"), steps, [1, 4])  # type: ignore[arg-type]
    assert found is not None and found[0] == V and "Check failed" in found[1]


def test_a_defect_made_before_the_culprit_step_is_found_by_its_maker() -> None:
    first, second = Step("tirx.P", role=FUZZED, optional=True), Step("tirx.P")
    steps = case(A, S, first, second, O, C)  # the culprit is the pipeline's P and C; the fuzzed P made the defect
    found = made_invalid(_ir_with_defect("tirx.P", gone_after="tirx.O"), steps, [3, 5])  # type: ignore[arg-type]
    assert found is not None and found[0] is first


def test_a_defect_made_by_a_pass_outside_the_culprit_decides_nothing() -> None:
    steps = case(A, V, S, O, C)
    assert made_invalid(_ir_with_defect("tirx.S"), steps, [4]) is None  # type: ignore[arg-type]
    assert made_invalid(_ir_with_defect("nothing"), steps, [1, 4]) is None  # type: ignore[arg-type]


NARROW = Step("tirx.ForceNarrowIndexToInt32", role=FUZZED, optional=True)
COMPACT = Step("s_tir.CompactBufferAllocation")
MIXED = "block 'matmul': iterator v_k is int64, its domain int32, its binding int32"


def _mixed_after(made_by: str, already: bool = False) -> object:
    """``make_ir`` of the toy whose IR has an iterator of mixed dtypes once ``made_by`` ran (or from the start)."""

    def make_ir(case_: Case, index: int) -> WitnessIR:
        applied = [s.name for s in case_.steps[:index]]
        return WitnessIR(";".join(applied), mixed=MIXED if already or made_by in applied else None)

    return make_ir


def test_a_narrowing_pass_that_leaves_a_wide_iterator_broke_its_promise() -> None:
    steps = case(A, NARROW, S, COMPACT)
    found = broken_postcondition(_mixed_after(NARROW.name), steps, [1, 3])  # type: ignore[arg-type]
    assert found is not None and found[0] is NARROW and found[1] == MIXED


def test_mixed_iterators_the_narrowing_pass_was_given_or_another_pass_made_decide_nothing() -> None:
    steps = case(A, NARROW, S, COMPACT)
    assert broken_postcondition(_mixed_after("", already=True), steps, [1, 3]) is None  # type: ignore[arg-type]
    assert broken_postcondition(_mixed_after("tirx.A"), steps, [0, 3]) is None  # type: ignore[arg-type]
    assert broken_postcondition(_mixed_after(NARROW.name), steps, [3]) is None  # type: ignore[arg-type]


PARTITION = Step("s_tir.LoopPartition", optional=True)
UNROLL = Step("tirx.UnrollLoop")
NONCONSTANT = "loop i0_i is unrolled over the non-constant extent 37 - T.max(i0_o * 5, 32)"


def _unchecked_after(made_by: str, already: bool = False, raised_at: str = "") -> object:
    """``make_ir`` of the toy whose IR has an unrolled loop over a non-constant extent once ``made_by`` ran
    (or from the start); making the IR after ``raised_at`` fails as that step raises."""

    def make_ir(case_: Case, index: int) -> WitnessIR:
        applied = [s.name for s in case_.steps[:index]]
        if raised_at and raised_at in applied:
            return WitnessIR("", f"{MAKING_FAILED}StepFailure: exception at pass/{raised_at}: InternalError: "
                                 "Check failed: value >= 0 (-1 vs. 0) : Cannot unroll non-constant loop)")
        return WitnessIR(";".join(applied), unchecked=NONCONSTANT if already or made_by in applied else None)

    return make_ir


def test_the_pass_whose_output_first_has_an_unrolled_nonconstant_loop_broke_the_invariant() -> None:
    steps = case(A, S, PARTITION, O, UNROLL)
    found = broke_unchecked(_unchecked_after(PARTITION.name), steps, 4)  # type: ignore[arg-type]
    assert found is not None and found[0] is PARTITION and found[1] == NONCONSTANT
    assert broke_unchecked(_unchecked_after("", already=True), steps, 4) is None  # type: ignore[arg-type]
    assert broke_unchecked(_unchecked_after("nothing"), steps, 4) is None  # type: ignore[arg-type]


def test_a_step_that_raises_itself_did_not_make_invalid_ir() -> None:
    steps = case(A, PARTITION, S, UNROLL)  # UnrollLoop's own check fires: making its output fails, no defect made
    assert made_invalid(_unchecked_after("", raised_at=UNROLL.name), steps, [1, 3]) is None  # type: ignore[arg-type]
    later = Step("s_tir.RenormalizeSplitPattern")  # a culprit step after the raising one: its input cannot be made
    steps = case(A, PARTITION, S, UNROLL, later)
    assert made_invalid(_unchecked_after("", raised_at=UNROLL.name), steps, [1, 3, 4]) is None  # type: ignore[arg-type]


ASSUME = Step("tirx.RemoveAssume", role=FUZZED, optional=True)


def _fails_in(*passes: str) -> object:
    """``observe`` of a toy that fails in any of ``passes`` once ``tirx.V`` ran (on this IR or an earlier one)."""

    def observe(case_: Case) -> Observation:
        applied = case_.script.split(";") if case_.script else []
        for i, step in enumerate(case_.steps):
            if step.name in passes and V.name in applied:
                return dataclasses.replace(FAIL_AT_C, pass_name=step.name, step_index=i)
            applied.append(step.name)
        return Observation.ok()

    return observe


def test_a_composite_pass_whose_inner_pass_fails_alone_names_the_inner_pass() -> None:
    _, make_ir = toy()
    steps = case(A, V, S, ASSUME, C)
    got = dataclasses.replace(FAIL_AT_C, pass_name=ASSUME.name, step_index=3)
    decided = AtFault(ASSUME.name, "it fails on the IR it is given", ("tirx.V",))
    found = inner_pass(_fails_in(ASSUME.name, "tirx.RemoveNoOp"), make_ir, reproduces, steps, got,  # type: ignore[arg-type]
                       decided)
    assert found is not None and found.code == "tirx.RemoveNoOp" and found.rule == "inner-pass"
    assert found.reached == (ASSUME.name, "tirx.V")


def test_a_composite_pass_whose_own_stage_is_needed_or_a_plain_pass_stays() -> None:
    _, make_ir = toy()
    steps = case(A, V, S, ASSUME, C)
    got = dataclasses.replace(FAIL_AT_C, pass_name=ASSUME.name, step_index=3)
    decided = AtFault(ASSUME.name, "it fails on the IR it is given")
    assert inner_pass(_fails_in(ASSUME.name), make_ir, reproduces, steps, got, decided) is None  # type: ignore[arg-type]
    plain = AtFault("tirx.S", "it fails on the IR it is given")
    assert inner_pass(_fails_in(ASSUME.name, "tirx.RemoveNoOp"), make_ir, reproduces, steps, got,  # type: ignore[arg-type]
                      plain) is None
