"""Loader findings with the real TVM 0.27 importer: filed, reproduced standalone, gated, reduced, resumed.

A finding filed through the one path (:meth:`seedzer.finding.load.folder.LoadFinding.of`) gets the
same verdict from its ``repro.py`` (a clean interpreter that cannot import Seedzer), from the
loader gate and from the reducer's check.
"""

from __future__ import annotations

import json
import os
import pickle
import signal
import subprocess
import sys
import time
from pathlib import Path

import onnx
import pytest

from seedzer.execute.forked import SharedProgress
from seedzer.execute.isolated_load import OnnxLoader
from seedzer.finding.kind import TriageOptions
from seedzer.finding.load import check as loader_check
from seedzer.finding.load.folder import LoadFinding, base_case, repro_text
from seedzer.finding.load.gate import LoadGateJob, run_load_gate, run_load_gate_on_folder
from seedzer.finding.load.reduce import LoadPredicate
from seedzer.finding.load.triage import REDUCED, REPORT, STATE, LoadTriageOptions, triage_load
from seedzer.finding.meta import BUG, FindingMeta
from seedzer.finding.registry import kind
from seedzer.finding.store import dump
from seedzer.kernel.common import Observation, Symptom
from seedzer.load.loader import LoadOptions
from seedzer.oracles.signature import component_key
from tests.triage_models import chain_model, prelu_rank0_model, prelu_scalar_model

pytestmark = pytest.mark.integration

# Runs repro.py with every seedzer import failing: the reproducer must not need the tool.
NO_SEEDZER = "import runpy, sys; sys.modules['seedzer'] = None; runpy.run_path('repro.py', run_name='__main__')"


def _run_clean(folder: Path) -> subprocess.CompletedProcess[str]:
    """Run ``folder/repro.py`` in a fresh isolated interpreter where importing seedzer fails."""
    return subprocess.run([sys.executable, "-I", "-c", NO_SEEDZER], cwd=folder, capture_output=True, text=True,
                          timeout=300, env={"PYTHONPATH": str(folder)})


def _file(tmp_path: Path, model: onnx.ModelProto) -> tuple[Path, Observation]:
    """Load ``model`` as a campaign does and file its first bug through the one loader-finding path."""
    path = tmp_path / "pool" / "model_000000.onnx"
    path.parent.mkdir()
    onnx.save(model, path)
    failures = OnnxLoader(LoadOptions(timeout=120)).load(path).failures()
    assert failures, "the model must fail to load"
    finding = LoadFinding.of(path, failures[0])
    return dump(tmp_path / "findings" / finding.signature, finding), failures[0].observation


def test_a_rank0_prelu_finding_gets_one_verdict_from_repro_gate_and_reducer(tmp_path: Path) -> None:
    folder, obs = _file(tmp_path, prelu_rank0_model())
    assert obs.symptom is Symptom.EXCEPTION and obs.pass_name == "import"
    assert "axis -1 is out of range" in obs.message
    meta = FindingMeta.load(folder)
    assert meta.kind == "load" and meta.model == "model.onnx" and meta.signature == folder.name
    assert {p.name for p in folder.iterdir()} >= {"meta.json", "model.onnx", "case.json", "repro.py", "log.txt"}

    clean = _run_clean(folder)  # repro.py: the bug is present
    assert clean.returncode == 1, clean.stdout + clean.stderr
    assert "reproduced: the bug is present" in clean.stdout and "axis -1 is out of range" in clean.stdout

    verdict = run_load_gate_on_folder(str(folder))  # the gate: a bug, in PRelu's converter
    assert verdict.verdict == BUG and verdict.culprit == ["relax.frontend.onnx.PRelu._impl_v1"], verdict.reason
    assert verdict.root == component_key(obs, "relax.frontend.onnx.PRelu._impl_v1").digest()
    # The verdict is sent to the campaign process, which never imports TVM: unpickling it must not.
    unpickle = ("import pickle, sys; pickle.loads(sys.stdin.buffer.read()); "
                "print(sorted(m for m in sys.modules if m.split('.')[0] in ('tvm', 'onnx', 'onnxruntime')))")
    got = subprocess.run([sys.executable, "-c", unpickle], input=pickle.dumps(verdict), capture_output=True,
                         timeout=120, check=True)
    assert got.stdout.decode().strip() == "[]", got.stdout.decode()

    found = LoadFinding.load(folder)  # the reducer's check: the same failure
    pred = LoadPredicate(found.observation, base_case(found, 60.0))
    assert pred(onnx.load(folder / "model.onnx")) and pred.last_match is not None
    assert pred.last_match.to_json() == verdict.observation.to_json()
    assert not pred(chain_model())

    got = kind("loader").triage(folder, FindingMeta.load(folder), TriageOptions(minutes=4))
    assert (got.status, got.size_before, got.size_after, got.note) == ("reduced", 2, 1, "trigger: PRelu")
    state = json.loads((folder / STATE).read_text())
    assert state["verified"] and state["repro_exit"] == 1
    clean = _run_clean(folder / "reduced")
    assert clean.returncode == 1 and "reproduced: the bug is present" in clean.stdout


def test_a_fixed_bug_is_not_a_bug_for_the_gate(tmp_path: Path) -> None:
    folder, _ = _file(tmp_path, prelu_rank0_model())
    (folder / "model.onnx").write_bytes(chain_model().SerializeToString())  # as if TVM had fixed the importer
    case = json.loads((folder / "case.json").read_text())
    case["specs"] = [["x", "float32", [2, 3]]]
    (folder / "case.json").write_text(json.dumps(case))
    verdict = run_load_gate_on_folder(str(folder))
    assert verdict.verdict == "not-a-bug" and verdict.reason.startswith("not-reproduced: run alone it gives every "
                                                                         "step passes")


