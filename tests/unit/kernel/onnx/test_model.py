"""The graph kernel's trace of steps (seedzer.kernel.onnx.model.Trace): an importer limit is invalid,
counted under one class whatever exception type carried it; any other error stays an exception."""

from __future__ import annotations

import numpy as np
import onnx

from seedzer.campaign.invalid import invalid_class
from seedzer.kernel.common import IMPORTER_LIMIT, Symptom
from seedzer.kernel.onnx.inputs import UnsupportedInput
from seedzer.kernel.onnx.model import Trace


def _raise(exc: Exception) -> None:
    raise exc


def test_an_importer_limit_is_invalid_under_one_class_whatever_its_exception_type() -> None:
    for exc in (AssertionError("SkipLayerNormalization import currently only supports required beta and bias"),
                ValueError("Attribute x is not supported for Relax frontend"),
                ValueError("Node  cannot handle ShapeExpr inputs.")):
        got = Trace().call("import", _raise, exc)
        assert got.symptom is Symptom.INVALID and got.message.startswith(f"{IMPORTER_LIMIT}: {type(exc).__name__}")
        assert invalid_class(got.message) == IMPORTER_LIMIT


def test_the_same_error_outside_import_and_other_errors_at_import_stay_exceptions() -> None:
    limit = AssertionError("only supports required beta and bias")
    assert Trace().call("legalize", _raise, limit).symptom is Symptom.EXCEPTION
    got = Trace().call("import", _raise, ValueError("Node cannot infer the shape of ShapeExpr inputs."))
    assert got.symptom is Symptom.EXCEPTION and not got.message.startswith(IMPORTER_LIMIT)


def test_an_unsupported_input_type_keeps_its_own_reason() -> None:
    got = Trace().call("import", _raise, UnsupportedInput("unsupported input type: x is string"))
    assert got.symptom is Symptom.INVALID and not got.message.startswith(IMPORTER_LIMIT)


