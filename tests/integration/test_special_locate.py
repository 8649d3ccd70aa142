"""The special-values oracle names the operator where a NaN is lost, not the one whose output shows it
(real TVM, real onnxruntime): TVM's Relu turns NaN into 0 (apache/tvm#19579), seen at a Neg output."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from seedzer.kernel.common import SPECIAL_VALUES, Symptom
from seedzer.kernel.graph.special import judge_special, locate_node, locate_operator, probe_model
from seedzer.kernel.onnx.model import TOLERANCES, Trace, build, import_model, run

pytestmark = pytest.mark.integration

SPECS = (("x", "float32", (4,)),)
FEEDS = {"x": np.array([1.5, -1.0, np.nan, 0.0], np.float32)}  # the audit's input


def _relu_then_neg() -> onnx.ModelProto:
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["r"]), helper.make_node("Neg", ["r"], ["y"])], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


def _tvm(model: onnx.ModelProto) -> list[np.ndarray]:
    return run(build(import_model(model, SPECS)), SPECS, FEEDS)


def test_the_lost_nan_is_located_at_the_relu_not_at_the_neg_output() -> None:
    model = _relu_then_neg()
    probe = probe_model(model)
    assert probe is not None and [o.name for o in probe.graph.output] == ["y", "r"]
    actual = _tvm(model)
    if np.isnan(actual[0][2]):  # TVM keeps the NaN: the bug is fixed in this TVM, nothing to locate
        pytest.skip("this TVM's Relu keeps NaN")
    assert locate_operator(model, FEEDS, TOLERANCES, _tvm) == "Relu"
    got = judge_special(model, FEEDS, actual, lambda: _tvm(model), TOLERANCES, Trace(), tvm_outputs=_tvm)
    assert got.symptom is Symptom.MISMATCH and got.comparison == SPECIAL_VALUES
    assert got.difference is not None and got.difference.operator == "Relu"


def test_a_difference_on_a_side_branch_is_not_the_located_operator() -> None:
    """The audited case (finding b30548c34bf9 of 2026-12-02): a ReduceSum on another output, earlier in
    graph order, turns a sum of -0.0 into +0.0; the judged output's NaN is lost at its Relu."""
    specs = (("x", "float32", (2, 1)),)
    feeds = {"x": np.array([[-0.0], [np.nan]], np.float32)}
    nodes = [helper.make_node("ReduceSum", ["x", "axes"], ["s"], keepdims=0), helper.make_node("Neg", ["s"], ["n"]),
             helper.make_node("Relu", ["x"], ["r"]), helper.make_node("Neg", ["r"], ["y"])]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 1])],
                              [helper.make_tensor_value_info("n", TensorProto.FLOAT, [2]),
                               helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 1])],
                              [helper.make_tensor("axes", TensorProto.INT64, [1], [1])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8

    def tvm(probe: onnx.ModelProto) -> list[np.ndarray]:
        return run(build(import_model(probe, specs)), specs, feeds)

    actual = tvm(model)
    if np.isnan(actual[1][1, 0]) or not np.signbit(actual[0][0]):  # Neg of a sum that kept -0.0 is +0.0
        pytest.skip("this TVM keeps the NaN through Relu or the sign of a sum of -0.0")
    assert locate_operator(model, feeds, TOLERANCES, tvm) == "ReduceSum"  # first in graph order over all outputs
    assert locate_operator(model, feeds, TOLERANCES, tvm, "y") == "Relu"



def test_the_operator_that_loses_the_nan_is_located_past_a_signed_zero_upstream() -> None:
    """The audited case, on the judged output's own path: a sum of -0.0 comes out +0.0 (a signed
    zero), then the Relu after it loses the NaN the output is judged on."""
    specs = (("x", "float32", (2, 1)),)
    feeds = {"x": np.array([[-0.0], [np.nan]], np.float32)}
    nodes = [helper.make_node("ReduceSum", ["x", "axes"], ["s"], keepdims=1), helper.make_node("Relu", ["s"], ["r"]),
             helper.make_node("Neg", ["r"], ["y"])]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 1])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 1])],
                              [helper.make_tensor("axes", TensorProto.INT64, [1], [1])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8

    def tvm(probe: onnx.ModelProto) -> list[np.ndarray]:
        return run(build(import_model(probe, specs)), specs, feeds)

    if locate_operator(model, feeds, TOLERANCES, tvm, "y") != "ReduceSum":
        pytest.skip("this TVM keeps the sign of a sum of -0.0")
    assert locate_operator(model, feeds, TOLERANCES, tvm, "y", "nan positions") == "Relu"


def test_an_infinity_lost_upstream_is_where_the_nan_downstream_was_lost() -> None:
    """c53 audit (df875e4bb194, filed to Mul): a variadic Max of -inf gives -FLT_MAX in TVM (the min/max reduction's
    finite identity), so the product with 0 after it is -0 instead of NaN. The Max is at fault, not the Mul whose
    output differs in NaN positions first: its input differs by another special value (not a signed zero)."""
    specs = (("a", "float32", (2,)), ("b", "float32", (2,)))
    feeds = {"a": np.array([-np.inf, 1.0], np.float32), "b": np.array([-np.inf, 2.0], np.float32)}
    nodes = [helper.make_node("Max", ["a", "b"], ["m"]), helper.make_node("Mul", ["m", "zero"], ["y"])]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info(n, TensorProto.FLOAT, [2]) for n in "ab"],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])],
                              [helper.make_tensor("zero", TensorProto.FLOAT, [], [0.0])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8

    def tvm(probe: onnx.ModelProto) -> list[np.ndarray]:
        return run(build(import_model(probe, specs)), specs, feeds)

    if np.isnan(tvm(model)[0][0]):
        pytest.skip("this TVM keeps -inf through a variadic Max")
    assert locate_operator(model, feeds, TOLERANCES, tvm, "y", "nan positions") == "Max"
    assert locate_node(model, feeds, TOLERANCES, tvm, "y", "nan positions") == ("Max", "inf positions")
