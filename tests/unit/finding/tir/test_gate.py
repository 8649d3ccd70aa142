"""The low-level gate's rules, each judged on its own through ``judge(context)`` with a fake tester
that answers as the real one does (``observe(case, timeout)``, a ``tests`` counter, ``builder.parse``),
then in order by the gate's rule engine. No TVM: the forked hang-size count and the undefined-
behaviour analysis are injected too. (The gate on real findings: tests/integration/test_audited_corpus.py.)"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from seedzer.finding import store
from seedzer.finding.gate import GateRules, GateSettings
from seedzer.finding.meta import BUG, NOT_A_BUG, FindingMeta
from seedzer.finding.tir import gate
from seedzer.finding.tir.context import ShrinkStep
from seedzer.finding.tir.gate import RULES, GateJob, TirContext, excused_by_ub
from seedzer.finding.tir.hang_size import HUGE_IR_NODES, IRSize
from seedzer.finding.tir.input_rules import ReservedAttribute, UndefinedBehaviour
from seedzer.finding.tir.rules import (
    PIPELINE_SHARE,
    Alone,
    Ancestor,
    Contract,
    Culprit,
    ExpectsFailure,
    Hang,
    LegacyProgram,
    Precondition,
    Verifier,
)
from seedzer.finding.tir.witness import WitnessIR
from seedzer.finding.verdict import reason_code
from seedzer.kernel.common import OPT_VS_REFERENCE, Observation, Stage, Symptom
from seedzer.kernel.tir.case import FUZZED, PIPELINE, Case, Step
from seedzer.passes.tir.contracts import pipeline_steps

Answer = Callable[[Case], Observation]
Measure = Callable[[Case, str, str | None, float], IRSize | None]


class FakeParser:
    """Parses a script to itself, or fails on the scripts it is told are unparsable."""

    def __init__(self, unparsable: frozenset[str] = frozenset()) -> None:
        self.unparsable = unparsable

    def parse(self, script: str) -> Any:
        if script in self.unparsable:
            raise SyntaxError(f"cannot parse {script!r}")
        return script


class FakeTester:
    """The gate's tester, answering every case with ``answer`` (and remembering what it ran)."""

    __test__ = False

    def __init__(self, answer: Answer, unparsable: frozenset[str] = frozenset()) -> None:
        self.answer = answer
        self.builder = FakeParser(unparsable)
        self.tests = 0
        self.ran: list[tuple[Case, float]] = []

    def observe(self, case: Case, timeout: float) -> Observation:
        self.tests += 1
        self.ran.append((case, timeout))
        return self.answer(case)


def _never(case: Case) -> Observation:
    raise AssertionError(f"the rule ran a test it should not have: {case.script!r}")


ERROR = Observation(Symptom.EXCEPTION, Stage.PASS, "fz.B", "Check failed: (x) is false: boom", step_index=2)
STEPS = (Step("Lower"), Step("fz.A", role=FUZZED, optional=True), Step("fz.B", role=FUZZED, optional=True),
         Step("Codegen"))
SCRIPT = 'def main(a: T.Buffer((4,), "float32")):\n    for i in range(4):\n        a[i] = a[i] + 1\n'


def _case(expected: Observation | None = ERROR, script: str = SCRIPT, steps: tuple[Step, ...] = STEPS) -> Case:
    return Case(script, steps, 0, expected=expected)


def _context(case: Case, answer: Answer = _never, got: Observation | None = None,
             ancestors: list[tuple[str, str]] | None = None, legacy: Case | None = None,
             settings: GateSettings | None = None, unparsable: frozenset[str] = frozenset(),
             measure: Measure | None = None,
             ub_check: Callable[[Any, Any], str | None] | None = None,
             witness_ir: Callable[[Case, int, float], WitnessIR] | None = None,
             shrink_step: ShrinkStep | None = None) -> TirContext:
    job = GateJob("0123456789ab", case, ancestors or [], settings or GateSettings(), legacy)
    context = TirContext.of(job, FakeTester(answer, unparsable))
    context.got = got
    context.measure = measure or (lambda case, program, before, timeout: pytest.fail("no hang size is measured"))
    context.ub_check = ub_check or (lambda mutant, seed: None)
    context.make_witness_ir = witness_ir or (lambda case, index, timeout: WitnessIR("", "not made here"))
    context.shrink_step = shrink_step or (lambda script, test, out_of_time: None)
    return context


def _tester(context: TirContext) -> FakeTester:
    assert isinstance(context.tester, FakeTester)
    return context.tester


# --- the rule tuple and its documentation ---


