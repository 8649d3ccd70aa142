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


def test_a_float_division_by_a_constant_zero_is_filed_under_the_constant_folder() -> None:
    """``Div(x, 0.0)`` (IEEE: ±inf or NaN, as onnxruntime gives): the build's LegalizeOps hands the 0-d constant to
    TOPI's elementwise divide as a scalar, and constant folding refuses it; the folder is at fault."""
    from tvm.relax.frontend.onnx import from_onnx

    from seedzer.finding.component import CONSTANT_FOLDER, component_of
    from seedzer.kernel.common import Observation, Stage, Symptom, error_text

    graph = helper.make_graph([helper.make_node("Div", ["x", "zero"], ["y"])], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])],
                              initializer=[numpy_helper.from_array(np.array(0.0, np.float32), "zero")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
    module = from_onnx(model, keep_params_in_input=False)
    with pytest.raises(Exception) as info:
        tvm.compile(module, target="llvm")
    observed = Observation(Symptom.EXCEPTION, Stage.BUILD, "build", error_text(info.value),
                           frames=tvm_frames(info.value))
    assert "Divide by zero" in observed.message
    found = component_of(observed)
    assert found is not None and found.name == CONSTANT_FOLDER and "TryConstFold" in found.frame


def test_a_conv2d_converted_to_a_packed_layout_is_left_unlowered_on_purpose() -> None:
    """ConvertLayout to NHWC4c/OHWI4o, then tvm.compile: LegalizeOps leaves the packed conv2d as it is, and VM code
    generation's error names the call, which the graph gate excuses as a documented limitation."""
    from tvm import relax
    from tvm.relax.frontend.onnx import from_onnx

    from seedzer.finding.graph.unlowered import unlowered_on_purpose
    from seedzer.kernel.common import error_text

    graph = helper.make_graph([helper.make_node("Conv", ["x", "w"], ["y"])], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 6, 6])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 4, 4])],
                              initializer=[numpy_helper.from_array(np.ones((4, 4, 3, 3), np.float32), "w")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
    module = from_onnx(model, keep_params_in_input=False)
    with tvm.target.Target("llvm"):
        packed = relax.transform.ConvertLayout({"relax.nn.conv2d": ["NHWC4c", "OHWI4o"]})(module)
    with pytest.raises(Exception) as info:
        tvm.compile(packed, target="llvm")
    assert unlowered_on_purpose(error_text(info.value)) is not None
