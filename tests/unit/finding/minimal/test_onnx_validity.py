"""The three judges of a model's validity."""

from __future__ import annotations

import numpy as np
from onnx import TensorProto, helper

from seedzer.finding.minimal.onnx_validity import OK, model_validity


def _constant_of_shape() -> tuple[object, dict[str, np.ndarray]]:
    node = helper.make_node("ConstantOfShape", ["s"], ["y"])
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("s", TensorProto.INT64, [2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["a", "b"])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=7), {}


def test_a_valid_model_is_accepted_by_all_three() -> None:
    model, _ = _constant_of_shape()
    judged = model_validity(model, {"s": np.array([2, 3], "int64")})  # type: ignore[arg-type]
    assert (judged.checker, judged.onnxruntime, judged.reference) == (OK, OK, OK) and judged.valid


def test_inputs_outside_the_operators_domain_are_refused() -> None:
    model, _ = _constant_of_shape()
    judged = model_validity(model, {"s": np.array([-3, 2], "int64")})  # type: ignore[arg-type]
    assert judged.checker == OK and judged.onnxruntime.startswith("refused: ") and not judged.valid