def test_the_module_docstring_lists_the_rules_in_order() -> None:
    listed = re.findall(r"^\s*\d+\. \*\*([\w-]+)\.\*\*", gate.__doc__ or "", re.MULTILINE)
    assert listed == [rule.name for rule in RULES]
    assert listed == ["expects-failure", "legacy-program", "alone", "hang", "precondition", "reserved-attribute",
                      "undefined-behaviour", "mandatory", "contract", "ancestor", "verifier", "culprit"]


def test_the_engine_marks_the_answering_rule_and_the_store_records_it(tmp_path: Path) -> None:
    context = _context(_case(), lambda case: Observation.ok())
    verdict = GateRules(RULES).first_answer(context)
    assert (verdict.verdict, verdict.rule, reason_code(verdict.reason)) == (NOT_A_BUG, "alone", "not-reproduced")
    assert verdict.tests == 1 and verdict.signature == "0123456789ab"
    meta = FindingMeta("0123456789ab", "lowlevel", ERROR)
    store.apply_verdict(tmp_path, meta, verdict)
    assert meta.extra["gate_rule"] == "alone" and meta.verdict == NOT_A_BUG


def test_a_confirmed_error_goes_through_every_rule_to_its_culprit() -> None:
    context = _context(_case(), lambda case: ERROR if "fz.B" in {s.name for s in case.steps} else Observation.ok())
    verdict = GateRules(RULES).first_answer(context)
    assert (verdict.verdict, verdict.rule, verdict.culprit) == (BUG, "culprit", ["fz.B"])
    assert verdict.root and verdict.case.expected == ERROR  # the case now expects what it showed alone


# --- expects-failure ---


def test_expects_failure_dismisses_a_case_that_expects_none() -> None:
    verdict = ExpectsFailure().judge(_context(_case(Observation.ok())))
    assert verdict is not None and verdict.verdict == NOT_A_BUG
    assert verdict.reason.startswith("not-reproduced: the case expects no failure (ok")
    assert ExpectsFailure().judge(_context(_case())) is None


# --- legacy-program ---


def test_legacy_program_passes_a_finding_of_this_seedzer() -> None:
    assert LegacyProgram().judge(_context(_case())) is None


def test_legacy_program_must_still_fail_as_recorded() -> None:
    old = _case(script="OLD")
    context = _context(_case(), lambda case: Observation.ok(), legacy=old)
    verdict = LegacyProgram().judge(context)
    assert verdict is not None and verdict.reason.startswith("not-reproduced: run alone it gives ok")
    assert verdict.case.script == "OLD" and _tester(context).tests == 1
    assert not _tester(context).ran[0][0].checks.illformed  # the verifier only for an ill-formed finding


def test_legacy_program_failing_only_outside_the_contracts_is_a_contract_violation() -> None:
    context = _context(_case(), lambda case: ERROR if case.script == "OLD" else Observation.ok(),
                       legacy=_case(script="OLD"))
    verdict = LegacyProgram().judge(context)
    assert verdict is not None and verdict.verdict == NOT_A_BUG and reason_code(verdict.reason) == "contract"
    assert verdict.case.script == SCRIPT


def test_legacy_program_confirms_the_failure_within_the_contracts() -> None:
    other = Observation(Symptom.EXCEPTION, Stage.PASS, "Codegen", "Check failed: other", step_index=3)
    context = _context(_case(), lambda case: ERROR if case.script == "OLD" else other, legacy=_case(script="OLD"))
    assert LegacyProgram().judge(context) is None
    assert context.expected == other and context.got == other
    assert context.notes == [f"within the pass contracts it shows as: {other.headline()[:200]}"]
    assert Alone().judge(context) is None and _tester(context).tests == 2  # not run alone once more


# --- alone ---


def test_alone_passes_the_same_failure_and_keeps_it() -> None:
    context = _context(_case(), lambda case: ERROR)
    assert Alone().judge(context) is None
    assert context.got == ERROR and _tester(context).tests == 1 and not context.notes


def test_alone_dismisses_another_failure_an_invalid_case_and_an_instrumented_crash() -> None:
    other = dataclasses.replace(ERROR, message="Check failed: something else entirely")
    verdict = Alone().judge(_context(_case(), lambda case: other))
    assert verdict is not None and verdict.reason == f"not-reproduced: run alone it gives {other.headline()}"
    invalid = Observation(Symptom.INVALID, Stage.MUTATE, None, "unusable test case: x")
    verdict = Alone().judge(_context(_case(), lambda case: invalid))
    assert verdict is not None and verdict.reason == "invalid: unusable test case: x"
    crash = Observation(Symptom.CRASH, Stage.BUILD, "tirx.LowerIntrin", "killed by signal SIGSEGV", signal=11)
    verdict = Alone().judge(_context(_case(crash), lambda case: Observation.ok(),
                                     settings=GateSettings(instrumented=True)))
    assert verdict is not None and reason_code(verdict.reason) == "instrumentation-suspect"


