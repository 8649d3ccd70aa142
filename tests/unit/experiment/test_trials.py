"""The experiment runner with a fake campaign command: scheduling, trial.json, resume after a kill."""

from __future__ import annotations

import fcntl
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
import yaml

from seedzer.experiment.spec import ExperimentError, ExperimentSpec, spec_from_dict
from seedzer.experiment.trials import ExperimentRunner, Trial, fuzz_command, is_done
from seedzer.store.db import CampaignDB

ROOT = Path(__file__).resolve().parents[3]

# A stand-in for `seedzer fuzz`: snapshots every 50 ms of its budget into campaign.db, continues the
# recorded elapsed time on --resume, stops early (exit 0) on SIGINT/SIGTERM like a real campaign,
# and appends "<trial dir> <resume>" to a record file each time it starts. FAIL_ONCE makes the
# first start of a trial exit 3 after one snapshot.
FAKE = textwrap.dedent("""
    import os, signal, sys, time
    sys.path.insert(0, {root!r})
    from pathlib import Path
    from seedzer.store.db import CampaignDB
    trial, resume, minutes, record = Path(sys.argv[1]), sys.argv[2] == "1", float(sys.argv[3]), sys.argv[4]
    with open(record, "a") as f:
        f.write(f"{{trial}} {{int(resume)}}\\n")
    stop = []
    signal.signal(signal.SIGINT, lambda *a: stop.append(1))
    signal.signal(signal.SIGTERM, lambda *a: stop.append(1))
    db = CampaignDB(trial / "campaign.db")
    db.set_meta("config", {{"fuzz": {{"minutes": minutes}}}})
    elapsed = float(db.get_meta("elapsed", 0.0))
    fail = os.environ.get("FAIL_ONCE") and not (trial / "failed-once").exists()
    while elapsed < minutes * 60 and not stop:
        time.sleep(0.05)
        elapsed = min(minutes * 60, elapsed + 0.05)
        n = int(elapsed * 20)
        db.add_snapshot({{"time": elapsed, "execs": n, "coverage": n * 2, "coverage_backend": "passes",
                          "corpus_size": 1, "findings": 0, "unique_findings": 0, "invalid": 0,
                          "wall": time.time()}})
        db.set_meta("elapsed", elapsed)
        if fail:
            (trial / "failed-once").write_text("x")
            sys.exit(3)
    db.close()
""")


def _setup(tmp_path: Path, minutes: float = 0.01, trials: int = 2,
           **over: object) -> tuple[ExperimentSpec, Path, Path, Path]:
    script = tmp_path / "fake_campaign.py"
    script.write_text(FAKE.format(root=str(ROOT)))
    record = tmp_path / "record.txt"
    record.touch()
    pools = tmp_path / "pools"
    spec = spec_from_dict({"name": "exp", "heuristics": ["alpha", "beta"], "trials": trials,
                           "minutes": minutes, "pool": {"dir": str(pools), "size": 1}, **over}, "e.yaml",
                          check_heuristics=False)
    return spec, script, record, tmp_path / "results"


def _runner(spec: ExperimentSpec, script: Path, record: Path, results: Path, **kw: object) -> ExperimentRunner:
    def command(trial: Trial, config: Path, resume: bool) -> list[str]:
        assert config.exists()
        return [sys.executable, str(script), str(trial.dir), "1" if resume else "0", str(trial.minutes),
                str(record)]

    def make_pool(h: str, count: int, out: Path, seed: int, max_nodes: int | None) -> None:
        out.mkdir(parents=True, exist_ok=True)
        (out / "manifest.json").write_text(json.dumps({"models": [{"file": "m.onnx"}] * count}))

    return ExperimentRunner(spec, results, command=command, make_pool=make_pool, echo=lambda s: None,
                            parallel=2, progress_period=0.2, grace=20.0, **kw)  # type: ignore[arg-type]


def _starts(record: Path) -> list[tuple[str, int]]:
    out = []
    for line in record.read_text().splitlines():
        d, r = line.rsplit(" ", 1)
        p = Path(d)
        out.append((f"{p.parent.name}/{p.name}", int(r)))
    return out


