"""Fixtures for integration tests: tiny real ONNX pools built with onnx.helper (no generator)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper


def _save(model: onnx.ModelProto, path: Path) -> None:
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, path)


def relu_add_model() -> onnx.ModelProto:
    """y = relu(x) + x on a 1x3x8x8 float32 tensor."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 3, 8, 8])
    nodes = [helper.make_node("Relu", ["x"], ["r"]), helper.make_node("Add", ["r", "x"], ["y"])]
    return helper.make_model(helper.make_graph(nodes, "relu_add", [x], [y]),
                             opset_imports=[helper.make_opsetid("", 17)])


def conv_model() -> onnx.ModelProto:
    """A 3x3 convolution followed by a sigmoid."""
    rng = np.random.default_rng(0)
    w = numpy_helper.from_array(rng.standard_normal((4, 3, 3, 3)).astype("float32"), "w")
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 6, 6])
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], kernel_shape=[3, 3]),
             helper.make_node("Sigmoid", ["c"], ["y"])]
    return helper.make_model(helper.make_graph(nodes, "conv", [x], [y], [w]),
                             opset_imports=[helper.make_opsetid("", 17)])


def matmul_model() -> onnx.ModelProto:
    """A matmul and a reduce-sum."""
    rng = np.random.default_rng(1)
    w = numpy_helper.from_array(rng.standard_normal((8, 5)).astype("float32"), "w")
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 8])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 1])
    nodes = [helper.make_node("MatMul", ["x", "w"], ["m"]),
             helper.make_node("ReduceSum", ["m"], ["y"], keepdims=1, axes=None)]
    axes = numpy_helper.from_array(np.array([1], dtype=np.int64), "axes")
    nodes[1] = helper.make_node("ReduceSum", ["m", "axes"], ["y"], keepdims=1)
    return helper.make_model(helper.make_graph(nodes, "matmul", [x], [y], [w, axes]),
                             opset_imports=[helper.make_opsetid("", 17)])


def write_pool(root: Path, models: dict[str, onnx.ModelProto]) -> Path:
    """Write models and a minimal manifest.json."""
    root.mkdir(parents=True, exist_ok=True)
    for name, model in models.items():
        _save(model, root / name)
    (root / "manifest.json").write_text(json.dumps({"models": [{"file": n} for n in models]}))
    return root


@pytest.fixture
def tiny_pool(tmp_path: Path) -> Path:
    """Three small real models."""
    return write_pool(tmp_path / "pool", {"relu_add.onnx": relu_add_model(), "conv.onnx": conv_model(),
                                          "matmul.onnx": matmul_model()})


@pytest.fixture(scope="session", autouse=True)
def block_table() -> None:
    """Build the default breakpoints block table once per session (about 2 minutes on a fresh machine).

    Campaigns use the breakpoints backend by default and would otherwise build it inside the first
    campaign test, where time limits on start-up are tight. Cached afterwards (~1 ms to load).
    """
    from seedzer.coverage.blocktable import DEFAULT_CACHE, load_or_build, tvm_compiler_library

    load_or_build(tvm_compiler_library(), DEFAULT_CACHE, "blocks", progress=False)