def test_alone_judges_illformed_ir_that_now_shows_as_a_wrong_result_as_such() -> None:
    illformed = Observation(Symptom.ILLFORMED, Stage.PASS, "fz.B", "ill-formed IR", step_index=2)
    mismatch = Observation(Symptom.MISMATCH, Stage.COMPARE, None, "outputs differ", comparison=OPT_VS_REFERENCE)
    context = _context(_case(illformed), lambda case: mismatch)
    assert Alone().judge(context) is None
    assert context.got == mismatch and context.notes[0].startswith("run alone the ill-formed IR shows as: mismatch")


def test_alone_answers_a_hang_the_test_case_asks_for_before_the_long_rerun() -> None:
    hang = Observation(Symptom.HANG, Stage.BUILD, "tirx.LowerIntrin", "build stage ran over 60s")
    unrolled = _case(hang, script="for i in T.unroll(4096):\n    pass\n")
    measured: list[tuple[str, str | None, float]] = []

    def huge(case: Case, program: str, before: str | None, timeout: float) -> IRSize:
        measured.append((program, before, timeout))
        return IRSize(5000, 60000)

    context = _context(unrolled, measure=huge)
    verdict = Alone().judge(context)
    assert verdict is not None and verdict.verdict == NOT_A_BUG and _tester(context).tests == 0
    assert verdict.reason.startswith("invalid: the IR unrolls loops explicitly")
    assert "the lowered program has over 2,000 statements (from 2 lines of IR): the slow compile" in verdict.reason
    assert measured == [("opt", None, context.timeout)]  # the code generator's input, whole
    # small enough: the hang is re-run alone, with the generous limit
    context = _context(unrolled, lambda case: hang, measure=lambda case, program, before, timeout: IRSize(100, 900))
    assert Alone().judge(context) is None
    assert _tester(context).ran[0][1] == GateSettings().hang_factor * GateSettings().timeouts["build"]


def test_alone_reruns_a_slow_pass_before_measuring_the_ir_it_was_given() -> None:
    # IR that big may still pass within the limit alone (audited: 1.4 million nodes entering ThreadSync)
    hang = Observation(Symptom.HANG, Stage.PASS, "s_tir.ThreadSync", "pass stage ran over 20s")
    context = _context(_case(hang, script="for i in T.unroll(4096):\n    pass\n"), lambda case: Observation.ok())
    verdict = Alone().judge(context)
    assert verdict is not None and verdict.reason.startswith("not-reproduced: run alone it gives ok")


# --- hang ---


HANG = Observation(Symptom.HANG, Stage.RUN, "tirx.LowerIntrin", "run stage ran over 60s")


def _pipeline(hangs: bool) -> Answer:
    """TVM's default pipeline (the case without its fuzzed steps) hangs or runs correctly; no other
    case is run."""
    def answer(case: Case) -> Observation:
        assert case.steps == (STEPS[0], STEPS[3]), "only the default pipeline is run"
        return HANG if hangs else Observation.ok()
    return answer


def test_hang_passes_other_failures() -> None:
    assert Hang().judge(_context(_case(), got=ERROR)) is None


def test_a_hang_is_a_bug_at_its_step_unless_the_minimal_lowering_or_the_test_case_asks_for_it() -> None:
    context = _context(_case(HANG), _pipeline(hangs=False), got=HANG)
    verdict = Hang().judge(context)
    assert verdict is not None and (verdict.verdict, verdict.culprit) == (BUG, ["tirx.LowerIntrin"])
    assert verdict.root and verdict.notes[-1] == "the kernel was slow at tirx.LowerIntrin (IR of 3 lines)"
    minimal = dataclasses.replace(HANG, pass_name="<minimal>:tirx.LowerIntrin")
    verdict = Hang().judge(_context(_case(minimal), got=minimal))
    assert verdict is not None and verdict.reason.startswith("invalid: even the minimal lowering is this slow")
    unrolled = _case(HANG, script="for i in T.unroll(4096):\n    pass\n")
    verdict = Hang().judge(_context(unrolled, got=HANG, measure=lambda case, program, before, timeout: IRSize(2001, 0)))
    assert verdict is not None and verdict.verdict == NOT_A_BUG and "the slow kernel is the work" in verdict.reason


