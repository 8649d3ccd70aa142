"""Ill-conditioned outputs (seedzer.kernel.onnx.conditioning): a difference between TVM and onnxruntime at an
element that inputs moved a few ulps carry beyond the tolerance is no evidence against either engine (the
study's audit: ``Cos(Round(Conv))`` at a ``.5`` tie, ``Tan`` near its pole), and the reference verdict says
"neither" there; a well-conditioned output keeps its verdict."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from seedzer.kernel.onnx.conditioning import (
    LOSSY_PERTURBATION,
    PERTURBATION,
    has_floating_input,
    ill_conditioned,
    moved_constants,
    moved_inputs,
    rounded_to_half,
)
from seedzer.kernel.onnx.model import TOLERANCES, ill_conditioned_for_lossy_pass, onnx_reference_verdict


def _scaled(op: str | None) -> onnx.ModelProto:
    """``y = op(x * 7)`` (``op`` None: ``y = x * 7``), one float32 input of two elements."""
    info = helper.make_tensor_value_info
    seven = helper.make_tensor("seven", TensorProto.FLOAT, [], [7.0])
    nodes = [helper.make_node("Mul", ["x", "seven"], ["m" if op else "y"])]
    if op:
        nodes.append(helper.make_node(op, ["m"], ["y"]))
    graph = helper.make_graph(nodes, "g", [info("x", TensorProto.FLOAT, [2])], [info("y", TensorProto.FLOAT, [2])],
                              [seven])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_moved_inputs_scale_floats_only_in_their_own_dtype() -> None:
    feeds: dict[str, np.ndarray] = {"x": np.array([1.0, -2.0], np.float32), "k": np.array([3], np.int64)}
    up, down = moved_inputs(feeds, 1), moved_inputs(feeds, -1)
    assert up["x"].dtype == np.float32 and not np.array_equal(up["x"], feeds["x"])
    assert np.array_equal(up["k"], feeds["k"]) and up["k"].dtype == np.int64
    assert np.allclose(up["x"] / feeds["x"], 1 + PERTURBATION) and np.allclose(down["x"] / feeds["x"], 1 - PERTURBATION)


def test_moved_special_inputs_spare_the_extremes_which_would_overflow() -> None:
    big = np.finfo(np.float32).max
    x = np.array([np.nan, np.inf, -big, big, 3.0, -0.0], np.float32)
    moved = moved_inputs({"x": x}, 1, spare_extremes=True)["x"]
    assert np.isnan(moved[0]) and moved[1] == np.inf and moved[2] == -big and moved[3] == big
    assert moved[4] != 3.0 and moved[5] == 0.0 and np.signbit(moved[5])
    assert np.isinf(moved_inputs({"x": x}, 1)["x"][3])  # unspared, the largest float overflows


def test_a_round_at_a_tie_is_ill_conditioned_and_the_verdict_is_neither() -> None:
    """0.5 * 7 = 3.5: Round gives 4 (to even), and 3 a few ulps below; TVM's 3 there says nothing."""
    model, x = _scaled("Round"), np.array([0.5, 0.3], np.float32)
    sided, note = onnx_reference_verdict(model, {"x": x}, [np.array([3.0, 2.0], np.float32)],
                                         [np.array([4.0, 2.0], np.float32)], TOLERANCES, output=0)
    assert sided == "neither" and "ill-conditioned" in note


def test_a_well_conditioned_output_keeps_the_reference_s_side() -> None:
    model, x = _scaled(None), np.array([0.5, 0.3], np.float32)
    assert onnx_reference_verdict(model, {"x": x}, [x * 7 + 5], [x * 7], TOLERANCES, output=0)[0] == "onnxruntime"


def test_only_the_differing_elements_are_asked() -> None:
    """The tie sits at element 0, where both engines agree; the difference at element 1 (2.1 rounds to 2
    whichever way it moves) is TVM's."""
    model, x = _scaled("Round"), np.array([0.5, 0.3], np.float32)
    assert onnx_reference_verdict(model, {"x": x}, [np.array([4.0, 7.0], np.float32)],
                                  [np.array([4.0, 2.0], np.float32)], TOLERANCES, output=0)[0] == "onnxruntime"


def test_tan_next_to_its_pole_is_ill_conditioned() -> None:
    x = {"x": np.array([np.float32(np.pi / 2) - np.float32(2e-6)], np.float32)}
    spec = np.tan(x["x"])
    assert ill_conditioned(lambda sign: np.tan(moved_inputs(x, sign)["x"]), spec, spec * 1.2, spec, TOLERANCES)
    far = {"x": np.array([0.3], np.float32)}
    near = np.tan(far["x"])
    assert not ill_conditioned(lambda sign: np.tan(moved_inputs(far, sign)["x"]), near, near + 1, near, TOLERANCES)


