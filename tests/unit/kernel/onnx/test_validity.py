"""The one validity check (seedzer.kernel.onnx.validity): onnx.checker, onnxruntime, onnx.reference (TVM-free)."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from seedzer.kernel.onnx.validity import EngineCrash, changed_nodes, isolated, model_validity

X = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 4, 4])
FEEDS = {"x": np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)}


def _model(nodes: list[onnx.NodeProto], out: list[int], inits: list[onnx.TensorProto] | None = None,
           opset: int = 13, domains: tuple[tuple[str, int], ...] = ()) -> onnx.ModelProto:
    graph = helper.make_graph(nodes, "g", [X], [helper.make_tensor_value_info("y", TensorProto.FLOAT, out)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)] +
                              [helper.make_opsetid(d, v) for d, v in domains])
    model.ir_version = 8
    return model


def test_a_valid_model_gives_onnxruntimes_outputs() -> None:
    model = _model([helper.make_node("Relu", ["x"], ["y"])], [1, 1, 4, 4])
    verdict = model_validity(model, FEEDS, ["y"])
    assert verdict.valid and verdict.refusal is None
    np.testing.assert_array_equal(verdict.outputs[0], FEEDS["x"])


def test_the_checker_refuses_an_unknown_attribute() -> None:
    model = _model([helper.make_node("Relu", ["x"], ["y"], no_such=1)], [1, 1, 4, 4])
    verdict = model_validity(model, FEEDS)
    assert verdict.refusal is not None and verdict.refusal.startswith("onnx.checker refuses the model")
    assert "\n" not in verdict.refusal and verdict.outputs is None


def test_onnxruntime_refuses_a_float_mod_without_fmod() -> None:
    model = _model([helper.make_node("Mod", ["x", "x"], ["y"], fmod=0)], [1, 1, 4, 4])
    verdict = model_validity(model, FEEDS)
    assert verdict.refusal is not None and verdict.refusal.startswith("onnxruntime refuses the model")


def test_the_reference_refuses_a_crop_and_resize_without_its_roi() -> None:
    """The audit's one false alarm: onnx.checker passes, onnxruntime guesses, the reference refuses."""
    scales = numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "scales")
    resize = helper.make_node("Resize", ["x", "", "scales"], ["y"], mode="linear",
                              coordinate_transformation_mode="tf_crop_and_resize")
    model = _model([resize], [1, 1, 8, 8], [scales])
    onnx.checker.check_model(model, full_check=True)
    verdict = model_validity(model, FEEDS, changed_nodes(_model([], [1, 1, 4, 4]), model))
    assert verdict.refusal == "onnx.reference refuses the model (Resize): ValueError: roi cannot be None."


def test_the_reference_checks_only_the_changed_nodes_on_onnxruntimes_values() -> None:
    base = _model([helper.make_node("Relu", ["x"], ["r"]), helper.make_node("Neg", ["r"], ["y"])], [1, 1, 4, 4])
    mutated = _model([helper.make_node("Relu", ["x"], ["r"]), helper.make_node("Abs", ["r"], ["y"])], [1, 1, 4, 4])
    assert changed_nodes(base, mutated) == ["y"]
    assert model_validity(mutated, FEEDS, changed_nodes(base, mutated)).valid


def test_an_operator_the_reference_does_not_implement_is_no_refusal() -> None:
    gelu = helper.make_node("FastGelu", ["x"], ["y"], domain="com.microsoft")
    model = _model([gelu], [1, 1, 4, 4], domains=(("com.microsoft", 1),))
    assert model_validity(model, FEEDS, ["y"]).valid


def test_a_pad_the_reference_cannot_run_is_left_out_not_a_refusal() -> None:
    """numpy's pad refuses negative pads, which the specification allows (they crop): that Pad is
    left out of the reference's run (its pads computed, as NNSmith exports them), the rest still runs."""
    pads = numpy_helper.from_array(np.array([0, 0, 1, 1, 0, 0, 1, 1], np.int64), "p")
    nodes = [helper.make_node("Neg", ["p"], ["negp"]), helper.make_node("Pad", ["x", "negp"], ["c"]),
             helper.make_node("Relu", ["c"], ["y"])]
    model = _model(nodes, [1, 1, 2, 2], [pads])
    verdict = model_validity(model, FEEDS)
    assert verdict.valid and verdict.outputs is not None
    np.testing.assert_array_equal(verdict.outputs[0], FEEDS["x"][:, :, 1:3, 1:3])
    scales = numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "scales")
    nodes[2] = helper.make_node("Resize", ["c", "", "scales"], ["y"], mode="linear",
                                coordinate_transformation_mode="tf_crop_and_resize")
    refused = model_validity(_model(nodes, [1, 1, 4, 4], [pads, scales]), FEEDS)
    assert refused.refusal == "onnx.reference refuses the model: ValueError: roi cannot be None."


def _die() -> None:
    os.kill(os.getpid(), signal.SIGSEGV)


