"""Importing Seedzer keeps onnxruntime from writing under the user's home (issue 45 row 6: before,
every run left ``~/.cache/Microsoft/DeveloperTools/.onnxruntime/{deviceid,onnxruntime.db}``)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

RUN_A_MODEL = """
import numpy as np
from onnx import TensorProto, helper
from seedzer.kernel.onnx.runtime import onnxruntime_outputs
x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])
y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])
graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g", [x], [y])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
print(onnxruntime_outputs(model, {"x": np.ones(2, np.float32)})[0].tolist())
"""


def _run(code: str, home: Path) -> list[str]:
    """Run ``code`` in a fresh interpreter whose home is ``home`` (no telemetry setting inherited);
    every file it left under ``home``."""
    env = {k: v for k, v in os.environ.items() if k not in ("ORT_DISABLE_TELEMETRY", "XDG_CACHE_HOME")}
    env["HOME"] = str(home)
    subprocess.run([sys.executable, "-c", code], env=env, check=True, capture_output=True, timeout=120)
    return sorted(str(p.relative_to(home)) for p in home.rglob("*") if p.is_file())


def test_running_a_model_writes_nothing_under_home(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    assert _run(RUN_A_MODEL, tmp_path / "a") == []


@pytest.mark.ci_may_skip
def test_onnxruntime_alone_does_write_there(tmp_path: Path) -> None:
    """The control: what the package's setting prevents. Whether onnxruntime writes its device id
    depends on the machine (a CI sandbox's onnxruntime wrote nothing), so a machine where it does not
    skips the control; where it does, everything it writes is the telemetry store the setting stops."""
    (tmp_path / "b").mkdir()
    written = _run("import onnxruntime", tmp_path / "b")
    if not written:
        pytest.skip("onnxruntime writes nothing under home on this machine, with or without the setting")
    assert all(".onnxruntime" in name for name in written), written