def test_a_failing_reference_or_another_shape_is_no_evidence() -> None:
    spec = np.array([1.0], np.float32)

    def broken(sign: int) -> np.ndarray:
        raise RuntimeError("the reference cannot run it")

    assert not ill_conditioned(broken, spec, spec + 1, spec, TOLERANCES)
    assert not ill_conditioned(lambda sign: np.array([1.0, 5.0], np.float32), spec, spec + 1, spec, TOLERANCES)
    assert not has_floating_input({"k": np.array([3], np.int64)})


def _round_of_a_constant() -> onnx.ModelProto:
    """``y = Round(x + c)`` with the constant ``c = 6.5001``: float16 rounds it to 6.5, a tie."""
    info = helper.make_tensor_value_info
    c = helper.make_tensor("c", TensorProto.FLOAT, [1], [6.5001])
    graph = helper.make_graph([helper.make_node("Add", ["x", "c"], ["s"]), helper.make_node("Round", ["s"], ["y"])],
                              "g", [info("x", TensorProto.FLOAT, [1])], [info("y", TensorProto.FLOAT, [1])], [c])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_moved_constants_scale_floating_initializers_and_constant_nodes_only() -> None:
    model = _round_of_a_constant()
    model.graph.initializer.append(helper.make_tensor("k", TensorProto.INT64, [1], [3]))
    model.graph.node.append(helper.make_node("Constant", [], ["z"], value=helper.make_tensor("v", TensorProto.FLOAT,
                                                                                              [1], [2.0])))
    moved = moved_constants(model, -1, LOSSY_PERTURBATION)
    values = {t.name: numpy_helper.to_array(t) for t in moved.graph.initializer}
    assert values["c"][0] == np.float32(6.5001 * (1 - LOSSY_PERTURBATION)) and values["k"][0] == 3
    assert numpy_helper.to_array(moved.graph.node[-1].attribute[0].t)[0] == np.float32(2.0 * (1 - LOSSY_PERTURBATION))
    assert numpy_helper.to_array(model.graph.initializer[0])[0] == np.float32(6.5001)  # the original untouched


def test_after_a_lossy_pass_a_round_of_a_constant_near_a_tie_is_ill_conditioned() -> None:
    """The study's audit (105906596216): ToMixedPrecision computes 6.5001 as 6.5 and Round gives 6, not 7."""
    model, feeds = _round_of_a_constant(), {"x": np.zeros(1, np.float32)}
    seven, six = [np.array([7.0], np.float32)], [np.array([6.0], np.float32)]
    assert ill_conditioned_for_lossy_pass(model, feeds, 0, six, seven, TOLERANCES)
    added = _round_of_a_constant()
    added.graph.node[1].op_type = "Identity"  # x + c: well-conditioned, a wrong value is the pass's
    assert not ill_conditioned_for_lossy_pass(added, feeds, 0, [np.array([5.5], np.float32)],
                                              [np.array([6.5001], np.float32)], TOLERANCES)
    assert not ill_conditioned_for_lossy_pass(model, feeds, 3, six, seven, TOLERANCES)  # no such output


def test_after_a_lossy_pass_a_round_of_a_sum_float16_holds_at_a_tie_is_ill_conditioned() -> None:
    """The a53 audit (04cd4a218a2b): ToMixedPrecision holds x*w + b = 4.50149 as the float16 4.5, and Round
    gives 4 where onnxruntime gives 5; moving inputs and constants by a float16 ulp does not show it."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])
    graph = helper.make_graph([helper.make_node("Mul", ["x", "w"], ["m"]), helper.make_node("Add", ["m", "b"], ["s"]),
                               helper.make_node("Round", ["s"], ["y"])], "g", [x], [y],
                              [helper.make_tensor("w", TensorProto.FLOAT, [1], [4.0]),
                               helper.make_tensor("b", TensorProto.FLOAT, [1], [0.50149])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    feeds = {"x": np.ones(1, np.float32)}
    five, four = [np.array([5.0], np.float32)], [np.array([4.0], np.float32)]
    assert ill_conditioned_for_lossy_pass(model, feeds, 0, four, five, TOLERANCES)
    rounded = rounded_to_half(model)
    assert [n.op_type for n in rounded.graph.node] == ["Mul", "Cast", "Cast", "Add", "Cast", "Cast", "Round", "Cast",
                                                       "Cast"]
    assert [n.op_type for n in model.graph.node] == ["Mul", "Add", "Round"]  # the original untouched
    far = onnx.ModelProto()
    far.CopyFrom(model)
    far.graph.initializer[1].CopyFrom(helper.make_tensor("b", TensorProto.FLOAT, [1], [0.3]))  # 4.3: far from a tie
    assert not ill_conditioned_for_lossy_pass(far, feeds, 0, five, four, TOLERANCES)