def test_a_hang_is_not_a_bug_when_the_default_pipeline_on_the_program_is_slow_too() -> None:
    for stage, where in ((Stage.RUN, "tirx.LowerIntrin"), (Stage.BUILD, "<reference>:codegen"),
                         (Stage.PASS, "fz.B")):
        hang = dataclasses.replace(HANG, stage=stage, pass_name=where)
        context = _context(_case(hang), _pipeline(hangs=True), got=hang)
        verdict = Hang().judge(context)
        limit = context.timeout
        assert verdict is not None and verdict.verdict == NOT_A_BUG and verdict.observation == hang
        assert verdict.reason.startswith(
            "invalid: the program itself is slow: TVM's default pipeline on it takes over "
            f"{PIPELINE_SHARE * limit:.0f} s too (fuzzed: over {limit:.0f} s; IR of 3 lines, "
            "stopped at run/tirx.LowerIntrin)")
        (ran, timeout), = _tester(context).ran
        assert timeout == PIPELINE_SHARE * limit and ran.script == SCRIPT


def test_a_hang_the_default_pipeline_outruns_is_filed_with_a_note() -> None:
    context = _context(_case(HANG), _pipeline(hangs=False), got=HANG)
    verdict = Hang().judge(context)
    assert verdict is not None and verdict.verdict == BUG and _tester(context).tests == 1
    assert verdict.notes[0].startswith("TVM's default pipeline on the same program finishes in 0 s (limit "
                                       f"{PIPELINE_SHARE * context.timeout:.0f} s): ok")
    # a case without fuzzed steps is TVM's default pipeline: nothing to compare it with
    pipeline_only = _case(HANG, steps=(STEPS[0], STEPS[3]))
    verdict = Hang().judge(_context(pipeline_only, got=HANG))
    assert verdict is not None and verdict.verdict == BUG


def test_a_slow_pass_is_asked_for_when_the_ir_entering_it_is_huge() -> None:
    hang = Observation(Symptom.HANG, Stage.PASS, "<reference>:tirx.RemoveNoOp", "pass stage ran over 20s")
    measured: list[tuple[str, str | None]] = []

    def measure(case: Case, program: str, before: str | None, timeout: float) -> IRSize:
        measured.append((program, before))
        return IRSize(300, HUGE_IR_NODES + 1)

    unrolled = _case(hang, script="for i in T.unroll(4096):\n    pass\n")
    verdict = Hang().judge(_context(unrolled, got=hang, measure=measure))
    assert verdict is not None and verdict.verdict == NOT_A_BUG and measured == [("reference", "tirx.RemoveNoOp")]
    assert verdict.reason.endswith(f"and the IR entering tirx.RemoveNoOp has over {HUGE_IR_NODES:,} IR nodes "
                                   "(statements and expressions) (from 2 lines of IR): the slow tirx.RemoveNoOp "
                                   "pass is the work the test case asks for")
    # not huge: the default pipeline decides
    context = _context(unrolled, _pipeline(hangs=False), got=hang,
                       measure=lambda case, program, before, timeout: IRSize(300, HUGE_IR_NODES))
    verdict = Hang().judge(context)
    assert verdict is not None and verdict.verdict == BUG


# --- precondition ---


def test_precondition_dismisses_a_stated_precondition_and_a_disabled_oracle() -> None:
    stated = dataclasses.replace(ERROR, message="Check failed: tirx.X must be called after tirx.Y")
    verdict = Precondition().judge(_context(_case(stated), got=stated))
    assert verdict is not None and verdict.reason.startswith("precondition: precondition: Check failed")
    assert verdict.observation.symptom is Symptom.INVALID
    settings = GateSettings(oracles=("crash", "hang"))
    verdict = Precondition().judge(_context(_case(), got=ERROR, settings=settings))
    assert verdict is not None and verdict.reason.startswith("precondition: exception oracle disabled")
    assert Precondition().judge(_context(_case(), got=ERROR)) is None


# --- reserved-attribute ---


def test_reserved_attribute_dismisses_ir_carrying_compute_scope() -> None:
    scoped = _case(script='with T.attr(0, "compute_scope", "main_compute_"):\n    pass\n')
    verdict = ReservedAttribute().judge(_context(scoped, got=ERROR))
    assert verdict is not None and verdict.reason.startswith("contract: the IR carries `compute_scope`")
    assert ReservedAttribute().judge(_context(_case(), got=ERROR)) is None


# --- undefined-behaviour ---


