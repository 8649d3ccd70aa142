"""Low-level triage on real TVM: a finding's standalone repro, and the reduction of a constructed
finding (``tirx.NarrowDataType`` segfaults on S-TIR block IR, a form its pipeline position never has)
whose reduced repro.py must die by the same signal in a clean process."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("tvm")

from seedzer.finding.kind import TriageOptions
from seedzer.finding.meta import FindingMeta
from seedzer.finding.replay import replay_one
from seedzer.finding.tir.folder import ensure_repro, write_case
from seedzer.kernel.common import Observation, Stage, Symptom
from seedzer.kernel.tir.case import FUZZED, Case, Step
from seedzer.passes.tir.contracts import pipeline_steps
from seedzer.seed import input_seed

SEEDS = Path(__file__).resolve().parents[1] / "fixtures" / "seeds"
CLEAN_ENV = {"PATH": "/usr/bin:/bin", "PYTHONPATH": ""}


def _finding(folder: Path, obs: Observation, passes: list[dict[str, object]]) -> FindingMeta:
    folder.mkdir(parents=True)
    (folder / "ir.py").write_text((SEEDS / "softmax.py").read_text())
    (folder / "passes.json").write_text(json.dumps(passes))
    meta = FindingMeta(folder.name, "lowlevel", obs, tvm="0.27.0.post1")
    (folder / "meta.json").write_text(meta.dump(folder / "meta.json"))
    return meta


def test_a_findings_repro_runs_without_seedzer_and_says_the_bug_is_gone(tmp_path: Path) -> None:
    meta = _finding(tmp_path / "0123456789ab", Observation(Symptom.EXCEPTION, Stage.PASS, "tirx.FlattenBuffer", "x"),
                    [{"name": "tirx.RemoveNoOp", "args": {}}, {"name": "tirx.FlattenBuffer", "args": {}}])
    path = ensure_repro(tmp_path / "0123456789ab", meta)
    case = json.loads((path.parent / "case.json").read_text())
    fuzzed = [s["pass"] for s in case["steps"] if s["role"] == "fuzzed"]
    assert fuzzed == ["tirx.RemoveNoOp", "tirx.FlattenBuffer"]  # in order, each at or after its contract
    text = path.read_text()
    assert "import seedzer" not in text and "from seedzer" not in text
    proc = subprocess.run([sys.executable, "-I", "repro.py"], cwd=path.parent, capture_output=True, text=True,
                          env=CLEAN_ENV, timeout=300, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "not reproduced" in proc.stdout
    broken = subprocess.run(["/bin/sh", "-c", "exec python3 -I repro.py"], cwd=path.parent, capture_output=True,
                            text=True, env={"PATH": "/usr/bin:/bin"}, timeout=120, check=False)
    if broken.returncode == 3:  # a system Python without TVM: the reproducer says its environment is broken
        assert "broken environment" in broken.stderr


@pytest.mark.slow
def test_constructed_crash_is_reduced_and_its_reduced_repro_dies_by_the_same_signal(tmp_path: Path) -> None:
    from seedzer.finding.tir.triage import triage_tir

    obs = Observation(Symptom.CRASH, Stage.PASS, "tirx.NarrowDataType", "killed by signal SIGSEGV", signal=11)
    folder = tmp_path / "0123456789ab"
    meta = _finding(folder, obs, [])
    script = (folder / "ir.py").read_text()
    filler = [Step(p, role=FUZZED, optional=True) for p in ("tirx.RemoveNoOp", "tirx.ConvertSSA",
                                                            "s_tir.StmtSimplify", "tirx.AnnotateEntryFunc")]
    crash = Step("tirx.NarrowDataType", {"target_bits": 32}, role=FUZZED, optional=True)
    case = Case(script, (*filler[:2], crash, *filler[2:], *pipeline_steps()), input_seed(script), expected=obs)
    write_case(folder, case, meta)
    result = triage_tir(folder, meta, TriageOptions(minutes=3))
    assert result.status == "reduced", result
    reduced = Case.from_json(json.loads((folder / "reduced" / "case.json").read_text()))
    assert [s.name for s in reduced.steps if s.role == FUZZED] == ["tirx.NarrowDataType"]
    assert result.size_after is not None and result.size_before is not None
    assert result.size_after < result.size_before
    # the reduced reproducer dies by SIGSEGV in a clean process, and replay calls it still present
    proc = subprocess.run([sys.executable, "-I", "repro.py"], cwd=folder / "reduced", capture_output=True,
                          env=CLEAN_ENV, timeout=300, check=False)
    assert proc.returncode == -signal.SIGSEGV
    assert replay_one(folder, reduced=True).verdict == "still-present"
    report = (folder / "report.md").read_text()
    assert report.startswith("# [Bug][TIR] tirx.NarrowDataType") and "## Reduction passes" in report
    assert "| `ddmin-passes` | " in report and "| `shrink-ir` | " in report  # the pass table
    stats = json.loads((folder / "reduced" / "state.json").read_text())["pass_stats"]
    assert stats["ddmin-passes"]["size_removed"]["passes"] == 4 and stats["shrink-ir"]["successes"] > 0
    # resuming a finished reduction does no more tests
    again = triage_tir(folder, meta, TriageOptions(minutes=3))
    assert again.size_after == result.size_after and again.status == "reduced"