def _two_identities() -> onnx.ModelProto:
    """``y = x`` and ``z = x``: two outputs onnx.reference computes exactly."""
    from onnx import TensorProto, helper

    info = helper.make_tensor_value_info
    graph = helper.make_graph([helper.make_node("Identity", ["x"], ["y"]), helper.make_node("Identity", ["x"], ["z"])],
                              "g", [info("x", TensorProto.FLOAT, [2])],
                              [info("y", TensorProto.FLOAT, [2]), info("z", TensorProto.FLOAT, [2])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_the_reference_verdict_names_whom_it_sides_with_on_the_differing_output() -> None:
    from seedzer.kernel.onnx.model import TOLERANCES, onnx_reference_verdict

    model, x = _two_identities(), np.array([1.0, 2.0], np.float32)
    feeds = {"x": x}
    assert onnx_reference_verdict(model, feeds, [x, x], [x + 5, x], TOLERANCES)[0] == "tvm"
    assert onnx_reference_verdict(model, feeds, [x + 5, x], [x, x], TOLERANCES)[0] == "onnxruntime"
    assert onnx_reference_verdict(model, feeds, [x + 3, x], [x + 5, x], TOLERANCES)[0] == "neither"
    # output 1 differs from the reference on both sides (ill-conditioned there): only output 0 decides
    assert onnx_reference_verdict(model, feeds, [x, x + 9], [x + 5, x + 9], TOLERANCES)[0] == "neither"
    assert onnx_reference_verdict(model, feeds, [x, x + 9], [x + 5, x + 9], TOLERANCES, output=0)[0] == "tvm"
    broken = _two_identities()
    broken.graph.node[0].op_type = "NoSuchOp"
    assert onnx_reference_verdict(broken, feeds, [x, x], [x + 5, x], TOLERANCES)[0] == "none"


def test_the_reference_judges_the_differing_output_by_its_own_nodes() -> None:
    """An operator the reference does not implement, upstream of another output only, does not keep it
    from judging (the study's audit: a Tan output filed on onnxruntime alone because of a MaxRoiPool
    insertion on another output)."""
    from seedzer.kernel.onnx.model import TOLERANCES, onnx_reference_verdict, output_model

    model, x = _two_identities(), np.array([1.0, 2.0], np.float32)
    model.graph.node[1].op_type = "NoSuchOp"  # z's producer: unknown to every engine
    alone = output_model(model, 0)
    assert [n.op_type for n in alone.graph.node] == ["Identity"] and [o.name for o in alone.graph.output] == ["y"]
    assert onnx_reference_verdict(model, {"x": x}, [x, x], [x + 5, x], TOLERANCES)[0] == "none"
    assert onnx_reference_verdict(model, {"x": x}, [x, x], [x + 5, x], TOLERANCES, output=0)[0] == "tvm"
    assert onnx_reference_verdict(model, {"x": x}, [x + 3, x], [x + 5, x], TOLERANCES, output=0)[0] == "neither"


def _relu(shape: list[int | str]) -> onnx.ModelProto:
    from onnx import TensorProto, helper

    info = helper.make_tensor_value_info
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g", [info("x", TensorProto.FLOAT, shape)],
                              [info("y", TensorProto.FLOAT, shape)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_a_failed_allocation_on_a_small_model_is_tvm_s_failure_else_the_input_s_size() -> None:
    """Issue 53: ConvertLayout's ``std::bad_alloc`` on a kilobyte model was turned away as out of memory.
    A failed allocation is the input's size only on a model whose tensors could fill the address space
    (more than 1/SMALL_SHARE of it, or shapes not all static): then ``invalid``, its reason starting
    "out of memory" (the class re-run at the full limits); on a small model it is TVM's ``exception``."""
    from seedzer.kernel.common import OUT_OF_MEMORY
    from seedzer.kernel.onnx.model import SMALL_SHARE, address_space, small_model, tensor_bytes

    small, dynamic = _relu([2, 3]), _relu(["n", 3])
    assert tensor_bytes(small) == 2 * 6 * 4 and tensor_bytes(dynamic) is None
    assert small_model(small) and not small_model(dynamic) and not small_model(None)
    huge = _relu([address_space() // (4 * SMALL_SHARE) + 1])  # x and y alone fill more than the share
    assert not small_model(huge)
    bad_alloc = RuntimeError("InternalError: std::bad_alloc")
    got = Trace(model=small).call("relax.ConvertLayout", _raise, bad_alloc)
    assert got.symptom is Symptom.EXCEPTION and got.message == "RuntimeError: InternalError: std::bad_alloc"
    for model in (dynamic, huge, None):
        got = Trace(model=model).call("build", _raise, MemoryError("no room"))
        assert got.symptom is Symptom.INVALID and got.message.startswith(f"{OUT_OF_MEMORY} (MemoryError: no room)")
        assert invalid_class(got.message) == OUT_OF_MEMORY


def test_a_model_whose_shapes_only_its_data_decides_is_measured_on_its_inputs() -> None:
    """b53's four ConvertLayout ``std::bad_alloc`` test cases (InferLayoutSqueeze) were turned away as out of memory
    because an Expand to a computed shape has no static size. On the case's inputs onnxruntime computes every
    tensor: a kilobyte model, so the failed allocation is TVM's."""
    from onnx import TensorProto, helper

    from seedzer.kernel.onnx.model import measured_bytes, small_model, tensor_bytes

    graph = helper.make_graph(
        [helper.make_node("Shape", ["x"], ["s"]), helper.make_node("Cast", ["s"], ["s_f"], to=TensorProto.FLOAT),
         helper.make_node("Relu", ["s_f"], ["r"]), helper.make_node("Cast", ["r"], ["shape"], to=TensorProto.INT64),
         helper.make_node("Expand", ["x", "shape"], ["y"])], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    feeds = {"x": np.ones((1, 3), np.float32)}
    assert tensor_bytes(model) is None and not small_model(model)
    size = measured_bytes(model, feeds)
    assert size is not None and size == 12 + 16 + 8 + 8 + 16 + 12  # x, s, s_f, r, shape, y
    assert small_model(model, feeds)
    bad_alloc = RuntimeError("InternalError: std::bad_alloc")
    assert Trace(model=model, feeds=feeds).call("relax.ConvertLayout", _raise, bad_alloc).symptom is Symptom.EXCEPTION
    assert Trace(model=model).call("relax.ConvertLayout", _raise, bad_alloc).symptom is Symptom.INVALID
