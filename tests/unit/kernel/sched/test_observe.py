"""The schedule-level kernel judges a case in its fixed order: a clean schedule is ok, a refusal or a
malformed trace is invalid (never a bug), a changed interface or a documented change of result is
invalid, a failed check is an exception, and the memo keeps the unscheduled build (drives TVM)."""

from __future__ import annotations

from pathlib import Path

import pytest

from seedzer.kernel.common import Stage, Symptom
from seedzer.kernel.sched.case import LLVM_POSTPROCS, SchedCase, SchedChecks
from seedzer.kernel.sched.observe import SchedBuilder, SchedMemo, observe
from seedzer.seed import input_seed

SEEDS = Path(__file__).resolve().parents[3] / "fixtures" / "seeds"
FIXTURES = Path(__file__).resolve().parents[3] / "fixtures" / "sched"
MATMUL = (SEEDS / "matmul.py").read_text()


def _case(script: str, insts: list, **kwargs: object) -> SchedCase:
    return SchedCase(script, [insts, []], input_seed(script), **kwargs)  # type: ignore[arg-type]


GET = [["GetSBlock", [], ["matmul", "main"], ["b0"]], ["GetLoops", ["b0"], [], ["l1", "l2", "l3"]]]


def test_a_clean_schedule_with_postprocessors_is_ok_and_its_reference_is_remembered() -> None:
    memo = SchedMemo()
    case = _case(MATMUL, [*GET, ["Split", ["l3", "None", 5], [True, False], ["l4", "l5"]],
                          ["RFactor", ["l5"], [0], ["b6"]], ["Parallel", ["l1"], [], []]], postprocs=LLVM_POSTPROCS)
    assert observe(case, SchedBuilder(memo=memo)).symptom is Symptom.OK
    assert len(memo.references) == 1
    assert observe(case, SchedBuilder(memo=memo)).symptom is Symptom.OK  # the same verdict from the memo
    assert len(memo.references) == 1


def test_a_refused_primitive_is_invalid_and_never_built() -> None:
    steps: list[str] = []
    builder = SchedBuilder(lambda stage, name, program: steps.append(f"{stage.value}:{name}"))
    observed = observe(_case(MATMUL, [*GET, ["Vectorize", ["l3"], [], []]]), builder)
    assert (observed.symptom, observed.stage, observed.pass_name) == (Symptom.INVALID, Stage.SCHEDULE, "Vectorize")
    assert not any(s.startswith("build") for s in steps)


def test_a_malformed_trace_is_invalid_with_one_line() -> None:
    observed = observe(_case(MATMUL, [["GetLoops", ["b7"], [], ["l1"]]]))
    assert observed.symptom is Symptom.INVALID and "malformed trace" in observed.message
    assert "'b7' is not defined" in observed.headline()


def test_a_layout_transformation_of_a_parameter_changes_the_interface_so_the_case_is_invalid() -> None:
    from seedzer.mutate.sched.indexmap import index_map_json, permutation

    transpose = index_map_json(["a0", "a1"], permutation([1, 0]))
    observed = observe(_case(MATMUL, [["GetSBlock", [], ["matmul", "main"], ["b0"]],
                                      ["TransformLayout", ["b0", transpose], [0, 0, None, False], []]]))
    assert observed.symptom is Symptom.INVALID and "changed the function's parameters" in observed.message


def test_fuse_reduction_epilogue_of_a_relu_changes_results_by_design_so_it_is_invalid() -> None:
    """Its docstring documents that a non-linear epilogue is applied at every step of the reduction."""
    script = (FIXTURES / "conv2d_relu.py").read_text()
    trace = [["GetSBlock", [], ["conv", "main"], ["b0"]], ["GetSBlock", [], ["relu", "main"], ["b1"]],
             ["FuseReductionEpilogue", ["b0", "b1"], [], []]]
    observed = observe(_case(script, trace))
    assert (observed.symptom, observed.stage) == (Symptom.INVALID, Stage.COMPARE)
    assert "by design" in observed.message and "elements differ" in observed.message


def test_fuse_reduction_epilogue_of_a_bias_keeps_the_result() -> None:
    script = (SEEDS / "fused_matmul_add_relu.py").read_text()
    trace = [["GetSBlock", [], ["matmul", "main"], ["b0"]], ["GetSBlock", [], ["T_add", "main"], ["b1"]],
             ["FuseReductionEpilogue", ["b0", "b1"], [], []]]
    assert observe(_case(script, trace)).symptom is Symptom.OK


@pytest.mark.parametrize("debug_mask", ["all", 0])
def test_a_failed_check_inside_a_primitive_is_an_exception_at_the_schedule_stage(debug_mask: object) -> None:
    case = _case(MATMUL, [["GetSBlock", [], ["matmul", "main"], ["b0"]], ["CacheIndex", ["b0"], ["global", 0], ["b1"]]],
                 checks=SchedChecks(debug_mask=debug_mask))  # type: ignore[arg-type]
    observed = observe(case)
    assert (observed.symptom, observed.stage, observed.pass_name, observed.step_index) == \
        (Symptom.EXCEPTION, Stage.SCHEDULE, "CacheIndex", 1)
    assert observed.frames  # TVM's frames say where it was raised


def test_the_memo_parses_each_script_once_and_forgets_beyond_its_size() -> None:
    memo = SchedMemo(size=1)
    builder = SchedBuilder(memo=memo)
    first = builder.parse(MATMUL)
    assert builder.parse(MATMUL) is first
    builder.parse((SEEDS / "relu.py").read_text())
    assert list(memo.parsed) == [(SEEDS / "relu.py").read_text()]