def test_undefined_behaviour_excuses_a_wrong_run_but_not_a_compiler_crash() -> None:
    def obs(symptom: Symptom, stage: Stage, message: str = "boom") -> Observation:
        return Observation(symptom, stage, "tirx.LowerIntrin", message)

    assert excused_by_ub(obs(Symptom.MISMATCH, Stage.COMPARE))
    assert excused_by_ub(obs(Symptom.PERF, Stage.RUN))
    assert excused_by_ub(obs(Symptom.CRASH, Stage.RUN))
    assert not excused_by_ub(obs(Symptom.EXCEPTION, Stage.PASS, "IntImm supports only int or uint or bool type"))
    assert not excused_by_ub(obs(Symptom.ILLFORMED, Stage.PASS))
    assert not excused_by_ub(obs(Symptom.CRASH, Stage.BUILD))
    # the simplifier's deliberate refusal of a constant division by zero is excused
    assert excused_by_ub(obs(Symptom.EXCEPTION, Stage.PASS, "Check failed: fb->value != 0 (0 vs. 0) : Divide by zero"))


MISMATCH = Observation(Symptom.MISMATCH, Stage.COMPARE, None, "outputs differ", comparison=OPT_VS_REFERENCE)


def test_undefined_behaviour_the_seed_lacks_makes_a_wrong_run_invalid() -> None:
    checked: list[tuple[Any, Any]] = []

    def ub(mutant: Any, seed: Any) -> str | None:
        checked.append((mutant, seed))
        return "ub: float division by a range holding 0"

    context = _context(_case(), got=MISMATCH, ancestors=[("original seed", "SEED")], ub_check=ub)
    verdict = UndefinedBehaviour().judge(context)
    assert verdict is not None and verdict.reason == (
        "invalid: the IR has undefined behaviour its original seed lacks (ub: float division by a range holding 0); "
        "no slice without it fails the same way: no smaller program fails the same way")
    assert checked == [(SCRIPT, "SEED"), (SCRIPT, "SEED")] and verdict.case.expected == MISMATCH


def test_undefined_behaviour_off_the_failures_path_is_sliced_away_and_the_slice_judged() -> None:
    def ub(mutant: Any, seed: Any) -> str | None:
        return "ub: a second write of one location" if "UB" in mutant.split(";") else None

    def drop_last(script: str, test: Callable[[str], bool], out_of_time: Callable[[], bool]) -> str | None:
        smaller = ";".join(script.split(";")[:-1])
        return smaller if smaller and test(smaller) else None

    def answer(case: Case) -> Observation:
        return MISMATCH if "X" in case.script.split(";") else Observation.ok()

    context = _context(_case().with_steps(_case().steps, script="X;UB"), answer, got=MISMATCH,
                       ancestors=[("original seed", "SEED")], ub_check=ub, shrink_step=drop_last)
    assert UndefinedBehaviour().judge(context) is None
    assert context.case.script == "X" and context.case.expected == MISMATCH
    assert any("UB-free slice (1 lines, 1 shrink steps)" in note for note in context.notes)


def test_undefined_behaviour_never_excuses_a_compiler_error_nor_judges_without_a_seed() -> None:
    def ub(mutant: Any, seed: Any) -> str | None:
        raise AssertionError("not analysed")

    context = _context(_case(MISMATCH), got=ERROR, ancestors=[("original seed", "SEED")], ub_check=ub)
    assert UndefinedBehaviour().judge(context) is None
    assert context.case.expected == ERROR  # from here on the case expects the failure it showed alone
    assert UndefinedBehaviour().judge(_context(_case(), got=MISMATCH, ub_check=ub)) is None
    same = _context(_case(), got=MISMATCH, ancestors=[("original seed", SCRIPT)], ub_check=ub)
    assert UndefinedBehaviour().judge(same) is None


def test_undefined_behaviour_check_is_skipped_with_a_note_when_the_seed_does_not_parse() -> None:
    context = _context(_case(), got=MISMATCH, ancestors=[("original seed", "SEED")], unparsable=frozenset({"SEED"}))
    assert UndefinedBehaviour().judge(context) is None
    assert context.notes == ["undefined-behaviour check skipped: SyntaxError: cannot parse 'SEED'"]


# --- contract ---


def _fuzzed_after(position: int) -> tuple[Step, ...]:
    """TVM's pipeline with one fuzzed step right after its pipeline pass at ``position``."""
    steps = pipeline_steps()
    return (*steps[:position + 1], Step("tirx.StorageRewrite", role=FUZZED, optional=True), *steps[position + 1:])


