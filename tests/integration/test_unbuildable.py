"""The operator whose lowering does not build, found on a real model with real TVM (a53 audit, 713d49e9a96f)."""

from __future__ import annotations

import pytest
from onnx import TensorProto, helper

from seedzer.finding.unbuildable import unbuildable_operator
from seedzer.kernel.messages import normalize

pytest.importorskip("tvm")


def _scatter_nd_of_bool(reduction: str) -> bytes:
    """Relu(x) beside ScatterND of a bool tensor (``reduction`` as given): TOPI multiplies bools for ``mul``."""
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["r"]),
         helper.make_node("ScatterND", ["d", "i", "u"], ["y"], reduction=reduction)], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4]),
         helper.make_tensor_value_info("d", TensorProto.BOOL, [4]),
         helper.make_tensor_value_info("u", TensorProto.BOOL, [2])],
        [helper.make_tensor_value_info("r", TensorProto.FLOAT, [4]),
         helper.make_tensor_value_info("y", TensorProto.BOOL, [4])],
        [helper.make_tensor("i", TensorProto.INT64, [2, 1], [0, 2])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)]).SerializeToString()


def test_scatter_nd_of_bool_with_a_product_is_the_call_whose_build_fails() -> None:
    import onnx
    import tvm
    from tvm.relax.frontend.onnx import from_onnx

    data = _scatter_nd_of_bool("mul")
    with pytest.raises(Exception) as raised:  # the whole model fails tvm.compile in LLVM's code generator
        tvm.compile(from_onnx(onnx.load_model_from_string(data)), target="llvm")
    headline = normalize(f"{type(raised.value).__name__}: {raised.value}")
    found = unbuildable_operator(data, "llvm", headline)
    assert found is not None and found.op == "relax.scatter_nd"
    assert unbuildable_operator(data, "llvm", "another failure") is None
    assert unbuildable_operator(_scatter_nd_of_bool("none"), "llvm", headline) is None  # builds: nothing found
