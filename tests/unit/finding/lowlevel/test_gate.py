"""Gate rules that need no TVM: which failures undefined behaviour excuses, which failing steps the
contract check applies to, reason codes. (The gate on real findings: tests/integration/test_audited_corpus.py.)"""

from __future__ import annotations

from seedzer.finding.lowlevel.gate import Gate, excused_by_ub
from seedzer.finding.verdict import reason_code
from seedzer.kernel.common import FUZZED, PIPELINE, Case, Observation, Stage, Step, Symptom


def _obs(symptom: Symptom, stage: Stage, message: str = "boom", step: int | None = None) -> Observation:
    return Observation(symptom, stage, "tirx.LowerIntrin", message, step_index=step)


def test_undefined_behaviour_excuses_a_wrong_run_but_not_a_compiler_crash() -> None:
    assert excused_by_ub(_obs(Symptom.MISMATCH, Stage.COMPARE))
    assert excused_by_ub(_obs(Symptom.PERF, Stage.RUN))
    assert excused_by_ub(_obs(Symptom.CRASH, Stage.RUN))
    assert not excused_by_ub(_obs(Symptom.EXCEPTION, Stage.PASS, "IntImm supports only int or uint or bool type"))
    assert not excused_by_ub(_obs(Symptom.ILLFORMED, Stage.PASS))
    assert not excused_by_ub(_obs(Symptom.CRASH, Stage.BUILD))
    # the simplifier's deliberate refusal of a constant division by zero is excused
    assert excused_by_ub(_obs(Symptom.EXCEPTION, Stage.PASS, "Check failed: fb->value != 0 (0 vs. 0) : Divide by zero"))


def test_the_contract_check_applies_to_fuzzed_steps_only() -> None:
    steps = (Step("tirx.StorageRewrite", {}, {}, FUZZED, True), Step("tirx.LowerIntrin", {}, {}, PIPELINE, False))
    case = Case("", steps, 0)
    assert Gate._fuzzed_step_failed(case, _obs(Symptom.EXCEPTION, Stage.PASS, step=0))
    assert not Gate._fuzzed_step_failed(case, _obs(Symptom.EXCEPTION, Stage.PASS, step=1))
    assert not Gate._fuzzed_step_failed(case, _obs(Symptom.EXCEPTION, Stage.BUILD, step=0))
    assert not Gate._fuzzed_step_failed(case, _obs(Symptom.EXCEPTION, Stage.PASS, step=None))


def test_reason_codes() -> None:
    assert reason_code("contract: X fails only on IR ...") == "contract"
    assert reason_code("verifier-default-pipeline: TVM's default pipeline ...") == "verifier-default-pipeline"
    assert reason_code("") == "other"


def test_a_fuzzed_pass_in_its_non_optimizing_form_is_found() -> None:
    vectorize = Step("tirx.VectorizeLoop", {"enable_vectorize": True}, {}, PIPELINE, True, {"enable_vectorize": False})
    off = Step("tirx.VectorizeLoop", {"enable_vectorize": False}, {}, FUZZED, True)
    on = Step("tirx.VectorizeLoop", {"enable_vectorize": True}, {}, FUZZED, True)
    assert Gate._deoptimizing(Case("", (off, vectorize), 0), ["tirx.VectorizeLoop"]) is not None
    assert Gate._deoptimizing(Case("", (on, vectorize), 0), ["tirx.VectorizeLoop"]) is None
    assert Gate._deoptimizing(Case("", (off, vectorize), 0), ["tirx.UnrollLoop"]) is None
