"""Low-level triage on real TVM: expansion into a standalone repro, and the reduction of a
constructed finding (``tirx.NarrowDataType`` segfaults on S-TIR block IR) whose reduced repro.py
must die by the same signal in a clean process."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("tvm")

from seedzer.outcome import Outcome, Stage, Symptom
from seedzer.triage.materialize import base_case, materialize
from seedzer.triage.registry import TriageOptions
from seedzer.triage.replay import replay_one

SEEDS = Path(__file__).resolve().parents[1] / "fixtures" / "seeds"


def _finding(folder: Path, outcome: Outcome, passes: list[dict[str, object]]) -> Path:
    folder.mkdir(parents=True)
    (folder / "ir.py").write_text((SEEDS / "softmax.py").read_text())
    (folder / "passes.json").write_text(json.dumps(passes))
    meta = {"kind": "lowlevel", "signature": folder.name, "outcome": outcome.to_dict(), "tvm": "0.27.0.post1"}
    (folder / "meta.json").write_text(json.dumps(meta))
    return folder


def test_materialize_writes_the_repair_passes_out_and_the_repro_runs_without_seedzer(tmp_path: Path) -> None:
    folder = _finding(tmp_path / "f1", Outcome(Symptom.EXCEPTION, Stage.PASS, "tirx.FlattenBuffer", "boom"),
                      [{"name": "tirx.RemoveNoOp", "args": {}}, {"name": "tirx.FlattenBuffer", "args": {}}])
    case = materialize(folder)
    names = [s["pass"] for s in case["steps"]]
    assert names[0] == "tirx.BindTarget" and case["steps"][0]["args"]["target"]["kind"] == "llvm"
    assert names[-1] == "tirx.FlattenBuffer" and "s_tir.LowerOpaqueBlock" in names  # repair made explicit
    assert case["expansion"] == "ok"
    text = (folder / "repro.py").read_text()
    assert "seedzer" not in text.split('"""', 2)[2].lower().replace("seedzer reproducer", "")
    # No seedzer on the path: the reproducer must still run; the fake bug is absent (exit 0).
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": ""}
    proc = subprocess.run([sys.executable, "-I", "repro.py"], cwd=folder, capture_output=True, text=True,
                          env=env, timeout=300, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "not reproduced" in proc.stdout


@pytest.mark.slow
def test_constructed_crash_is_reduced_and_its_reduced_repro_dies_by_the_same_signal(tmp_path: Path) -> None:
    from seedzer.triage.reduce import triage_lowlevel

    outcome = Outcome(Symptom.CRASH, Stage.PASS, "tirx.NarrowDataType", "killed by signal SIGSEGV")
    folder = _finding(tmp_path / "crash1", outcome, [])
    script = (folder / "ir.py").read_text()
    filler = [{"pass": p, "args": {}, "config": {}} for p in ("tirx.RemoveNoOp", "tirx.ConvertSSA",
                                                              "s_tir.StmtSimplify", "tirx.AnnotateEntryFunc")]
    steps = [*filler[:2], {"pass": "tirx.NarrowDataType", "args": {"target_bits": 32}, "config": {}}, *filler[2:]]
    meta = json.loads((folder / "meta.json").read_text())
    (folder / "case.json").write_text(json.dumps(base_case(script, meta, steps)))
    result = triage_lowlevel(folder, meta, TriageOptions(minutes=3))
    assert result.status == "reduced", result
    reduced = json.loads((folder / "reduced" / "steps.json").read_text())
    assert [s["pass"] for s in reduced] == ["tirx.NarrowDataType"]
    assert result.size_after is not None and result.size_before is not None
    assert result.size_after < result.size_before
    # the reduced reproducer dies by SIGSEGV in a clean process, and replay calls it still present
    proc = subprocess.run([sys.executable, "repro.py"], cwd=folder / "reduced", capture_output=True,
                          timeout=300, check=False)
    assert proc.returncode == -signal.SIGSEGV
    assert replay_one(folder, reduced=True).verdict == "still-present"
    assert "# [Bug] crash at pass in `tirx.NarrowDataType`" in (folder / "report.md").read_text()
    # resuming a finished reduction does no more tests
    again = triage_lowlevel(folder, meta, TriageOptions(minutes=3))
    assert again.size_after == result.size_after and again.status == "reduced"
