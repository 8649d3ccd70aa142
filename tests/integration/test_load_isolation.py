"""Integration tests: loader crashes and hangs stay in their child; the ``seedzer load`` command."""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from pathlib import Path

import numpy as np
import onnx
import pytest
from click.testing import CliRunner
from onnx import TensorProto, helper, numpy_helper

from seedzer.commands.load import load_cmd
from seedzer.execute.isolated_load import OnnxLoader
from seedzer.kernel.common import Stage, Symptom
from seedzer.load.loader import AttemptResult, LoadOptions

pytestmark = pytest.mark.integration


def segfault_in_legalize(path: str, attempt: str, options: LoadOptions, workdir: str | None) -> AttemptResult:
    """An attempt that dies like a TVM pass crashing in its visitor, after checkpointing its case."""
    assert workdir is not None
    case = {"specs": [["x", "float32", [2, 2]]], "model_file": "model.onnx", "expected": None}
    partial = AttemptResult(attempt, reached=["parse", "import"], case=case)
    (Path(workdir) / "partial.json").write_text(json.dumps(partial.to_json()))
    (Path(workdir) / "step").write_text("legalize")
    os.kill(os.getpid(), signal.SIGSEGV)
    return partial


def hang_in_build(path: str, attempt: str, options: LoadOptions, workdir: str | None) -> AttemptResult:
    """An attempt that never finishes."""
    assert workdir is not None
    (Path(workdir) / "step").write_text("build")
    time.sleep(120)
    return AttemptResult(attempt)


def wait_to_be_killed(path: str, attempt: str, options: LoadOptions, workdir: str | None) -> AttemptResult:
    """An attempt that says where it is and waits to be SIGKILLed from outside (an operator, the OOM killer)."""
    assert workdir is not None
    (Path(workdir) / "step").write_text("import")
    Path(f"{path}.{attempt}.pid").write_text(str(os.getpid()))
    time.sleep(120)
    return AttemptResult(attempt)


def _model(path: Path) -> Path:
    w = numpy_helper.from_array(np.ones((2, 2), np.float32), "w")
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["m"]), helper.make_node("Tanh", ["m"], ["y"])],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 2])],
        [w],
    )
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8), path)
    return path


def test_segfault_becomes_a_crash_finding_for_both_attempts(tmp_path: Path) -> None:
    loader = OnnxLoader(LoadOptions(timeout=60), attempt_fn=segfault_in_legalize)
    result = loader.load(_model(tmp_path / "m.onnx"))
    assert result.attempts == ["raw", "folded"] and result.seeds == []
    for run, attempt in zip(result.runs, ("raw", "folded"), strict=True):
        (outcome,) = run.observations
        assert outcome.symptom is Symptom.CRASH and outcome.stage is Stage.LOAD and outcome.signal == signal.SIGSEGV
        assert "SIGSEGV" in outcome.message
        assert outcome.pass_name == "legalize" and run.attempt == attempt and run.died
        assert run.reached == ["parse", "import"]
    assert [f.attempt for f in result.failures()] == ["raw", "folded"]  # each with its checkpointed case


def test_hang_becomes_a_hang_finding(tmp_path: Path) -> None:
    loader = OnnxLoader(LoadOptions(timeout=2, fold=False), attempt_fn=hang_in_build)
    start = time.monotonic()
    result = loader.load(_model(tmp_path / "m.onnx"))
    assert time.monotonic() - start < 30
    (outcome,) = result.observations
    assert outcome.symptom is Symptom.HANG and outcome.pass_name == "build"


def test_an_attempt_killed_from_outside_is_a_killed_load_not_the_models_failure(tmp_path: Path) -> None:
    """Issue 55 row 5: the load is marked killed (a campaign loads the model again on --resume) and no
    folded attempt follows, since the raw one said nothing about the model."""
    model = _model(tmp_path / "m.onnx")
    pid_file = Path(f"{model}.raw.pid")

    def kill_when_it_runs() -> None:
        end = time.monotonic() + 60
        while not pid_file.exists() and time.monotonic() < end:
            time.sleep(0.05)
        os.kill(int(pid_file.read_text()), signal.SIGKILL)

    killer = threading.Thread(target=kill_when_it_runs)
    killer.start()
    result = OnnxLoader(LoadOptions(timeout=60), attempt_fn=wait_to_be_killed).load(model)
    killer.join()
    assert result.killed and result.attempts == ["raw"] and not result.seeds and not result.failures()
    (outcome,) = result.observations
    assert outcome.symptom is Symptom.INVALID and outcome.pass_name == "import" and "SIGKILL" in outcome.message


def test_load_command_on_a_pool_writes_seeds_and_report(tmp_path: Path) -> None:
    pool = tmp_path / "pool"
    pool.mkdir()
    _model(pool / "good.onnx")
    (pool / "broken.onnx").write_bytes(b"\x08\x07garbage")
    (pool / "manifest.json").write_text(json.dumps({"models": [{"file": "broken.onnx"}, {"file": "good.onnx"}]}))
    out = tmp_path / "out"
    run = CliRunner().invoke(load_cmd, [str(pool), "--out", str(out), "--jobs", "2", "--no-diff"])
    # the command refuses the broken model before loading (exit status 1) and loads the good one
    assert run.exit_code == 1, run.output
    assert run.output.index("broken.onnx") < run.output.index("good.onnx")
    report = json.loads((out / "load_report.json").read_text())
    assert report["models"] == 1 and report["counts"]["primfuncs"] == 1
    assert not report["differential"]
    lines = [json.loads(line) for line in (out / "seeds.jsonl").read_text().splitlines()]
    assert lines and all((out / e["file"]).read_text().startswith("# from tvm.script") for e in lines)
    assert {e["origin"] for e in lines} == {"good.onnx"}


def test_load_command_on_a_missing_path_fails_cleanly(tmp_path: Path) -> None:
    run = CliRunner().invoke(load_cmd, [str(tmp_path / "none.onnx")])
    assert run.exit_code != 0 and "none.onnx" in str(run.exception)
