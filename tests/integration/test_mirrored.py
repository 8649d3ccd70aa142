"""The converters that hand a node to one Relax operator of its meaning, read off real TVM imports (the audited NMS
and ScatterElements roots: TOPI computes them wrong, the converters only pass them on)."""

from __future__ import annotations

import pytest
from onnx import TensorProto, helper

from seedzer.finding.mirrored import MIRRORS, mirrored_call

pytest.importorskip("tvm")


def _nms(center_point_box: int) -> bytes:
    """Relu(boxes) into NonMaxSuppression with constant thresholds (iou 0: the audited case), boxes in the format
    ``center_point_box`` says (1: centres, which the converter converts itself)."""
    consts = [helper.make_tensor("m", TensorProto.INT64, [1], [100]),
              helper.make_tensor("iou", TensorProto.FLOAT, [1], [0.0]),
              helper.make_tensor("st", TensorProto.FLOAT, [1], [0.0])]
    graph = helper.make_graph(
        [helper.make_node("Relu", ["b"], ["r"]),
         helper.make_node("NonMaxSuppression", ["r", "s", "m", "iou", "st"], ["y"], center_point_box=center_point_box)],
        "g", [helper.make_tensor_value_info("b", TensorProto.FLOAT, [1, 4, 4]),
              helper.make_tensor_value_info("s", TensorProto.FLOAT, [1, 1, 4])],
        [helper.make_tensor_value_info("y", TensorProto.INT64, None)], consts)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()


def _indexed(operator: str) -> bytes:
    """``operator`` (ScatterElements or GatherElements) of a (3, 4) tensor with indices that are graph inputs."""
    data = helper.make_tensor_value_info("d", TensorProto.FLOAT, [3, 4])
    indices = helper.make_tensor_value_info("i", TensorProto.INT64, [2, 2])
    updates = helper.make_tensor_value_info("u", TensorProto.FLOAT, [2, 2])
    scatter = operator == "ScatterElements"
    graph = helper.make_graph(
        [helper.make_node(operator, ["d", "i", "u"] if scatter else ["d", "i"], ["y"], axis=0)], "g",
        [data, indices, updates] if scatter else [data, indices],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 4] if scatter else [2, 2])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()


def test_nms_handed_to_the_onnx_style_relax_operator_is_its_legalizations() -> None:
    found = mirrored_call(_nms(0), "NonMaxSuppression")
    assert found is not None and found.op == "relax.vision.all_class_non_max_suppression"
    assert found.code == "topi.vision.nms"  # the TOPI module legalize.vision calls (its _nms_loop is at fault)


def test_a_converter_that_emits_more_than_the_one_call_keeps_the_blame() -> None:
    assert mirrored_call(_nms(1), "NonMaxSuppression") is None  # the converter converts centre boxes itself
    assert mirrored_call(_indexed("GatherElements"), "GatherElements") is None  # it normalizes negative indices


def test_scatter_elements_is_one_call_and_other_operators_are_not_asked() -> None:
    found = mirrored_call(_indexed("ScatterElements"), "ScatterElements")
    assert found is not None and found.code == "topi.scatter_elements"
    assert mirrored_call(_nms(0), "Relu") is None and "Relu" not in {m.operator for m in MIRRORS}
    assert mirrored_call(_nms(0), "ScatterElements") is None  # no such node
