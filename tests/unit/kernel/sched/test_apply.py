"""A trace applied one instruction at a time through the Schedule API: the same IR as TVM's own
``Trace.apply_json_to_schedule``, a refusal is an invalid case naming the primitive, a trace that
does not fit the IR is invalid, a failed check inside a primitive is an exception (drives TVM)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import tvm
from tvm.s_tir import Schedule

from seedzer.kernel.common import Stage, Symptom
from seedzer.kernel.sched.apply import APPLY, apply_postprocs, apply_trace, refusal, refused_message
from seedzer.kernel.sched.case import LLVM_POSTPROCS
from seedzer.kernel.sched.trace import KINDS, VERIFY_SREF_TREE, debug_mask_for, parse_trace
from seedzer.kernel.tir.lowering import StepFailure, parse_func

SEEDS = Path(__file__).resolve().parents[3] / "fixtures" / "seeds"
# MetaSchedule's MultiLevelTiling and ParallelizeVectorizeUnroll on the fixture matmul (4x3x5), as
# TuneContext.generate_design_space writes it (decisions included).
MATMUL_SPACE = [[
    ["GetSBlock", [], ["matmul", "main"], ["b0"]], ["GetSBlock", [], ["root", "main"], ["b1"]],
    ["Annotate", ["b0", '"SSRSRS"'], ["meta_schedule.tiling_structure"], []],
    ["GetLoops", ["b0"], [], ["l2", "l3", "l4"]],
    ["SamplePerfectTile", ["l2"], [4, 64], ["v5", "v6", "v7", "v8"]],
    ["Split", ["l2", "v5", "v6", "v7", "v8"], [True, False], ["l9", "l10", "l11", "l12"]],
    ["SamplePerfectTile", ["l3"], [4, 64], ["v13", "v14", "v15", "v16"]],
    ["Split", ["l3", "v13", "v14", "v15", "v16"], [True, False], ["l17", "l18", "l19", "l20"]],
    ["SamplePerfectTile", ["l4"], [2, 64], ["v21", "v22"]],
    ["Split", ["l4", "v21", "v22"], [True, False], ["l23", "l24"]],
    ["Reorder", ["l9", "l17", "l10", "l18", "l23", "l11", "l19", "l24", "l12", "l20"], [], []],
    ["CacheWrite", ["b0", []], [0, "global"], ["b25"]],
    ["ReverseComputeAt", ["b25", "l18"], [True, -1], []],
    ["Annotate", ["b1", 32], ["meta_schedule.parallel"], []],
    ["Annotate", ["b1", 64], ["meta_schedule.vectorize"], []],
    ["SampleCategorical", [], [[0, 16, 64, 512], [0.25, 0.25, 0.25, 0.25]], ["v26"]],
    ["Annotate", ["b1", "v26"], ["meta_schedule.unroll_explicit"], []]],
    [[4, [2, 1, 2, 1]], [6, [1, 3, 1, 1]], [8, [5, 1]], [15, 1]]]


@pytest.fixture(scope="module")
def matmul() -> object:
    return parse_func((SEEDS / "matmul.py").read_text())


def test_every_instruction_kind_has_its_schedule_call() -> None:
    assert set(APPLY) == KINDS


def test_a_trace_applied_step_by_step_gives_tvms_own_ir_and_round_trips(matmul: object) -> None:
    import tvm
    import tvm_ffi
    from tvm.s_tir import Schedule, Trace

    from seedzer.mutate.sched.tvm_trace import plain

    mine = apply_trace(matmul, parse_trace(MATMUL_SPACE)).schedule
    theirs = Schedule(tvm.IRModule({"main": matmul}), seed=1)
    Trace.apply_json_to_schedule(json.loads(json.dumps(MATMUL_SPACE)), theirs)
    assert tvm_ffi.structural_equal(mine.mod, theirs.mod)
    again = apply_trace(matmul, parse_trace(plain(mine.trace.as_json()))).schedule  # the trace it recorded
    assert tvm_ffi.structural_equal(mine.mod, again.mod)
    assert plain(mine.trace.as_json()) == MATMUL_SPACE


def test_the_llvm_postprocessors_rewrite_the_annotations_into_loops(matmul: object) -> None:
    applied = apply_trace(matmul, parse_trace(MATMUL_SPACE))
    apply_postprocs(applied, LLVM_POSTPROCS, len(MATMUL_SPACE[0]))
    kinds = [str(i.kind.name) for i in applied.schedule.trace.insts]
    assert "EnterPostproc" in kinds and "Parallel" in kinds


def test_a_primitive_refusing_its_arguments_is_an_invalid_case_naming_it(matmul: object) -> None:
    trace = [[["GetSBlock", [], ["matmul", "main"], ["b0"]], ["GetLoops", ["b0"], [], ["l1", "l2", "l3"]],
              ["Vectorize", ["l3"], [], []]], []]
    with pytest.raises(StepFailure) as caught:
        apply_trace(matmul, parse_trace(trace))
    observed = caught.value.observation
    assert (observed.symptom, observed.stage, observed.pass_name, observed.step_index) == \
        (Symptom.INVALID, Stage.SCHEDULE, "Vectorize", 2)
    assert observed.message.startswith("refused: ScheduleError") and "vectorize" in observed.message


@pytest.mark.parametrize(("trace", "why"), [
    ([[["GetSBlock", [], ["matmul", "main"], ["b0"]], ["GetLoops", ["b0"], [], ["l1", "l2"]]], []],
     "GetLoops gave 3 outputs, the trace names 2"),
    ([[["GetSBlock", [], ["no_such_block", "main"], ["b0"]]], []], "refused"),
    ([[["GetSBlock", [], ["matmul", "main"], ["b0"]], ["GetLoops", ["b0"], [], ["l1", "l2", "l3"]],
       ["SampleCategorical", [], [[1, 2], [0.5, 0.5]], ["v4"]]], [[2, 7]]], "Wrong decision value"),
])
def test_a_trace_that_does_not_fit_the_ir_is_invalid(matmul: object, trace: list, why: str) -> None:
    with pytest.raises(StepFailure) as caught:
        apply_trace(matmul, parse_trace(trace))
    assert caught.value.observation.symptom is Symptom.INVALID and why in caught.value.observation.message


def test_a_failed_check_inside_a_primitive_is_an_exception_at_the_primitive(matmul: object) -> None:
    """cache_index on a block that computes no index: TVM 0.27 builds an empty SeqStmt (a real bug)."""
    trace = [[["GetSBlock", [], ["matmul", "main"], ["b0"]], ["CacheIndex", ["b0"], ["global", 0], ["b1"]]], []]
    with pytest.raises(StepFailure) as caught:
        apply_trace(matmul, parse_trace(trace))
    observed = caught.value.observation
    assert (observed.symptom, observed.pass_name, observed.step_index) == (Symptom.EXCEPTION, "CacheIndex", 1)
    assert "InternalError" in observed.message and "SeqStmt" in observed.message


def test_a_failure_after_an_unsafe_primitive_is_invalid(matmul: object) -> None:
    trace = [[["GetSBlock", [], ["matmul", "main"], ["b0"]],
              ["UnsafeHideBufferAccess", ["b0", '"read"', [0]], [], []],
              ["CacheIndex", ["b0"], ["global", 0], ["b1"]]], []]
    with pytest.raises(StepFailure) as caught:
        apply_trace(matmul, parse_trace(trace))
    assert caught.value.observation.symptom is Symptom.INVALID
    assert "after an unsafe primitive" in caught.value.observation.message


def test_an_insertion_index_out_of_its_documented_range_is_a_refusal() -> None:
    """compute_at's ``index`` outside (-1, -2, [first, last]) is thrown as an InternalError, yet it is the
    primitive checking its argument (compute_at.cc): invalid, never a candidate."""
    fused = parse_func((SEEDS / "fused_matmul_add_relu.py").read_text())
    trace = [[["GetSBlock", [], ["matmul", "main"], ["b0"]], ["GetSBlock", [], ["T_add", "main"], ["b1"]],
              ["GetLoops", ["b1"], [], ["l2", "l3"]], ["ComputeAt", ["b0", "l3"], [True, 7], []]], []]
    with pytest.raises(StepFailure) as caught:
        apply_trace(fused, parse_trace(trace))
    observed = caught.value.observation
    assert (observed.symptom, observed.pass_name) == (Symptom.INVALID, "ComputeAt")
    assert observed.message.startswith("refused: InternalError: Valid index:")
    assert refused_message("InternalError: Valid index:(-1, -2, [0, 0]), current index=2")
    assert not refused_message("InternalError: Check failed: seq.size() != 0")
    assert refused_message("TypeError: block_sref must be a StmtSRef")  # an argument of the wrong type
    assert not refused_message("TypeError: Check failed: (a.dtype() == b.dtype()) is false: mismatched types. "
                               "int64 vs. int32")  # rolling_buffer built it itself


def test_cache_inplace_is_checked_as_tvms_own_test_checks_it(matmul: object) -> None:
    """cache_inplace leaves the scope's stage-pipeline flag stale by design (TVM's test runs it with
    VERIFY_SREF_TREE only): under ``debug_mask="all"`` a call its contract allows is applied, not a
    failed check (the matmul's update block, blockized whole, reads and writes its output)."""
    trace = [[["GetSBlock", [], ["matmul", "main"], ["b0"]], ["GetLoops", ["b0"], [], ["l1", "l2", "l3"]],
              ["DecomposeReduction", ["b0", "l1"], [], ["b4"]], ["Blockize", ["l1"], [False], ["b5"]],
              ["CacheInplace", ["b5"], [0, "local"], ["b6", "b7"]]], []]
    applied = apply_trace(matmul, parse_trace(trace))
    assert "matmul_update_o" in applied.schedule.mod.script()
    assert debug_mask_for(parse_trace(trace), "all") == VERIFY_SREF_TREE
    assert debug_mask_for(parse_trace(MATMUL_SPACE), "all") == "all"
    assert debug_mask_for(parse_trace(trace), 0) == 0


def test_rolling_buffer_over_int64_loops_fails_inside_the_primitive() -> None:
    """The primitive accepts a padding producer computed at the conv's third loop, then compares an int64 loop
    variable with an int32 literal it made: TVM's failure, not a refusal of the arguments."""
    func = parse_func((Path(__file__).resolve().parents[3] / "fixtures" / "sched" / "conv2d_relu.py").read_text())
    schedule = Schedule(tvm.IRModule({"main": func}))
    pad, conv = schedule.get_sblock("pad"), schedule.get_sblock("conv")
    schedule.compute_at(pad, schedule.get_loops(conv)[2])
    with pytest.raises(Exception) as caught:
        schedule.rolling_buffer(pad, 0)
    assert "mismatched types" in str(caught.value) and not refusal(caught.value)


def test_a_copy_is_not_blamed_for_a_guarded_read_compute_inline_left() -> None:
    """compute_inline of a padding producer leaves ``T.if_then_else(1 <= i < 2, lv2[.., i - 1], 0)``, which
    OOBChecker cannot prove in range; pad_einsum after it changes nothing there and must not be filed."""
    func = parse_func((Path(__file__).resolve().parents[3] / "fixtures" / "sched" / "conv1d_pad_add.py").read_text())
    trace = [[["GetSBlock", [], ["pad_temp", "main"], ["b0"]], ["ComputeInline", ["b0"], [], []],
              ["GetSBlock", [], ["T_add", "main"], ["b1"]], ["PadEinsum", ["b1"], [[3, 2, 1]], []]], []]
    applied = apply_trace(func, parse_trace(trace))
    assert applied.unsafe_at is None
