"""Locating the layout rule a ConvertLayout failure is in: what is decided without TVM (the bisection itself
runs on real TVM in tests/integration/test_finding_graph.py)."""

from __future__ import annotations

from seedzer.finding.graph.layout_rule import (
    CONVERT_LAYOUT,
    LayoutCulprit,
    failing_step_index,
    locate_forked,
    same_error_judged_invalid,
)
from seedzer.kernel.common import Observation, Stage, Symptom
from seedzer.kernel.graph.case import GraphCase, GraphPass

LAYOUT = GraphPass(CONVERT_LAYOUT, {"desired_layouts": {"relax.nn.conv2d": ["NHWC", "OHWI"]}})
FOLD = GraphPass("relax.FoldConstant")
CASE = GraphCase((("x", "float32", (2, 3)),), (FOLD, LAYOUT, FOLD, LAYOUT))


def _error(index: int | None, pass_name: str = CONVERT_LAYOUT) -> Observation:
    return Observation(Symptom.EXCEPTION, Stage.PASS, pass_name, "Invalid SLayout", step_index=index)


def test_the_code_at_fault_is_the_operator_s_registered_layout_rule() -> None:
    assert LayoutCulprit("relax.nn.dropout", "").code == "relax.nn.dropout.FRelaxInferLayout"


def test_the_failing_step_is_the_one_the_observation_names_else_the_first_convert_layout() -> None:
    assert failing_step_index(CASE, _error(3)) == 3
    assert failing_step_index(CASE, _error(2)) == 1  # index 2 is FoldConstant: not the pass that failed
    assert failing_step_index(CASE, _error(None)) == 1
    assert failing_step_index(GraphCase(CASE.specs, (FOLD,)), _error(None)) is None


def test_only_failures_of_convert_layout_itself_are_located() -> None:
    mismatch = Observation(Symptom.MISMATCH, Stage.COMPARE, "compare", "output 0 differs")
    elsewhere = _error(0, "relax.FuseOps")
    assert locate_forked(CASE, mismatch, 1.0) is None  # returns at once: nothing is forked or imported
    assert locate_forked(GraphCase(CASE.specs, (GraphPass("relax.FuseOps"),)), elsewhere, 1.0) is None


def test_a_probe_s_bad_alloc_judged_as_the_input_s_size_is_the_same_failure() -> None:
    expected = Observation(Symptom.EXCEPTION, Stage.PASS, CONVERT_LAYOUT, "InternalError: std::bad_alloc")
    judged = Observation(Symptom.INVALID, Stage.PASS, CONVERT_LAYOUT, "out of memory (InternalError: std::bad_alloc) "
                         "on a model of tensors of shapes not all static: the input's size, not a bug")
    assert same_error_judged_invalid(expected, judged)
    assert not same_error_judged_invalid(expected, Observation(Symptom.INVALID, Stage.PASS, CONVERT_LAYOUT, "other"))
    assert not same_error_judged_invalid(expected, Observation(Symptom.INVALID, Stage.PASS, "relax.FuseOps",
                                                               judged.message))