def test_contract_dismisses_a_fuzzed_failure_the_canonical_lowering_makes_disappear() -> None:
    steps = _fuzzed_after(17)  # after FlattenBuffer: the lowering up to it establishes five forms
    failed = Observation(Symptom.EXCEPTION, Stage.PASS, "tirx.StorageRewrite", "Check failed: boom", step_index=18)
    context = _context(_case(failed, steps=steps), lambda case: Observation.ok(), got=failed)
    verdict = Contract().judge(context)
    assert verdict is not None and verdict.reason.startswith("contract: tirx.StorageRewrite fails only on IR")
    (ran, _), = _tester(context).ran
    assert len(ran.steps) == len(steps) + 5 and ran.steps[23] == steps[18]  # inserted right before it
    # the failure survives the canonical lowering: a contract holds
    context = _context(_case(failed, steps=steps), lambda case: failed, got=failed)
    assert Contract().judge(context) is None


def test_contract_applies_to_fuzzed_steps_failing_in_a_pass_only() -> None:
    steps = _fuzzed_after(17)
    failed = Observation(Symptom.EXCEPTION, Stage.PASS, "tirx.FlattenBuffer", "Check failed: boom", step_index=17)
    assert Contract().judge(_context(_case(failed, steps=steps), got=failed)) is None  # a pipeline step
    building = dataclasses.replace(failed, stage=Stage.BUILD, step_index=18)
    assert Contract().judge(_context(_case(building, steps=steps), got=building)) is None
    unknown = dataclasses.replace(failed, step_index=None)
    assert Contract().judge(_context(_case(unknown, steps=steps), got=unknown)) is None
    early = dataclasses.replace(failed, step_index=1)  # right after the first pass: no form to establish
    assert Contract().judge(_context(_case(early, steps=_fuzzed_after(0)), got=early)) is None


def test_contract_files_a_failure_whose_witness_fails_the_same_way_through_tvms_pipeline() -> None:
    steps = _fuzzed_after(17)
    failed = Observation(Symptom.EXCEPTION, Stage.PASS, "tirx.StorageRewrite", "Check failed: boom", step_index=18)

    def answer(case: Case) -> Observation:  # the witness fails in the pipeline's own StorageRewrite
        return dataclasses.replace(failed, step_index=24) if case.script == "WITNESS" else Observation.ok()

    made: list[int] = []
    context = _context(_case(failed, steps=steps), answer, got=failed,
                       witness_ir=lambda case, index, timeout: made.append(index) or WitnessIR("WITNESS"))
    assert Contract().judge(context) is None and context.witnessed  # the witness is judged from here on
    verdict = GateRules(RULES[8:]).first_answer(context)  # ancestor, verifier, culprit
    assert made[0] == 18 and verdict.verdict == BUG and verdict.rule == "witness"  # then the culprit's IRs
    assert verdict.case.script == "WITNESS" and all(s.role != FUZZED for s in verdict.case.steps)
    assert verdict.culprit == ["tirx.StorageRewrite"] and verdict.root
    assert any("its witness" in note for note in verdict.notes)


def test_contract_keeps_the_dismissal_and_says_which_witness_check_failed() -> None:
    steps = _fuzzed_after(17)
    failed = Observation(Symptom.EXCEPTION, Stage.PASS, "tirx.StorageRewrite", "Check failed: boom", step_index=18)
    context = _context(_case(failed, steps=steps), lambda case: Observation.ok(), got=failed,
                       witness_ir=lambda case, index, timeout: WitnessIR("x", "it is not well-formed (undefined var)"))
    verdict = Contract().judge(context)
    assert verdict is not None and verdict.verdict == NOT_A_BUG and reason_code(verdict.reason) == "contract"
    assert verdict.reason.endswith("; no witness: the IR before tirx.StorageRewrite: it is not well-formed "
                                   "(undefined var)")
    off = _context(_case(failed, steps=steps), lambda case: Observation.ok(), got=failed,
                   settings=GateSettings(witnesses=False),
                   witness_ir=lambda case, index, timeout: pytest.fail("no witness is looked for"))
    verdict = Contract().judge(off)
    assert verdict is not None and "no witness" not in verdict.reason


def test_legacy_program_files_its_failure_through_a_witness() -> None:
    pipeline = tuple(pipeline_steps())
    narrow = 1 + next(i for i, s in enumerate(pipeline) if s.name == "tirx.NarrowDataType")
    old = Observation(Symptom.EXCEPTION, Stage.PASS, "tirx.NarrowDataType", "Check failed: shift", step_index=narrow)
    program = _case(old, script="OLD", steps=(Step("tirx.LowerIntrin", role=FUZZED, optional=True), *pipeline))

    def answer(case: Case) -> Observation:
        if case.script == "OLD":
            return old
        return dataclasses.replace(old, step_index=narrow - 1) if case.script == "WITNESS" else Observation.ok()

    made: list[int] = []
    context = _context(_case(old), answer, legacy=program,
                       witness_ir=lambda case, index, timeout: made.append(index) or WitnessIR("WITNESS"))
    assert LegacyProgram().judge(context) is None and made == [narrow]
    assert context.witnessed and context.case.script == "WITNESS" and context.case.steps == pipeline
    assert context.got == context.expected and context.expected.step_index == narrow - 1
    assert any("its witness" in note for note in context.notes)
    verdict = GateRules(RULES[2:]).first_answer(context)  # every rule after legacy-program judges the witness
    assert verdict.verdict == BUG and verdict.rule == "witness" and verdict.case.script == "WITNESS"


