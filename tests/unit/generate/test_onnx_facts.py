"""ONNX facts (weights, kernels, structural hash, constraint checks) and reference outputs."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from seedzer.generate import reference
from seedzer.generate.onnx_facts import constraint_violation, count_weights, model_facts, structural_hash
from seedzer.generate.options import ConvOptions, GenerationOptions
from seedzer.generate.reference import (
    ReferenceFailure,
    load_reference,
    npz_bytes,
    ort_reason,
    reference_outputs,
)
from tests.unit.generate.test_seed_pool import tiny_model


def _conv(kernel: int, names: tuple[str, str, str] = ("x", "w", "y"), seed: int = 0) -> onnx.ModelProto:
    x, w, y = names
    rng = np.random.default_rng(seed)
    weight = numpy_helper.from_array(rng.standard_normal((4, 2, kernel, kernel)).astype("float32"), w)
    out = 8 - kernel + 1
    graph = helper.make_graph(
        [helper.make_node("Conv", [x, w], [y], kernel_shape=[kernel, kernel])],
        "g",
        [helper.make_tensor_value_info(x, TensorProto.FLOAT, [1, 2, 8, 8])],
        [helper.make_tensor_value_info(y, TensorProto.FLOAT, [1, 4, out, out])],
        [weight],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
    model.ir_version = 7  # onnx 1.23 writes IR 14 by default, which onnxruntime 1.31 refuses
    return model


def test_facts_of_a_conv_model() -> None:
    facts = model_facts(_conv(3))
    assert facts["ops"] == ["Conv"] and facts["nodes"] == 1
    assert facts["weights"] == 4 * 2 * 3 * 3
    assert facts["conv_kernels"] == [[3, 3]] and facts["max_conv_weight"] == 72
    assert facts["dtypes"] == ["float32"]
    assert facts["input_shapes"] == {"x": [1, 2, 8, 8]} and facts["output_shapes"] == {"y": [1, 4, 6, 6]}


def test_constant_of_shape_counts_as_weights_not_its_shape() -> None:
    shape = numpy_helper.from_array(np.array([4, 2, 5, 5], dtype=np.int64), "w_shape")
    nodes = [
        helper.make_node(
            "ConstantOfShape", ["w_shape"], ["w"], value=helper.make_tensor("v", TensorProto.FLOAT, [1], [0.02])
        ),
        helper.make_node("Conv", ["x", "w"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 4, 4])],
        [shape],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
    assert count_weights(model) == 4 * 2 * 5 * 5
    assert model_facts(model)["conv_kernels"] == [[5, 5]]  # from the weight's shape


def test_structural_hash_ignores_names_and_float_values_only() -> None:
    base = structural_hash(_conv(3))
    assert structural_hash(_conv(3, names=("a", "b", "c"))) == base
    assert structural_hash(_conv(3, seed=1)) == base  # other weight values, same structure
    assert structural_hash(_conv(5)) != base


def test_constraint_violation() -> None:
    facts = model_facts(_conv(5))
    assert constraint_violation(facts, GenerationOptions(conv=ConvOptions(kernel_sizes=(3,)))) == (
        "constraint violated: conv kernel"
    )
    assert constraint_violation(facts, GenerationOptions(conv=ConvOptions(min_kernel=5))) is None
    assert constraint_violation(facts, GenerationOptions(max_weight_elements=100)) == (
        "constraint violated: conv weight budget"
    )


def test_reference_prefers_onnxruntime_and_roundtrips(tmp_path: object) -> None:
    data = _conv(3).SerializeToString()
    inputs = {"x": np.ones((1, 2, 8, 8), dtype=np.float32)}
    outputs, provider = reference_outputs(data, inputs)
    assert provider == "onnxruntime" and outputs["y"].shape == (1, 4, 6, 6)
    path = tmp_path / "r.npz"  # type: ignore[operator]
    path.write_bytes(npz_bytes(inputs, outputs, provider))
    ins, outs, prov = load_reference(path)
    assert prov == "onnxruntime" and np.array_equal(ins["x"], inputs["x"]) and np.array_equal(outs["y"], outputs["y"])


def test_reference_falls_back_to_onnx_reference(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_kernel(data: bytes, inputs: object) -> object:
        raise RuntimeError("[ONNXRuntimeError] : 9 : NOT_IMPLEMENTED : Could not find an implementation")

    monkeypatch.setattr(reference, "run_onnxruntime", no_kernel)
    data = _conv(3).SerializeToString()
    inputs = {"x": np.ones((1, 2, 8, 8), dtype=np.float32)}
    outputs, provider = reference_outputs(data, inputs)
    assert provider == "onnx.reference" and outputs["y"].shape == (1, 4, 6, 6)
    monkeypatch.undo()
    expected, _ = reference_outputs(data, inputs)
    assert np.allclose(outputs["y"], expected["y"], rtol=1e-4, atol=1e-4)


def test_reference_failure_is_rejected_with_countable_reason(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_kernel(data: bytes, inputs: object) -> object:
        raise RuntimeError("[ONNXRuntimeError] : 9 : NOT_IMPLEMENTED : Could not find an implementation for X")

    def broken(data: bytes, inputs: object) -> object:
        raise ValueError("reference evaluator cannot run it either")

    monkeypatch.setattr(reference, "run_onnxruntime", no_kernel)
    monkeypatch.setattr(reference, "run_reference_evaluator", broken)
    with pytest.raises(ReferenceFailure) as info:
        reference_outputs(b"", {})
    assert info.value.reason == "onnxruntime: NOT_IMPLEMENTED"
    assert ort_reason(ValueError("plain")) == "onnxruntime: ValueError"


def test_tiny_model_helper_is_a_valid_model() -> None:
    m = tiny_model(3, kernel=1)
    assert m.meta["conv_kernels"] == [[1, 1]]
    onnx.checker.check_model(onnx.load_model_from_string(m.onnx_bytes))
