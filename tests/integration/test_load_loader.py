"""Integration tests of the ONNX loader on tiny models: real TVM, onnxruntime and isolation."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from seedzer.commands.load_output import write_findings
from seedzer.execute.isolated_load import OnnxLoader
from seedzer.kernel.common import MODEL_VS_ONNXRUNTIME, Stage, Symptom
from seedzer.kernel.load import observe as kernel
from seedzer.kernel.onnx import model as plumbing
from seedzer.load.loader import LoadOptions, ModelLoad

pytestmark = pytest.mark.integration


def _save(path: Path, nodes: Sequence[onnx.NodeProto], inputs: Sequence[onnx.ValueInfoProto],
          outputs: Sequence[onnx.ValueInfoProto], inits: Sequence[onnx.TensorProto] = (), opset: int = 17) -> Path:
    graph = helper.make_graph(list(nodes), "g", list(inputs), list(outputs), list(inits))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=8)
    onnx.checker.check_model(model)
    onnx.save(model, path)
    return path


def _vi(name: str, shape: Sequence[int | str], dtype: int = TensorProto.FLOAT) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, dtype, shape)


def small_model(path: Path, shape: tuple[int, ...] = (2, 3)) -> Path:
    """y = relu(x + w) * 2, z = relu(x): two outputs, a fusable chain, a repeated op."""
    w = numpy_helper.from_array(np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3), "w")
    two = numpy_helper.from_array(np.array(2.0, np.float32), "two")
    nodes = [
        helper.make_node("Add", ["x", "w"], ["s"]),
        helper.make_node("Relu", ["s"], ["r"]),
        helper.make_node("Mul", ["r", "two"], ["y"]),
        helper.make_node("Relu", ["x"], ["z"]),
    ]
    return _save(path, nodes, [_vi("x", list(shape))], [_vi("y", [2, 3]), _vi("z", [2, 3])], [w, two])


def pad_chain_model(path: Path) -> Path:
    """Pad amounts from a constant chain (as torch exports F.pad): TVM rejects it, folding fixes it."""

    def const(name: str, value: Any) -> onnx.NodeProto:
        return helper.make_node("Constant", [], [name], value=numpy_helper.from_array(np.asarray(value), name + "_v"))

    nodes = [
        const("p", np.array([1, 2, 0, 0], np.int64)),
        const("shape2", np.array([-1, 2], np.int64)),
        helper.make_node("Reshape", ["p", "shape2"], ["p2"]),
        const("st", np.array([-1], np.int64)),
        const("en", np.array([-(2**62)], np.int64)),
        const("ax", np.array([0], np.int64)),
        const("sp", np.array([-1], np.int64)),
        helper.make_node("Slice", ["p2", "st", "en", "ax", "sp"], ["p3"]),
        helper.make_node("Transpose", ["p3"], ["p4"], perm=[1, 0]),
        const("flat", np.array([-1], np.int64)),
        helper.make_node("Reshape", ["p4", "flat"], ["p5"]),
        helper.make_node("Cast", ["p5"], ["pads"], to=TensorProto.INT64),
        helper.make_node("Pad", ["x", "pads"], ["y"], mode="constant"),
    ]
    return _save(path, nodes, [_vi("x", [2, 3])], [_vi("y", [2, 6])])


@pytest.fixture(scope="module")
def loader() -> OnnxLoader:
    return OnnxLoader(LoadOptions(timeout=120))


def test_good_model_gives_op_and_fused_seeds_and_matches(tmp_path: Path, loader: OnnxLoader) -> None:
    from seedzer.tvmio import parse_primfunc

    result = loader.load(small_model(tmp_path / "small.onnx"))
    assert isinstance(result, ModelLoad)
    assert result.observations == [] and result.attempts == ["raw"] and not result.folded
    assert result.matched is True and result.reference == "onnxruntime"
    assert result.final_reached()[-1] == "compare"
    scripts = [s.seed.script for s in result.seeds]
    assert len(scripts) == len(set(scripts))
    assert any(s.fused for s in result.seeds) and any(not s.fused for s in result.seeds)
    assert {"add", "relu", "multiply"} <= {s.op for s in result.seeds if not s.fused}
    for s in result.seeds:
        assert s.seed.passes == [] and s.seed.origin == "small.onnx"
        assert parse_primfunc(s.seed.script).attrs["global_symbol"] == "main"
    assert set(result.timings) >= {"parse", "import", "legalize", "fuse", "build", "run", "reference", "compare"}


def test_constant_pad_chain_fails_raw_and_loads_after_folding(tmp_path: Path, loader: OnnxLoader) -> None:
    result = loader.load(pad_chain_model(tmp_path / "pad.onnx"))
    assert result.attempts == ["raw", "folded"] and result.folded and result.seeds
    (raw_failure,) = result.observations
    # "Dynamic pads are not supported yet": the importer's documented limitation, invalid (never a bug)
    assert raw_failure.symptom is Symptom.INVALID and raw_failure.stage is Stage.LOAD
    assert raw_failure.pass_name == "import" and raw_failure in result.runs[0].observations
    assert "pads" in raw_failure.message.lower()
    assert result.folded_nodes > 0 and result.matched is True
    assert result.reached["raw"] == ["parse"]


def test_unsupported_op_is_classified_invalid(tmp_path: Path, loader: OnnxLoader) -> None:
    path = _save(tmp_path / "celu.onnx", [helper.make_node("Celu", ["x"], ["y"])], [_vi("x", [4])], [_vi("y", [4])])
    result = loader.load(path)
    (outcome,) = result.observations
    assert outcome.symptom is Symptom.INVALID and outcome.pass_name == "import"
    assert "Celu" in outcome.message
    assert result.seeds == [] and result.attempts == ["raw"]  # nothing to fold: no second attempt


def test_truncated_model_is_invalid_with_a_one_line_message(tmp_path: Path, loader: OnnxLoader) -> None:
    good = small_model(tmp_path / "full.onnx").read_bytes()
    path = tmp_path / "cut.onnx"
    path.write_bytes(good[: len(good) // 3])
    result = loader.load(path)
    (outcome,) = result.observations
    assert outcome.symptom is Symptom.INVALID and outcome.pass_name == "parse"
    assert "cut.onnx" in outcome.message and "\n" not in outcome.message
    assert result.attempts == ["raw"] and result.seeds == []


def test_symbolic_dims_are_bound_to_one(tmp_path: Path, loader: OnnxLoader) -> None:
    path = _save(
        tmp_path / "dyn.onnx", [helper.make_node("Sigmoid", ["x"], ["y"])], [_vi("x", ["N", 3])], [_vi("y", ["N", 3])]
    )
    result = loader.load(path)
    assert result.bound_dims == {"x": [1, 3]}
    assert result.observations == [] and result.matched is True and result.seeds
    assert "T.Buffer((T.int64(1), T.int64(3))" in result.seeds[0].seed.script


def test_reference_npz_supplies_inputs_and_dims(tmp_path: Path, loader: OnnxLoader) -> None:
    path = _save(
        tmp_path / "dyn.onnx", [helper.make_node("Exp", ["x"], ["y"])], [_vi("x", ["N", 3])], [_vi("y", ["N", 3])]
    )
    x = np.full((4, 3), 0.5, np.float32)
    np.savez(tmp_path / "dyn.npz", **{"input:x": x, "output:y": np.exp(x)})  # type: ignore[arg-type]
    result = loader.load(path)
    assert result.bound_dims == {"x": [4, 3]} and result.matched is True


def test_onnxruntime_failure_falls_back_to_onnx_reference(tmp_path: Path, loader: OnnxLoader) -> None:
    # onnxruntime has no float64 Atan kernel; onnx.reference and TVM both do.
    path = _save(
        tmp_path / "atan.onnx",
        [helper.make_node("Atan", ["x"], ["y"])],
        [_vi("x", [5], TensorProto.DOUBLE)],
        [_vi("y", [5], TensorProto.DOUBLE)],
    )
    result = loader.load(path)
    (outcome,) = result.observations
    assert outcome.symptom is Symptom.INVALID and outcome.pass_name == "reference"
    assert "onnxruntime" in outcome.message and outcome.message.endswith("the reference is onnx.reference")
    assert result.reference == "onnx.reference" and result.matched is True


def test_no_diff_stops_after_lowering(tmp_path: Path) -> None:
    result = OnnxLoader(LoadOptions(differential=False, timeout=120)).load(small_model(tmp_path / "s.onnx"))
    assert result.seeds and result.matched is None
    assert "build" not in result.final_reached() and "fuse" in result.final_reached()


def _skew(monkeypatch: pytest.MonkeyPatch, spec_too: bool = True) -> None:
    """onnxruntime's first output off by one, and (``spec_too``) ONNX's reference implementation's, the
    tie-breaker, likewise: TVM then disagrees with both (the ONNX plumbing looks the engines up when it runs)."""
    for name in ("onnxruntime_outputs", "onnx_reference_outputs") if spec_too else ("onnxruntime_outputs",):
        real = getattr(plumbing, name)

        def skewed(model: onnx.ModelProto, feeds: dict[str, np.ndarray], real: Any = real) -> list[np.ndarray]:
            outs = real(model, feeds)
            return [outs[0] + np.float32(1.0), *outs[1:]]

        monkeypatch.setattr(plumbing, name, skewed)


def test_onnxruntime_alone_disagreeing_with_tvm_and_the_onnx_reference_is_no_finding(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _skew(monkeypatch, spec_too=False)
    result = OnnxLoader(LoadOptions(), isolate=False).load(small_model(tmp_path / "small.onnx"))
    (outcome,) = result.observations
    assert outcome.symptom is Symptom.INVALID and outcome.stage is Stage.COMPARE
    assert outcome.message.startswith("onnxruntime departs from the ONNX reference implementation, which agrees "
                                      "with TVM: output 0 'y': 6/6 elements differ")


def test_mismatch_observation_and_reproducer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _skew(monkeypatch)
    path = small_model(tmp_path / "small.onnx")
    result = OnnxLoader(LoadOptions(), isolate=False).load(path)
    (outcome,) = result.observations
    assert outcome.symptom is Symptom.MISMATCH and outcome.stage is Stage.COMPARE and outcome.pass_name == "compare"
    assert outcome.comparison == MODEL_VS_ONNXRUNTIME  # deterministic: a rerun gave the same outputs
    assert outcome.message.startswith("output 0 'y': 6/6 elements differ (values, rtol=0.01, atol=0.001)")
    assert outcome.message.endswith("; the ONNX reference implementation agrees with onnxruntime")
    assert outcome.difference is not None and outcome.difference.max_abs_err == pytest.approx(1.0)
    assert result.matched is False and result.seeds
    (folder,) = write_findings(tmp_path / "out", [result])
    # The reproducer uses the real onnxruntime, so against the unskewed reference the outputs agree.
    run = subprocess.run([sys.executable, "repro.py"], cwd=folder, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "the outputs agree with onnxruntime" in run.stdout


def test_the_kernel_exits_one_while_outputs_disagree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    model = small_model(tmp_path / "model.onnx").read_bytes()
    case = kernel.LoadCase((("x", "float32", (2, 3)),)).with_model(model)
    assert kernel.main(case.to_json()) == 0  # no failure expected, none seen: the bug is gone
    _skew(monkeypatch)
    (mismatch,) = kernel.observe_all(case)
    assert mismatch.symptom is Symptom.MISMATCH
    expecting = {**case.to_json(), "expected": mismatch.to_json()}
    assert kernel.main(expecting) == 1
    monkeypatch.undo()
    assert kernel.main(expecting) == 0


def test_stored_outputs_are_the_last_resort_reference(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
        raise RuntimeError("engine down")

    monkeypatch.setattr(plumbing, "onnxruntime_outputs", broken)
    monkeypatch.setattr(plumbing, "onnx_reference_outputs", broken)
    path = small_model(tmp_path / "m.onnx")
    x = np.full((2, 3), 0.5, np.float32)
    w = np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)
    right = {"input:x": x, "output:y": np.maximum(x + w, 0) * 2, "output:z": np.maximum(x, 0)}
    skewed = {**right, "output:z": right["output:z"] + 1}
    np.savez(tmp_path / "m.npz", **skewed)  # type: ignore[arg-type]
    bad = OnnxLoader(LoadOptions(), isolate=False).load(path)
    assert bad.reference == "stored" and bad.matched is False
    assert [o.symptom for o in bad.observations] == [Symptom.INVALID, Symptom.MISMATCH]  # the fallback note
    assert bad.observations[1].message.startswith("output 1 'z':")
    np.savez(tmp_path / "m.npz", **right)  # type: ignore[arg-type]
    good = OnnxLoader(LoadOptions(), isolate=False).load(path)
    assert good.reference == "stored" and good.matched is True


def test_no_working_reference_is_invalid(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
        raise RuntimeError("engine down")

    monkeypatch.setattr(plumbing, "onnxruntime_outputs", broken)
    monkeypatch.setattr(plumbing, "onnx_reference_outputs", broken)
    result = OnnxLoader(LoadOptions(), isolate=False).load(small_model(tmp_path / "s.onnx"))
    messages = [o.message for o in result.observations]
    assert all(o.symptom is Symptom.INVALID for o in result.observations)
    assert any(m.startswith("no reference could run the model") for m in messages)
    assert result.matched is None and result.seeds and result.failures() == []


def test_the_seeds_are_the_kernels_round_tripped_scripts(tmp_path: Path) -> None:
    seen: list[tuple[str, bool, list[tuple[str, str]]]] = []
    case = kernel.LoadCase((("x", "float32", (2, 3)),), differential=False).with_model(
        small_model(tmp_path / "m.onnx").read_bytes())
    assert kernel.observe_all(case, lambda step, fused, scripts: seen.append((step, fused, scripts))) == []
    result = OnnxLoader(LoadOptions(differential=False), isolate=False).load(tmp_path / "m.onnx")
    assert [(step, fused) for step, fused, _ in seen] == [("legalize", False), ("fuse", True)]
    assert [s.seed.script for s in result.seeds] == [script for _, _, scripts in seen for _, script in scripts]
