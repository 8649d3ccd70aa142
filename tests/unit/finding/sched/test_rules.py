"""The schedule gate's rules judged on cases run by a cheap stand-in for the forked tester: a refusal is
never a bug (an index argument out of range included), a failed check is a bug keyed on its primitive and
the check, whatever IR TVM printed after it, and a failure after an unsafe primitive is not TVM's fault."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from seedzer.finding.gate import GateRules
from seedzer.finding.meta import BUG, NOT_A_BUG
from seedzer.finding.sched.gate import RULES
from seedzer.finding.sched.rules import Lowering, SchedContext, SchedGateJob, check_sentence
from seedzer.kernel.common import Observation, Stage, Symptom
from seedzer.kernel.sched.case import SchedCase
from seedzer.oracles.signature import root_key
from seedzer.passes.tir.contracts import pipeline_steps

SCRIPT = (Path(__file__).resolve().parents[3] / "fixtures" / "seeds" / "matmul.py").read_text()
GET = [["GetSBlock", [], ["matmul", "main"], ["b0"]], ["GetLoops", ["b0"], [], ["l1", "l2", "l3"]]]
SEQ_ONE = ("InternalError: Check failed: seq.size() != 1 (1 vs. 1) : A SeqStmt of length 1 is prohibited.  Use "
           "the node {ir}directly, or for dynamic usage, normalize using SeqStmt::Flatten()")


def judge(trace: list, observed: Observation, script: str = SCRIPT) -> tuple[str, str, str | None]:
    """The gate's verdict on a case whose every run shows ``observed`` (what a deterministic TVM does)."""
    case = SchedCase(script, [trace, []], 1, expected=observed)
    verdict = GateRules(RULES).first_answer(SchedContext.of(SchedGateJob("sig", case), lambda c, t: observed))
    return verdict.verdict, verdict.reason, verdict.root


def failure(kind: str, index: int, message: str, symptom: Symptom = Symptom.EXCEPTION) -> Observation:
    return Observation(symptom, Stage.SCHEDULE, kind, message, step_index=index)


def test_a_failed_checks_explanation_is_cut_before_the_ir_it_prints() -> None:
    assert check_sentence(SEQ_ONE.format(ir="for ax0 in range(17): T_divide[ax0] = lv[ax0]")) == \
        "InternalError: Check failed: seq.size() != 1 (1 vs. 1) : A SeqStmt of length 1 is prohibited."
    plain = "Schedule verification failed"
    assert check_sentence("InternalError: " + plain) == plain
    assert check_sentence("InternalError: Schedule verification failed. The IR is:\n# from tvm.script ...") == plain


def test_an_error_without_a_check_keys_on_its_first_sentence() -> None:
    short = ("InternalError: ValueError: Invalid use of undefined variable ax0 at "
             "<root>.body.block.body.seq[0].body.block.reads[0].region[0].min.value.")
    long = ("InternalError: ValueError: Invalid use of undefined variable ax0 at "
            "<root>.body.block.body.seq[1].body.body.block.writes[0].region[0].min.b.value..  While this variable "
            "was previously defined at <root>.body.block.body.seq[0].body.loop_var, this definition is no longer "
            "in-scope.")
    assert check_sentence(long).endswith("min.b.value") and "While" not in check_sentence(long)
    assert "Invalid use of undefined variable ax0 at <root>." in check_sentence(short)
    observed = [failure("ReIndex", 4, message) for message in (short, long)]
    keys = {root_key("sched", dataclasses.replace(o, message=check_sentence(o.message)), ["s"]).digest()
            for o in observed}
    assert len(keys) == 1


def test_one_check_failed_on_two_ir_shapes_is_one_root() -> None:
    trace = [*GET, ["Blockize", ["l3"], [True], ["b4"]]]
    shapes = ("for ax0 in range(T.int64(17)):\n    T.evaluate(0)", "for i0, i1, i2, i3 in T.grid(1, 2, 3, 4):")
    verdicts = [judge(trace, failure("Blockize", 2, SEQ_ONE.format(ir=ir))) for ir in shapes]
    assert [v[0] for v in verdicts] == [BUG, BUG] and verdicts[0][2] == verdicts[1][2]
    # a function with a buffer named A: "A SeqStmt" is still TVM's wording, the same root
    with_a = SCRIPT.replace("x0", "A")
    assert judge(trace, failure("Blockize", 2, SEQ_ONE.format(ir=shapes[0])), with_a)[2] == verdicts[0][2]
    other = judge(trace, failure("Blockize", 2, "InternalError: Check failed: (outer->body.get() == inner) is false"))
    assert other[2] != verdicts[0][2]


def test_a_refusal_is_not_a_bug_even_as_an_internal_error() -> None:
    trace = [*GET, ["ComputeAt", ["b0", "l3"], [True, 7], []]]
    verdict, reason, _ = judge(trace, failure("ComputeAt", 2, "InternalError: Valid index:(-1, -2, [0, 0]), "
                                                              "current index=7"))
    assert verdict == NOT_A_BUG and "refused its input" in reason


def test_a_failure_after_an_unsafe_primitive_is_not_tvms_fault() -> None:
    trace = [*GET, ["UnsafeSetDType", ["b0", 0, '"float16"'], [], []], ["Vectorize", ["l3"], [], []]]
    verdict, reason, _ = judge(trace, failure("Vectorize", 3, "InternalError: Check failed: x"))
    assert verdict == NOT_A_BUG and "unsafe primitive" in reason


def test_a_build_refusing_what_the_schedule_asked_for_is_an_invalid_input() -> None:
    trace = [*GET, ["Parallel", ["l1"], [], []], ["Parallel", ["l2"], [], []]]
    nested = Observation(Symptom.EXCEPTION, Stage.BUILD, "tvm.compile",
                         "InternalError: Check failed: (!parallel_env_.in_parallel_loop) is false: Nested parallel "
                         "loop is not supported by LLVM")
    verdict, reason, _ = judge(trace, nested)
    assert verdict == NOT_A_BUG and "Nested parallel loop" in reason
    both = Observation(Symptom.EXCEPTION, Stage.SCHEDULE, "RewriteParallelVectorizeUnroll",
                       "InternalError: Check failed: (parsed.unroll_explicit == -1 || parsed.unroll_implicit == -1) "
                       "is false: ")
    verdict, reason, _ = judge(GET, both)
    assert verdict == NOT_A_BUG and "unroll_implicit" in reason


def test_a_wrong_result_several_pipeline_passes_need_is_the_last_one_s() -> None:
    """Compacting a cache buffer into a vectorized loop, then VectorizeLoop not widening it per lane: the wrong
    result needs both passes' optimizing forms; the last, VectorizeLoop, is the code at fault."""
    needed = [s for s in pipeline_steps() if s.name in ("s_tir.CompactBufferAllocation", "tirx.VectorizeLoop")]
    assert len(needed) == 2 and all(s.optional for s in needed)
    wrong = Observation(Symptom.MISMATCH, Stage.COMPARE, "-", "output 1: 21/22 elements differ")

    def observe(case: SchedCase, timeout: float) -> Observation:
        return wrong if all(any(s == n for s in case.steps) for n in needed) else Observation.ok()

    case = SchedCase(SCRIPT, [[*GET, ["Vectorize", ["l3"], [], []]], []], 1, expected=wrong)
    context = SchedContext.of(SchedGateJob("sig", case), observe)
    context.got = wrong
    assert Lowering().judge(context) is None and context.lowering == "tirx.VectorizeLoop"
    assert "s_tir.CompactBufferAllocation + tirx.VectorizeLoop" in context.notes[-1]