def test_a_witness_whose_pass_has_no_contract_leaves_the_dismissal() -> None:
    old = Observation(Symptom.EXCEPTION, Stage.PASS, "fz.B", "Check failed: boom", step_index=2)
    context = _context(_case(old), lambda case: old if case.script == "OLD" else Observation.ok(),
                       legacy=_case(old, script="OLD"), witness_ir=lambda case, index, timeout: WitnessIR("WITNESS"))
    verdict = LegacyProgram().judge(context)
    assert verdict is not None and verdict.verdict == NOT_A_BUG and not context.witnessed
    assert verdict.reason.endswith("no witness: fz.B has no contract for the target: no program TVM builds runs it")


# --- ancestor ---


def test_ancestor_narrows_the_case_to_the_least_mutated_ir_that_fails_the_same_way() -> None:
    seed = 'def main(seed_buf: T.Buffer((4,), "float32")):\n    pass\n'
    context = _context(_case(), lambda case: ERROR if case.script in (seed, "PARENT") else Observation.ok(),
                       got=ERROR, ancestors=[("original seed", ""), ("the seed", seed), ("parent", "PARENT")])
    assert Ancestor().judge(context) is None
    assert context.case.script == seed and context.case.steps == STEPS and _tester(context).tests == 1
    assert context.notes == ["the seed fails the same way: filed with its IR"] and "seed_buf" in context.names


def test_ancestor_keeps_the_case_when_no_ancestor_fails_the_same_way() -> None:
    context = _context(_case(), lambda case: Observation.ok(), got=ERROR, ancestors=[("parent", "PARENT")])
    assert Ancestor().judge(context) is None
    assert context.case.script == SCRIPT and not context.notes


# --- verifier ---


ILLFORMED = Observation(Symptom.ILLFORMED, Stage.PASS, "Codegen", "ill-formed: undefined variable", step_index=3)


def _pipeline_makes_it(after: Observation) -> Answer:
    """The reference pipeline verified from the start shows the ill-formed IR; without the verifier
    the build shows ``after``."""
    def answer(case: Case) -> Observation:
        if case.checks.pipeline_illformed and all(s.role == PIPELINE for s in case.steps):
            return ILLFORMED
        assert not case.checks.illformed
        return after
    return answer


def test_verifier_dismisses_ill_formed_ir_the_default_pipeline_makes_and_then_builds_correctly() -> None:
    context = _context(_case(ILLFORMED), _pipeline_makes_it(Observation.ok()), got=ILLFORMED)
    verdict = Verifier().judge(context)
    assert verdict is not None and reason_code(verdict.reason) == "verifier-default-pipeline"
    counted = _context(_case(ILLFORMED), _pipeline_makes_it(Observation.ok()), got=ILLFORMED,
                       settings=GateSettings(verifier_issues=True))
    assert Verifier().judge(counted) is None and counted.notes[0].startswith("verifier-default-pipeline:")


def test_verifier_notes_a_pipeline_ir_whose_build_fails_and_passes_other_failures() -> None:
    context = _context(_case(ILLFORMED), _pipeline_makes_it(ERROR), got=ILLFORMED)
    assert Verifier().judge(context) is None
    assert context.notes == [f"the default pipeline makes this IR, and the build then fails: {ERROR.headline()}"]
    mine = _context(_case(ILLFORMED), lambda case: Observation.ok(), got=ILLFORMED)  # the pipeline alone is fine
    assert Verifier().judge(mine) is None and _tester(mine).tests == 1
    assert Verifier().judge(_context(_case(), got=ERROR)) is None


# --- culprit ---


def _fuzzed(case: Case) -> set[str]:
    return {s.name for s in case.steps if s.role == FUZZED}


def test_culprit_names_the_passes_a_failure_needs_and_files_a_bug() -> None:
    context = _context(_case(), lambda case: ERROR if "fz.B" in _fuzzed(case) else Observation.ok(), got=ERROR)
    verdict = Culprit().judge(context)
    assert (verdict.verdict, verdict.culprit, verdict.observation) == (BUG, ["fz.B"], ERROR)
    assert verdict.root and context.culprit == ["fz.B"] and verdict.tests == _tester(context).tests > 0
    budget = _context(_case(), lambda case: ERROR if "fz.B" in _fuzzed(case) else Observation.ok(), got=ERROR,
                      settings=GateSettings(max_tests=1))
    cut = Culprit().judge(budget)
    assert cut.verdict == BUG and budget.notes[0] == "culprit bisection stopped after 1 tests (budget)"


