"""Ill-conditioned outputs (seedzer.kernel.onnx.conditioning): a difference between TVM and onnxruntime at an
element that inputs moved a few ulps carry beyond the tolerance is no evidence against either engine (the
study's audit: ``Cos(Round(Conv))`` at a ``.5`` tie, ``Tan`` near its pole), and the reference verdict says
"neither" there; a well-conditioned output keeps its verdict."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper

from seedzer.kernel.onnx.conditioning import PERTURBATION, ill_conditioned, moved_inputs
from seedzer.kernel.onnx.model import TOLERANCES, onnx_reference_verdict


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

    def reference(feeds: dict[str, np.ndarray]) -> np.ndarray:
        return np.tan(feeds["x"])

    assert ill_conditioned(reference, x, spec, spec * 1.2, spec, TOLERANCES)
    far = {"x": np.array([0.3], np.float32)}
    assert not ill_conditioned(reference, far, np.tan(far["x"]), np.tan(far["x"]) + 1, np.tan(far["x"]), TOLERANCES)


def test_no_floating_input_no_evidence_and_a_failing_reference_is_no_evidence() -> None:
    ints = {"k": np.array([3], np.int64)}
    spec = np.array([1.0], np.float32)
    assert not ill_conditioned(lambda f: spec, ints, spec, spec + 1, spec, TOLERANCES)

    def broken(feeds: dict[str, np.ndarray]) -> np.ndarray:
        raise RuntimeError("the reference cannot run it")

    assert not ill_conditioned(broken, {"x": np.array([0.5], np.float32)}, spec, spec + 1, spec, TOLERANCES)
