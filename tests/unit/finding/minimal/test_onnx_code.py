"""ONNX models as onnx.helper code: what the code builds is the model."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from seedzer.finding.minimal.onnx_code import NotRepresentable, model_code, rebuilt


def _model() -> onnx.ModelProto:
    nodes = [helper.make_node("Constant", [], ["shape"], value=numpy_helper.from_array(np.array([2, 3], "int64"))),
             helper.make_node("Reshape", ["x", "shape"], ["r"], allowzero=0),
             helper.make_node("Resize", ["r", "", "scales"], ["y"], mode="nearest", cubic_coeff_a=-0.75),
             helper.make_node("LeakyRelu", ["y"], ["z"], alpha=float("inf"))]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [6])],
                              [helper.make_tensor_value_info("z", TensorProto.FLOAT, ["n", 6])],
                              [numpy_helper.from_array(np.array([1.0, 2.0], "float32"), "scales")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=7)


def test_the_code_rebuilds_the_same_graph() -> None:
    model = _model()
    again = rebuilt(model)
    assert [n.SerializeToString() for n in again.graph.node] == [n.SerializeToString() for n in model.graph.node]
    assert again.graph.input == model.graph.input and again.graph.output == model.graph.output
    assert [numpy_helper.to_array(t).tolist() for t in again.graph.initializer] == [[1.0, 2.0]]
    assert again.opset_import == model.opset_import and again.ir_version == 7
    assert sum(line.startswith("        helper.make_node") for line in model_code(model)) == 4


def test_a_big_float_initializer_is_drawn_from_a_seed_unless_exact() -> None:
    model = _model()
    model.graph.initializer[0].CopyFrom(numpy_helper.from_array(np.arange(100, dtype="float32"), "scales"))
    assert "default_rng(0)" in "\n".join(model_code(model))
    assert "default_rng" not in "\n".join(model_code(model, exact=True))
    assert numpy_helper.to_array(rebuilt(model, exact=True).graph.initializer[0]).tolist() == list(range(100))


def test_a_subgraph_is_not_representable() -> None:
    body = helper.make_graph([], "b", [], [])
    model = _model()
    model.graph.node.append(helper.make_node("If", ["c"], ["o"], then_branch=body, else_branch=body))
    with pytest.raises(NotRepresentable, match="subgraph"):
        model_code(model)
