"""The frames the kernel records of a real importer failure (``Observation.frames``): each Python function
named with its class, the importer's dispatch with the converter it called, as the code at fault is read off
them (``seedzer.finding.component``)."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from seedzer.kernel.common import CONVERTING, tvm_frames

pytestmark = pytest.mark.integration
tvm = pytest.importorskip("tvm")


def test_an_importer_failure_records_the_converter_class_and_the_operator_being_converted() -> None:
    from tvm.relax.frontend.onnx import from_onnx

    graph = helper.make_graph(
        [helper.make_node("SplitToSequence", ["x"], ["s"], axis=0), helper.make_node("SequenceAt", ["s", "p"], ["y"])],
        "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        initializer=[numpy_helper.from_array(np.array(-1, np.int64), "p")])
    with pytest.raises(Exception) as info:
        from_onnx(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]))
    frames = tvm_frames(info.value)
    assert any(f.startswith("SequenceAt._impl_v11 (tvm/relax/frontend/onnx/onnx_frontend.py:") for f in frames)
    assert any(f.endswith(f"{CONVERTING}SequenceAt._impl_v11]") for f in frames)
    assert frames[-1].startswith("tvm::TupleGetItem::TupleGetItem")  # C++ frames stay innermost, as TVM gives them