def test_runs_every_trial_once_and_marks_it_done(tmp_path: Path) -> None:
    spec, script, record, results = _setup(tmp_path)
    summary = _runner(spec, script, record, results).run()
    assert summary.count("done") == 4 and not summary.interrupted
    assert sorted(_starts(record)) == [("alpha/trial-1", 0), ("alpha/trial-2", 0), ("beta/trial-1", 0),
                                       ("beta/trial-2", 0)]
    info = json.loads((results / "exp" / "alpha" / "trial-1" / "trial.json").read_text())
    assert info["status"] == "done" and info["returncode"] == 0 and info["elapsed"] >= 0.6
    assert (results / "exp" / "alpha" / "trial-1" / "config.yaml").exists()
    assert json.loads((results / "exp" / "experiment.json").read_text())["heuristics"] == ["alpha", "beta"]
    # a second run with --resume reruns nothing; without --resume it refuses to touch the results
    again = _runner(spec, script, record, results, resume=True).run()
    assert again.count("done") == 4 and len(_starts(record)) == 4
    with pytest.raises(ExperimentError, match="results already exist"):
        _runner(spec, script, record, results).run()


def test_the_results_lock_is_held_while_running_and_released_after(tmp_path: Path) -> None:
    spec, script, record, results = _setup(tmp_path, trials=1)
    first = _runner(spec, script, record, results)
    assert first.run().count("done") == 2
    again = _runner(spec, script, record, results, resume=True)  # ``first`` is still alive here
    assert again.run().count("done") == 2
    running = _runner(spec, script, record, results, resume=True)
    running.prepare()  # as a run does first, holding the lock until it ends
    with pytest.raises(ExperimentError, match="another 'experiment run' is using these results"):
        _runner(spec, script, record, results, resume=True).run()
    assert first is not running


def test_a_failed_trial_is_resumed_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAIL_ONCE", "1")
    spec, script, record, results = _setup(tmp_path, trials=1)
    summary = _runner(spec, script, record, results).run()
    assert summary.count("done") == 2
    assert sorted(_starts(record)) == [("alpha/trial-1", 0), ("alpha/trial-1", 1), ("beta/trial-1", 0),
                                       ("beta/trial-1", 1)]


def test_resume_refuses_a_changed_experiment(tmp_path: Path) -> None:
    spec, script, record, results = _setup(tmp_path, trials=1)
    _runner(spec, script, record, results).run()
    spec.minutes = 0.03
    with pytest.raises(ExperimentError, match=r"cannot resume, 'minutes' changed from 0\.01 to 0\.03"):
        _runner(spec, script, record, results, resume=True).run()


KILLED_BUDGET = 0.06
"""Minutes of each trial of the killed experiment: the runner is killed 0.3 s into beta's, which must not
end before (3.3 s of margin for a test process slowed down by a busy machine)."""


