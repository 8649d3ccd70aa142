"""The replay of an operator insertion (seedzer.kernel.graph.insertion) and the mutant registry (TVM-free)."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from seedzer.kernel.graph.case import ModelMutation
from seedzer.kernel.graph.insertion import added_inputs, raise_opset
from seedzer.kernel.graph.model_mutations import opset_version
from seedzer.kernel.graph.mutant import APPLY, apply_model_mutations
from seedzer.kernel.onnx.runtime import onnxruntime_outputs
from seedzer.kernel.onnx.validity import model_validity

FEEDS = {"x": np.arange(12, dtype=np.float32).reshape(3, 4) - 6}


def relu_model(opset: int = 14) -> onnx.ModelProto:
    """x[3,4] -> Relu -> r -> Neg -> y."""
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["r"]), helper.make_node("Neg", ["r"], ["y"])], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 4])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    return model


def topk(opset: int | None = None, index_input: bool = False) -> ModelMutation:
    k: object = {"input": 0} if index_input else {"value": [2], "dtype": "int64", "shape": [1]}
    params: dict[str, object] = {
        "op": "TopK", "domain": "", "nodes": [{"op": "TopK", "inputs": ["$", k], "outputs": 2, "attrs": {"axis": -1}}],
        "exports": ["%0.0", "%0.1"],
        "inputs": [{"name": "k_in", "dtype": "int64", "shape": [1], "low": 1, "high": 4}] if index_input else []}
    if opset:
        params["opset"] = opset
    return ModelMutation("insert", "r", params=params, seed=3)


def test_an_insertion_adds_its_operator_and_exports_its_outputs() -> None:
    model = relu_model()
    mutated = apply_model_mutations(model, [topk()], FEEDS)
    assert [n.op_type for n in mutated.graph.node] == ["Relu", "Neg", "TopK"]
    assert len(mutated.graph.output) == 3 and mutated.graph.output[2].type.tensor_type.elem_type == TensorProto.INT64
    assert model_validity(mutated, FEEDS).valid
    values, indices = onnxruntime_outputs(mutated, FEEDS)[1:]
    np.testing.assert_array_equal(values, -np.sort(-np.maximum(FEEDS["x"], 0), axis=-1)[:, :2])
    assert indices.shape == (3, 2)
    again = apply_model_mutations(model, [ModelMutation.from_json(topk().to_json())], FEEDS)
    assert again.SerializeToString() == mutated.SerializeToString()  # a record replays the same model


def test_an_insertion_raises_the_opset_only_as_far_as_its_version_needs() -> None:
    mutated = apply_model_mutations(relu_model(), [topk(opset=24)], FEEDS)
    assert opset_version(mutated) == 24 and model_validity(mutated, FEEDS).valid
    with pytest.raises(ValueError, match="lowers the opset"):
        raise_opset(relu_model(), 11)


def test_an_added_index_input_is_declared_and_listed() -> None:
    record = topk(index_input=True)
    mutated = apply_model_mutations(relu_model(), [record], FEEDS)
    assert [i.name for i in mutated.graph.input] == ["x", "k_in"]
    assert added_inputs([record]) == [{"name": "k_in", "dtype": "int64", "shape": [1], "low": 1, "high": 4}]
    assert model_validity(mutated, {**FEEDS, "k_in": np.array([3], np.int64)}).valid


def test_a_record_that_no_longer_fits_says_so() -> None:
    gone = ModelMutation("insert", "nowhere", params=topk().params)
    with pytest.raises(ValueError, match="insert target 'nowhere' is gone"):
        apply_model_mutations(relu_model(), [gone], FEEDS)
    with pytest.raises(ValueError, match="unknown model mutation kind 'nope'"):
        apply_model_mutations(relu_model(), [ModelMutation("nope", "r")], FEEDS)
    assert set(APPLY) == {"uoc", "pioc", "edge", "insert"}


def test_a_contrib_operators_export_is_declared_where_inference_cannot() -> None:
    record = ModelMutation("insert", "r", params={
        "op": "FastGelu", "domain": "com.microsoft", "exports": ["%0.0"], "export_types": [[1, 2]],
        "nodes": [{"op": "FastGelu", "domain": "com.microsoft", "inputs": ["$"]}]})
    mutated = apply_model_mutations(relu_model(), [record], FEEDS)
    out = mutated.graph.output[-1].type.tensor_type
    assert out.elem_type == TensorProto.FLOAT and len(out.shape.dim) == 2
    assert any(o.domain == "com.microsoft" for o in mutated.opset_import)
    assert model_validity(mutated, FEEDS).valid
