"""Loader triage with the real TVM 0.27 importer: reduce, reproduce standalone, resume."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import onnx
import pytest

from seedzer.load.loader import LoadOptions, OnnxLoader
from seedzer.oracles.signature import signature
from seedzer.outcome import Outcome
from seedzer.triage.loader_case import REDUCED, REPORT, STATE, LoaderTriageOptions, triage_loader
from seedzer.triage.loader_repro import render_loader_repro
from seedzer.triage.registry import TriageOptions, triager_for
from tests.triage_models import chain_model, prelu_scalar_model

# Runs repro.py with every seedzer import failing: the reproducer must not need the tool.
NO_SEEDZER = "import runpy, sys; sys.modules['seedzer'] = None; runpy.run_path('repro.py', run_name='__main__')"


def _loader_finding(tmp_path: Path, model: onnx.ModelProto) -> tuple[Path, Outcome]:
    """A campaign-style loader finding folder (as Campaign._report_loader files it) for ``model``."""
    path = tmp_path / "pool" / "model_000000.onnx"
    path.parent.mkdir()
    onnx.save(model, path)
    outcomes = [o for o in OnnxLoader(LoadOptions(differential=False)).load(path).outcomes if o.symptom.is_bug]
    assert outcomes, "the model must fail to load"
    outcome = outcomes[0]
    folder = tmp_path / "findings" / signature(outcome)
    folder.mkdir(parents=True)
    meta = {"model": str(path), "kind": "loader", "signature": signature(outcome), "outcome": outcome.to_dict()}
    (folder / "meta.json").write_text(json.dumps(meta))
    (folder / "log.txt").write_text(outcome.message)
    return folder, outcome


def _run_clean(folder: Path) -> subprocess.CompletedProcess[str]:
    """Run ``folder/repro.py`` in a fresh interpreter where importing seedzer fails."""
    return subprocess.run([sys.executable, "-I", "-c", NO_SEEDZER], cwd=folder, capture_output=True, text=True,
                          timeout=300)


@pytest.mark.slow
def test_scalar_prelu_finding_reduces_to_its_trigger_and_reproduces_standalone(tmp_path: Path) -> None:
    folder, outcome = _loader_finding(tmp_path, prelu_scalar_model())
    assert "axis -1 is out of range" in outcome.message and outcome.detail["step"] == "import"

    got = triager_for("loader")(folder, json.loads((folder / "meta.json").read_text()), TriageOptions(minutes=4))
    assert (got.status, got.size_before, got.size_after, got.unit, got.note) == ("reduced", 9, 1, "nodes",
                                                                                 "trigger: PRelu")
    res = json.loads((folder / STATE).read_text())
    assert res["reproduced"] and res["complete"] and res["verified"] and res["repro_exit"] == 1
    reduced = onnx.load(folder / REDUCED)
    assert [n.op_type for n in reduced.graph.node] == ["PRelu"]
    assert [len(i.type.tensor_type.shape.dim) for i in reduced.graph.input] == [0]  # the rank-0 data input
    onnx.checker.check_model(reduced, full_check=True)
    assert reduced.ir_version <= 10

    for where in (folder / "reduced", folder):  # the reduced and the original model's reproducers
        clean = _run_clean(where)
        assert clean.returncode == 1, clean.stdout + clean.stderr
        assert "BUG REPRODUCED" in clean.stdout and "axis -1 is out of range" in clean.stdout
    report = (folder / REPORT).read_text()
    assert report.startswith("# [Bug][Relax][Frontend][ONNX] PRelu:") and "from\n9 to 1 node(s)" in report

    # resuming a finished reduction does no reduction work: one confirming load only
    state = json.loads((folder / STATE).read_text())
    again = triage_loader(folder, LoaderTriageOptions(seconds=240, timeout=60, verify=False))
    assert again.nodes == 1 and again.evaluations == state["evaluations"]


@pytest.mark.slow
def test_an_interrupted_reduction_resumes_from_its_best_model(tmp_path: Path) -> None:
    folder, _ = _loader_finding(tmp_path, prelu_scalar_model())
    first = triage_loader(folder, LoaderTriageOptions(seconds=0.0, timeout=60, verify=False))
    assert first.reproduced and not first.complete and first.nodes == 9  # the deadline came at once
    second = triage_loader(folder, LoaderTriageOptions(seconds=240, timeout=60, verify=False))
    assert second.complete and second.nodes == 1 and second.evaluations > first.evaluations


def test_repro_exits_zero_when_the_model_loads_and_agrees(tmp_path: Path) -> None:
    folder, outcome = tmp_path / "ok", Outcome.from_dict(
        {"symptom": "exception", "stage": "load", "message": "ValueError: x", "detail": {"step": "import"}})
    folder.mkdir()
    (folder / "repro.py").write_text(render_loader_repro(chain_model(), outcome, "fixed").script)
    clean = _run_clean(folder)
    assert clean.returncode == 0, clean.stdout + clean.stderr
    assert "outputs agree" in clean.stdout and "step compare" in clean.stdout