def test_killed_experiment_resumes_without_rerunning_finished_trials(tmp_path: Path) -> None:
    spec, script, record, results = _setup(tmp_path, minutes=KILLED_BUDGET, trials=1)
    driver = tmp_path / "driver.py"
    driver.write_text(textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(ROOT)!r})
        from pathlib import Path
        from tests.unit.experiment.test_trials import _runner
        from seedzer.experiment.spec import spec_from_dict
        spec = spec_from_dict({spec.to_dict()!r}, "e.yaml", check_heuristics=False)
        r = _runner(spec, Path({str(script)!r}), Path({str(record)!r}), Path({str(results)!r}))
        r.parallel = 1
        r.run()
    """))
    proc = subprocess.Popen([sys.executable, str(driver)], start_new_session=True)
    alpha, beta = results / "exp" / "alpha" / "trial-1", results / "exp" / "beta" / "trial-1"
    deadline = time.monotonic() + 20
    while not (is_done(alpha) and (beta / "campaign.db").exists()):  # alpha done, beta running
        assert time.monotonic() < deadline and proc.poll() is None
        time.sleep(0.05)
    time.sleep(0.3)
    os.kill(proc.pid, signal.SIGKILL)  # the runner dies; its trial gets SIGTERM and stops early
    proc.wait()
    with open(beta / ".lock", "w") as fh:  # the orphaned trial holds its lock until it has stopped
        fcntl.flock(fh, fcntl.LOCK_EX)
    db = CampaignDB(beta / "campaign.db")
    assert db.get_meta("elapsed") < KILLED_BUDGET * 60  # stopped early: it did not outlive the runner
    db.close()
    assert not (beta / "trial.json").exists()
    resumed = _runner(spec, script, record, results, resume=True)
    summary = resumed.run()
    assert summary.count("done") == 2
    assert _starts(record) == [("alpha/trial-1", 0), ("beta/trial-1", 0), ("beta/trial-1", 1)]
    db = CampaignDB(beta / "campaign.db")
    assert db.get_meta("elapsed") >= KILLED_BUDGET * 60
    times = [s["time"] for s in db.snapshots()]
    db.close()
    assert times == sorted(times) and len(times) >= 30  # one continuous timeline across the resume
    info = json.loads((beta / "trial.json").read_text())
    assert info["status"] == "done" and info["resumed"] is True and info["sessions"] == 1


def test_interrupt_stops_trials_and_leaves_them_resumable(tmp_path: Path) -> None:
    spec, script, record, results = _setup(tmp_path, minutes=0.05, trials=1)
    runner = _runner(spec, script, record, results)
    orig = runner._start

    def start_then_interrupt(trial: Trial):  # type: ignore[no-untyped-def]
        running = orig(trial)
        if trial.heuristic == "beta":
            time.sleep(0.5)
            os.kill(os.getpid(), signal.SIGINT)  # as Ctrl-C would
        return running

    runner._start = start_then_interrupt  # type: ignore[method-assign]
    summary = runner.run()
    assert summary.interrupted and summary.count("done") == 0
    assert {r.status for r in summary.results} == {"interrupted"}
    assert json.loads((results / "exp" / "beta" / "trial-1" / "trial.json").read_text())["status"] == "interrupted"
    assert not is_done(results / "exp" / "beta" / "trial-1")


def test_real_command_line_is_a_fuzz_invocation(tmp_path: Path) -> None:
    trial = Trial("conv3", Path("seedpools/conv3"), 2, tmp_path / "conv3" / "trial-2", 10.0)
    argv = fuzz_command(trial, tmp_path / "c.yaml", True)
    assert argv[1:4] == ["-m", "seedzer.cli", "fuzz"]
    assert argv[argv.index("--pool") + 1] == "seedpools/conv3"
    assert argv[argv.index("--minutes") + 1] == "10" and argv[-1] == "--resume"
    assert "--resume" not in fuzz_command(trial, tmp_path / "c.yaml", False)


def test_without_levels_the_plan_and_layout_are_as_before(tmp_path: Path) -> None:
    spec, script, record, results = _setup(tmp_path)
    plan = _runner(spec, script, record, results).plan()
    assert [(t.label, str(t.dir.relative_to(results)), t.levels) for t in plan] == [
        ("alpha#1", "exp/alpha/trial-1", ""), ("beta#1", "exp/beta/trial-1", ""),
        ("alpha#2", "exp/alpha/trial-2", ""), ("beta#2", "exp/beta/trial-2", "")]
    assert [t.pool.name for t in plan] == ["alpha", "beta", "alpha", "beta"]


def test_levels_run_one_arm_per_pool_and_setting_and_resume(tmp_path: Path) -> None:
    spec, script, record, results = _setup(tmp_path, trials=1, levels=["tir", "tir,graph"])
    assert [(t.label, t.pool.name, t.levels) for t in _runner(spec, script, record, results).plan()] == [
        ("alpha@tir#1", "alpha", "tir"), ("alpha@tir+graph#1", "alpha", "tir,graph"),
        ("beta@tir#1", "beta", "tir"), ("beta@tir+graph#1", "beta", "tir,graph")]
    summary = _runner(spec, script, record, results).run()
    assert summary.count("done") == 4 and summary.results[0].trial.label == "alpha@tir#1"
    assert sorted(_starts(record)) == [("alpha@tir+graph/trial-1", 0), ("alpha@tir/trial-1", 0),
                                       ("beta@tir+graph/trial-1", 0), ("beta@tir/trial-1", 0)]
    exp = results / "exp"
    for arm, weights in (("alpha@tir", {"tir": 3.0, "graph": 0.0, "sched": 0.0}),
                         ("beta@tir+graph", {"tir": 3.0, "graph": 1.0, "sched": 0.0})):
        cfg = yaml.safe_load((exp / arm / "trial-1" / "config.yaml").read_text())
        assert {name: level["weight"] for name, level in cfg["levels"].items()} == weights, arm
    assert json.loads((exp / "beta@tir+graph" / "trial-1" / "trial.json").read_text())["levels"] == "tir,graph"
    assert json.loads((exp / "experiment.json").read_text())["levels"] == ["tir", "tir,graph"]
    # a resume with one more trial runs only the new trial of every arm
    spec.trials = 2
    again = _runner(spec, script, record, results, resume=True).run()
    assert again.count("done") == 8 and len(_starts(record)) == 8
    assert sorted(s for s in _starts(record)[4:]) == [("alpha@tir+graph/trial-2", 0), ("alpha@tir/trial-2", 0),
                                                      ("beta@tir+graph/trial-2", 0), ("beta@tir/trial-2", 0)]
    spec.levels = ["tir"]
    with pytest.raises(ExperimentError, match=r"cannot resume, 'levels' changed from \['tir', 'tir,graph'\]"):
        _runner(spec, script, record, results, resume=True).run()


def test_results_from_before_levels_resume_unchanged_and_refuse_new_levels(tmp_path: Path) -> None:
    spec, script, record, results = _setup(tmp_path, trials=1)
    _runner(spec, script, record, results).run()
    assert "levels" not in json.loads((results / "exp" / "experiment.json").read_text())
    assert _runner(spec, script, record, results, resume=True).run().count("done") == 2
    spec.levels = ["tir", "graph"]
    with pytest.raises(ExperimentError, match=r"cannot resume, 'levels' changed from \[\] to"):
        _runner(spec, script, record, results, resume=True).run()


def test_a_heuristic_with_epochs_gives_its_trials_epochs_and_its_own_pool_size(tmp_path: Path) -> None:
    grow = tmp_path / "grow.yaml"
    grow.write_text("generation: {max_nodes: 5}\nepochs: {count: 3, models: 7, pool: 4}\n")
    spec = spec_from_dict({"name": "exp", "heuristics": ["basic", str(grow)], "trials": 1, "minutes": 1,
                           "pool": {"dir": str(tmp_path / "pools"), "size": 9}}, "e.yaml")
    assert (spec.pool_size("basic"), spec.pool_size(str(grow))) == (9, 4)
    cfg = spec.trial_config(1, "", str(grow))
    assert (cfg.epochs.count, cfg.epochs.models) == (3, 7)
    assert spec.trial_config(1, "", "basic").epochs.count == 0


def test_each_trial_records_into_its_own_ledger_unless_one_is_configured(tmp_path: Path) -> None:
    spec, script, record, results = _setup(tmp_path, trials=1)
    _runner(spec, script, record, results).run()
    ledgers = {yaml.safe_load((results / "exp" / arm / "trial-1" / "config.yaml").read_text())["ledger"]["path"]
               for arm in ("alpha", "beta")}
    assert ledgers == {str((results / "exp" / arm / "trial-1" / "ledger.db").resolve()) for arm in ("alpha", "beta")}
    shared = tmp_path / "shared.db"
    spec2, script2, record2, _ = _setup(tmp_path, trials=1, campaign={"ledger": {"path": str(shared)}})
    _runner(spec2, script2, record2, tmp_path / "results2").run()
    cfg = yaml.safe_load((tmp_path / "results2" / "exp" / "alpha" / "trial-1" / "config.yaml").read_text())
    assert cfg["ledger"]["path"] == str(shared)