def test_culprit_dismisses_a_slowdown_a_non_optimizing_fuzzed_pass_asks_for() -> None:
    vectorize = Step("tirx.VectorizeLoop", {"enable_vectorize": True}, {}, PIPELINE, True, {"enable_vectorize": False})
    scalar = Step("tirx.VectorizeLoop", {"enable_vectorize": False}, {}, FUZZED, True)
    fast = Step("tirx.VectorizeLoop", {"enable_vectorize": True}, {}, FUZZED, True)
    slow = Observation(Symptom.PERF, Stage.RUN, None, "2.1x slower")

    def answer(case: Case) -> Observation:
        return slow if _fuzzed(case) else Observation.ok()

    verdict = Culprit().judge(_context(_case(slow, steps=(scalar, vectorize)), answer, got=slow))
    assert verdict.verdict == NOT_A_BUG and verdict.reason.startswith(
        "invalid: the fuzzed tirx.VectorizeLoop[enable_vectorize=False] is the pipeline's non-optimizing form")
    verdict = Culprit().judge(_context(_case(slow, steps=(fast, vectorize)), answer, got=slow))
    assert (verdict.verdict, verdict.culprit) == (BUG, ["tirx.VectorizeLoop"])


def test_culprit_files_a_wrong_result_that_comes_with_ill_formed_ir_as_that_ill_formedness() -> None:
    broken = Observation(Symptom.ILLFORMED, Stage.PASS, "fz.B", "ill-formed after fz.B", step_index=2)

    def answer(case: Case) -> Observation:
        if case.checks.pipeline_illformed:  # verified from the first step
            return broken
        return MISMATCH if "fz.B" in _fuzzed(case) else Observation.ok()

    context = _context(_case(MISMATCH), answer, got=MISMATCH)
    verdict = Culprit().judge(context)
    assert (verdict.verdict, verdict.culprit, verdict.observation) == (BUG, ["fz.B"], broken)
    assert context.notes == ["the wrong result comes with ill-formed IR after fz.B"]
    plain = _context(_case(MISMATCH), lambda case: MISMATCH if "fz.B" in _fuzzed(case) else Observation.ok(),
                     got=MISMATCH)
    verdict = Culprit().judge(plain)
    assert (verdict.verdict, verdict.culprit, verdict.observation) == (BUG, ["fz.B"], MISMATCH)


# --- the code at fault of a bug ---

ARITH = dataclasses.replace(ERROR, frames=("tvm::tirx::Foo(...)", "tvm::arith::IntSetAnalyzer::operator()(...)"))


def _fails_with_both(case: Case) -> Observation:
    return ARITH if {"fz.A", "fz.B"} <= _fuzzed(case) else Observation.ok()


def test_a_failure_raised_in_the_analyzer_on_valid_ir_blames_the_analyzer_and_one_root() -> None:
    valid = _context(_case(ARITH), _fails_with_both, got=ARITH, witness_ir=lambda case, index, timeout: WitnessIR("x"))
    verdict = Culprit().judge(valid)
    assert verdict.verdict == BUG and verdict.culprit == ["arith.IntSetAnalyzer"]
    assert verdict.at_fault is not None and verdict.at_fault.shared and verdict.at_fault.reached == ("fz.A", "fz.B")
    other = dataclasses.replace(ARITH, pass_name="fz.A", step_index=1)
    again = _context(_case(other), lambda case: other if {"fz.A", "fz.B"} <= _fuzzed(case) else Observation.ok(),
                     got=other, witness_ir=lambda case, index, timeout: WitnessIR("x"))
    assert Culprit().judge(again).root == verdict.root  # reached through another pass: the same root


def test_the_analyzer_tripping_on_ill_typed_ir_a_culprit_made_blames_that_culprit() -> None:
    def ir(case: Case, index: int, timeout: float) -> WitnessIR:  # fz.A (step 1) makes an int64 + int32 Add
        return WitnessIR("x", "Check failed: mismatched types. int64 vs. int32" if index >= 2 else None)

    verdict = Culprit().judge(_context(_case(ARITH), _fails_with_both, got=ARITH, witness_ir=ir))
    assert verdict.verdict == BUG and verdict.culprit == ["fz.A"]
    assert verdict.at_fault is not None and not verdict.at_fault.shared and verdict.at_fault.reached == ("fz.B",)
