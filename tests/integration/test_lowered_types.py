"""The lowering that retypes a value the importer typed right, found with the installed TVM on small models:
ReduceMean of an int32 tensor is declared int32 (``R.mean``) and legalized to int64 (``_te_mean``)."""

from __future__ import annotations

import pytest
from onnx import TensorProto, helper

from seedzer.finding.component import legalization
from seedzer.finding.lowered_types import retyped_forked, retyped_output

pytestmark = pytest.mark.integration
pytest.importorskip("tvm")


def _model(nodes: list, outputs: list) -> bytes:
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.INT32, [2, 3])], outputs)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)]).SerializeToString()


def test_an_int32_mean_lowered_to_int64_is_the_statistical_legalizations() -> None:
    mean = helper.make_node("ReduceMean", ["x"], ["m"], axes=[1], keepdims=0)
    data = _model([mean, helper.make_node("Relu", ["m"], ["y"])],
                  [helper.make_tensor_value_info("y", TensorProto.INT32, [2])])
    found = retyped_forked(data, "y")
    assert found is not None and found.op == "relax.mean" and found.what == "dtype"
    assert "int32" in found.declared and "int64" in found.lowered  # the mean, not the Relu it feeds
    assert legalization(found.op) == "legalize.statistical"
    assert retyped_output(data, 0) == found  # asked by index, as older findings name an output


def test_an_output_the_converter_typed_otherwise_than_onnx_is_not_the_lowerings() -> None:
    """Dropout's mask: ONNX has bool, the converter declares float32: the converter's, not the lowering's."""
    data = _model([helper.make_node("Cast", ["x"], ["f"], to=TensorProto.FLOAT),
                   helper.make_node("Dropout", ["f"], ["y", "mask"])],
                  [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3]),
                   helper.make_tensor_value_info("mask", TensorProto.BOOL, [2, 3])])
    assert retyped_output(data, "mask") is None


def test_an_output_no_legalization_retypes_finds_nothing() -> None:
    data = _model([helper.make_node("Relu", ["x"], ["y"])], [helper.make_tensor_value_info("y", TensorProto.INT32,
                                                                                            [2, 3])])
    assert retyped_output(data, "y") is None


def test_a_retyping_lowering_on_another_outputs_path_is_not_blamed() -> None:
    """Two outputs: the int32 mean retyped by its legalization feeds ``m`` only; ``y`` reads none of it."""
    data = _model([helper.make_node("ReduceMean", ["x"], ["m"], axes=[1], keepdims=0),
                   helper.make_node("Relu", ["x"], ["y"])],
                  [helper.make_tensor_value_info("m", TensorProto.INT32, [2]),
                   helper.make_tensor_value_info("y", TensorProto.INT32, [2, 3])])
    assert retyped_output(data, "y") is None
    found = retyped_output(data, "m")
    assert found is not None and found.op == "relax.mean"