def _older_finding(tmp_path: Path, model: onnx.ModelProto) -> tuple[Path, Observation]:
    """A loader finding as the previous Seedzer filed it: an ``outcome`` and the pool model's path."""
    path = tmp_path / "pool" / "model_000000.onnx"
    path.parent.mkdir()
    onnx.save(model, path)
    bugs = [o for o in OnnxLoader(LoadOptions(differential=False)).load(path).observations if o.symptom.is_bug]
    obs = bugs[0]
    first_line = obs.message.splitlines()[0]
    outcome = {"symptom": obs.symptom.value, "stage": "load", "pass_name": None, "message": first_line,
               "detail": {"substage": "import", "step": obs.pass_name, "attempt": "raw"}}
    folder = tmp_path / "findings" / "0123456789ab"
    folder.mkdir(parents=True)
    (folder / "meta.json").write_text(json.dumps({"model": str(path), "kind": "loader", "signature": folder.name,
                                                  "outcome": outcome}))
    (folder / "log.txt").write_text(first_line)
    return folder, obs


@pytest.mark.slow
def test_an_older_scalar_prelu_finding_reduces_to_its_trigger_and_reproduces_standalone(tmp_path: Path) -> None:
    folder, obs = _older_finding(tmp_path, prelu_scalar_model())
    assert "axis -1 is out of range" in obs.message and obs.pass_name == "import"

    got = kind("loader").triage(folder, FindingMeta.load(folder), TriageOptions(minutes=4))
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
        assert "reproduced: the bug is present" in clean.stdout and "axis -1 is out of range" in clean.stdout
    report = (folder / REPORT).read_text()
    assert report.startswith("# [Bug][Frontend][ONNX] relax.frontend.onnx (PRelu):")
    assert "from\n9 to 1 node(s)" in report
    assert "| Pass | Calls | Successes | Size removed |" in report  # the reducer's pass table
    assert "| `ddmin-nodes` | 1 | 3 | 8 nodes" in report and "| `subgraphs` |" in report

    # resuming a finished reduction does no reduction work: one confirming load only
    state = json.loads((folder / STATE).read_text())
    again = triage_load(folder, LoadTriageOptions(seconds=240, timeout=60, verify=False))
    assert again.nodes == 1 and again.evaluations == state["evaluations"]


@pytest.mark.slow
def test_an_interrupted_reduction_resumes_from_its_best_model(tmp_path: Path) -> None:
    folder, _ = _file(tmp_path, prelu_scalar_model())
    first = triage_load(folder, LoadTriageOptions(seconds=0.0, timeout=60, verify=False))
    assert first.reproduced and not first.complete and first.nodes == 9  # the deadline came at once
    second = triage_load(folder, LoadTriageOptions(seconds=240, timeout=60, verify=False))
    assert second.complete and second.nodes == 1 and second.evaluations > first.evaluations


def test_repro_exits_zero_when_the_model_loads_and_agrees(tmp_path: Path) -> None:
    folder = tmp_path / "ok"
    folder.mkdir()
    expected = Observation(Symptom.EXCEPTION, None, "import", "ValueError: x")
    case = {"specs": [["x", "float32", [2, 3]]], "model_file": "model.onnx", "expected": expected.to_json()}
    (folder / "repro.py").write_text(repro_text(case, chain_model().SerializeToString()))
    clean = _run_clean(folder)
    assert clean.returncode == 0, clean.stdout + clean.stderr
    assert "the outputs agree with onnxruntime" in clean.stdout and "step compare" in clean.stdout


def _dies(case: object, progress: SharedProgress) -> list[Observation]:
    progress.set("load", "legalize")
    os.kill(os.getpid(), signal.SIGSEGV)
    return []


def _killed(case: object, progress: SharedProgress) -> list[Observation]:
    progress.set("load", "build")
    os.kill(os.getpid(), signal.SIGKILL)
    return []


def _hangs(case: object, progress: SharedProgress) -> list[Observation]:
    progress.set("load", "fuse")
    time.sleep(60)
    return []


def _crash_job(tmp_path: Path, symptom: Symptom, step: str) -> LoadGateJob:
    expected = Observation(symptom, None, step, "killed by signal SIGSEGV", signal=signal.SIGSEGV)
    case = {"specs": [["x", "float32", [2, 3]]], "model_file": "model.onnx", "timeout": 1.0,
            "expected": expected.to_json()}
    return LoadGateJob("0123456789ab", json.dumps(case), chain_model().SerializeToString())


def test_the_gate_judges_crashes_and_hangs_by_their_step(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(loader_check, "_observe", _dies)
    crash = run_load_gate(_crash_job(tmp_path, Symptom.CRASH, "legalize"))
    assert crash.verdict == BUG and crash.culprit == ["legalize"] and crash.observation.signal == signal.SIGSEGV
    elsewhere = run_load_gate(_crash_job(tmp_path, Symptom.CRASH, "import"))
    assert elsewhere.verdict == "not-a-bug" and elsewhere.reason.startswith("not-reproduced")
    monkeypatch.setattr(loader_check, "_observe", _killed)  # the OOM killer or an operator: never a crash
    killed = run_load_gate(_crash_job(tmp_path, Symptom.CRASH, "build"))
    assert killed.verdict == "not-a-bug" and killed.reason.startswith("invalid")
    monkeypatch.setattr(loader_check, "_observe", _hangs)
    start = time.monotonic()
    hang = run_load_gate(_crash_job(tmp_path, Symptom.HANG, "fuse"))  # outlives 3x the case's 1 s limit
    assert hang.verdict == BUG and hang.culprit == ["fuse"] and time.monotonic() - start < 30
