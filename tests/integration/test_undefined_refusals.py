"""TVM's refusals of settings the ONNX specification does not define, as the installed TVM raises them: each row of
``REFUSALS`` must still match what TVM says (a changed message would file the case as a bug again)."""

from __future__ import annotations

import pytest
from onnx import TensorProto, helper

from seedzer.kernel.onnx.undefined import refused_where_undefined

pytestmark = pytest.mark.integration
tvm = pytest.importorskip("tvm")


def test_affine_grid_of_a_spatial_size_one_with_aligned_corners_is_refused_as_undefined() -> None:
    from tvm import relax
    from tvm.relax.frontend.onnx import from_onnx

    graph = helper.make_graph([helper.make_node("AffineGrid", ["theta", "size"], ["grid"], align_corners=1)], "g",
                              [helper.make_tensor_value_info("theta", TensorProto.FLOAT, [1, 2, 3])],
                              [helper.make_tensor_value_info("grid", TensorProto.FLOAT, [1, 1, 2, 2])],
                              initializer=[helper.make_tensor("size", TensorProto.INT64, [4], [1, 1, 1, 2])])
    module = from_onnx(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)]))
    with pytest.raises(Exception) as info:
        relax.transform.LegalizeOps()(module)
    assert refused_where_undefined(f"{type(info.value).__name__}: {info.value}") is not None
    graph.initializer[0].CopyFrom(helper.make_tensor("size", TensorProto.INT64, [4], [1, 1, 2, 2]))
    relax.transform.LegalizeOps()(from_onnx(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])))