def test_a_function_operator_whose_constant_inputs_stay_constants_passes_the_whole_model_check() -> None:
    # GroupNormalization-21 after another node, its scale and bias Constant nodes: the reference refused
    # the whole-model check ("Mismatch lengths between the number of inputs 3 and the expected number
    # of inputs 0") when the constants were made graph inputs of the model it runs (2 of 1,000 models).
    consts = [helper.make_node("Constant", [], [name], value=numpy_helper.from_array(np.full(1, v, np.float32)))
              for name, v in (("s", 1.0), ("b", 0.0))]
    nodes = [*consts, helper.make_node("Relu", ["x"], ["r"]),
             helper.make_node("GroupNormalization", ["r", "s", "b"], ["y"], num_groups=1)]
    model = _model(nodes, [1, 1, 4, 4], opset=21)
    model.ir_version = 10
    assert model_validity(model, FEEDS).refusal is None
    assert model_validity(model, FEEDS, ["y"]).refusal is None


def test_an_engine_that_crashes_in_its_child_is_reported_not_fatal() -> None:
    with pytest.raises(EngineCrash, match="signal 11"):
        isolated(_die)
    assert isolated(sum, [1, 2]) == 3
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        isolated(divmod, 1, 0)


def _note_pid_and_hang(path: str) -> None:
    """An engine run that never ends: note this child's pid in ``path``, then sleep."""
    Path(path).write_text(str(os.getpid()))
    time.sleep(120)


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie waiting to be reaped does not)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, IndexError):
        return False
    return state != "Z"


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="Linux's parent-death signal")
def test_an_engine_child_dies_with_the_caller_that_would_have_stopped_it(tmp_path: Path) -> None:
    noted = tmp_path / "pid"
    caller = os.fork()
    if caller == 0:  # a worker running an engine in a child of its own, then killed (a campaign's end)
        try:
            isolated(_note_pid_and_hang, str(noted), timeout=100.0)
        finally:
            os._exit(0)
    deadline = time.monotonic() + 30
    while not noted.exists() or not noted.read_text():
        assert time.monotonic() < deadline, "the engine child never started"
        time.sleep(0.05)
    engine = int(noted.read_text())
    os.kill(caller, signal.SIGKILL)
    os.waitpid(caller, 0)
    deadline = time.monotonic() + 10
    while _alive(engine) and time.monotonic() < deadline:
        time.sleep(0.05)
    if _alive(engine):  # the test's own cleanup before it fails
        os.kill(engine, signal.SIGKILL)
    assert not _alive(engine), "the engine child outlived the caller that was to stop it"


def test_verdicts_are_remembered_and_isolated_checks_agree() -> None:
    model = _model([helper.make_node("Sigmoid", ["x"], ["y"])], [1, 1, 4, 4])
    first = model_validity(model, FEEDS, isolate=True)
    assert first.valid and model_validity(model, FEEDS, isolate=True) is first
    np.testing.assert_allclose(first.outputs[0], 1 / (1 + np.exp(-FEEDS["x"])), rtol=1e-6)


def _prelu(x_shape: list[int], slope_shape: list[int]) -> onnx.ModelProto:
    """PRelu of an input of ``x_shape`` with a constant slope of ``slope_shape`` (output typed as X)."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)
    slope = numpy_helper.from_array(np.full(slope_shape, 0.25, np.float32), "s")
    graph = helper.make_graph([helper.make_node("PRelu", ["x", "s"], ["y"], name="p")], "g", [x],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, x_shape)], [slope])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 16)])
    model.ir_version = 8
    return model


def test_a_slope_not_unidirectionally_broadcastable_to_its_input_is_refused_by_the_specification() -> None:
    """Issue 53 (false-alarm class 2): a ``[1]``-shaped PRelu slope on a 0-d input passes onnx.checker's
    full check, onnxruntime and onnx.reference run it (both broadcast both ways, to shape [1]); the
    specification requires the slope to broadcast to X one way only. Before: valid. After: refused."""
    model, feeds = _prelu([], [1]), {"x": np.array(-2.0, np.float32)}
    onnx.checker.check_model(model, full_check=True)  # what the check alone said
    verdict = model_validity(model, feeds)
    assert verdict.refusal == ("the specification refuses the model: PRelu 'p' has input 1 of shape [1], not "
                               "unidirectionally broadcastable to []")
    for x_shape, slope_shape in (([], []), ([3, 4], [1]), ([3, 4], [4]), ([2, 3, 4], [3, 1]), ([5], [])):
        assert model_validity(_prelu(x_shape, slope_shape), {"x": np.ones(x_shape, np.float32)}).valid, slope_shape
    assert not model_validity(_prelu([3, 4], [3]), {"x": np.ones((3, 4), np.float32)}).valid


def test_gemm_s_c_must_broadcast_to_the_product_one_way() -> None:
    from seedzer.kernel.onnx.validity import specification_refusal, unidirectional

    a = helper.make_tensor_value_info("a", TensorProto.FLOAT, [4, 2])
    for c_shape, refused in (([3], False), ([1, 3], False), ([4, 3], False), ([2, 4, 3], True), ([4], True)):
        inits = [numpy_helper.from_array(np.ones((3, 2), np.float32), "b"),
                 numpy_helper.from_array(np.ones(c_shape, np.float32), "c")]
        graph = helper.make_graph([helper.make_node("Gemm", ["a", "b", "c"], ["y"], transB=1)], "g", [a],
                                  [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 3])], inits)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
        assert (specification_refusal(model) is not None) is refused, c_shape
    assert unidirectional((1, -1), (4, 3)) and not unidirectional((2,), (4, 3))
