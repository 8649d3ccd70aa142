"""The trial-launcher seam: the runner drives any launcher's handles (no process needed), and the local
launcher's children get a clean signal mask."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import IO

from seedzer.experiment.launch import LocalLauncher, spawn
from seedzer.experiment.progress import Snapshot, latest_snapshot
from seedzer.experiment.spec import spec_from_dict
from seedzer.experiment.trials import ExperimentRunner, Trial
from seedzer.store.db import CampaignDB


class FakeHandle:
    """A campaign that lives in this process: each poll advances it by ``step`` seconds of its budget."""

    def __init__(self, trial_dir: Path, budget: float, step: float, obey_stop: bool, log: list[str]) -> None:
        self.dir, self.budget, self.step, self.obey, self.log = trial_dir, budget, step, obey_stop, log
        self.rc: int | None = None
        self.stopping = False
        self.db = CampaignDB(trial_dir / "campaign.db")
        self.elapsed = float(self.db.get_meta("elapsed", 0.0))

    def poll(self) -> int | None:
        if self.rc is None:
            if self.stopping and self.obey:
                self.rc = -signal.SIGINT
            elif self.elapsed < self.budget:
                self.elapsed = min(self.budget, self.elapsed + self.step)
                self.db.add_snapshot({"time": self.elapsed, "execs": 1, "coverage": 2, "coverage_backend": "passes",
                                      "corpus_size": 1, "findings": 0, "unique_findings": 0, "invalid": 0,
                                      "wall": 0.0})
                self.db.set_meta("elapsed", self.elapsed)
            else:
                self.rc = 0
            if self.rc is not None:
                self.db.close()
        return self.rc

    def stop(self) -> None:
        self.log.append(f"stop {self.dir.parent.name}")
        self.stopping = True

    def kill(self) -> None:
        self.log.append(f"kill {self.dir.parent.name}")
        if self.rc is None:
            self.rc = -signal.SIGKILL
            self.db.close()

    def wait(self, timeout: float | None = None) -> int | None:
        return self.rc

    def snapshot(self) -> Snapshot | None:
        self.log.append(f"snapshot {self.dir.parent.name}")
        return latest_snapshot(self.dir)

    def close(self) -> None:
        self.log.append(f"close {self.dir.parent.name}")


class FakeLauncher:
    def __init__(self, step: float = 0.3, obey_stop: bool = True) -> None:
        self.step, self.obey = step, obey_stop
        self.log: list[str] = []
        self.started: list[tuple[str, str, list[str], int]] = []

    def start(self, trial_dir: Path, pool: Path, argv: list[str], lock: IO[str], jobs: int) -> FakeHandle:
        assert not lock.closed, "the launcher gets the trial lock still held"
        self.started.append((trial_dir.parent.name, pool.name, argv, jobs))
        return FakeHandle(trial_dir, 0.01 * 60, self.step, self.obey, self.log)


def _runner(tmp_path: Path, launcher: object, **kw: object) -> ExperimentRunner:
    spec = spec_from_dict({"name": "exp", "heuristics": ["alpha", "beta"], "trials": 1, "minutes": 0.01,
                           "jobs": 3, "pool": {"dir": str(tmp_path / "pools"), "size": 1}}, "e.yaml",
                          check_heuristics=False)

    def make_pool(h: str, count: int, out: Path, seed: int, max_nodes: int | None) -> None:
        out.mkdir(parents=True, exist_ok=True)
        (out / "manifest.json").write_text(json.dumps({"models": [{"file": "m.onnx"}]}))

    def command(trial: Trial, config: Path, resume: bool) -> list[str]:
        return ["campaign", trial.heuristic, "resume" if resume else "fresh"]

    return ExperimentRunner(spec, tmp_path / "results", command=command, make_pool=make_pool,
                            echo=lambda s: None, parallel=2, progress_period=0.0, launcher=launcher,  # type: ignore[arg-type]
                            **kw)  # type: ignore[arg-type]


def test_the_runner_drives_trials_only_through_the_launcher(tmp_path: Path) -> None:
    launcher = FakeLauncher()
    summary = _runner(tmp_path, launcher).run()
    assert summary.count("done") == 2
    assert launcher.started == [("alpha", "alpha", ["campaign", "alpha", "fresh"], 3),
                                ("beta", "beta", ["campaign", "beta", "fresh"], 3)]
    assert sorted(m for m in launcher.log if m.startswith("close")) == ["close alpha", "close beta"]
    assert any(m.startswith("snapshot") for m in launcher.log), "progress lines come from the handles"
    info = json.loads((tmp_path / "results" / "exp" / "alpha" / "trial-1" / "trial.json").read_text())
    assert info["status"] == "done" and info["command"] == ["campaign", "alpha", "fresh"]
    log = (tmp_path / "results" / "exp" / "alpha" / "trial-1" / "fuzz.log").read_text()
    assert "=== " in log and "campaign alpha fresh" in log  # the runner's header, whatever the launcher


def test_a_stop_reaches_every_handle_and_a_stubborn_one_is_killed(tmp_path: Path) -> None:
    for obey, expected in ((True, {"stop alpha", "stop beta"}),
                           (False, {"stop alpha", "stop beta", "kill alpha", "kill beta"})):
        launcher = FakeLauncher(step=0.001, obey_stop=obey)
        runner = _runner(tmp_path / str(obey), launcher, grace=0.5)
        timer = threading.Timer(0.5, lambda r=runner: r._signal(signal.SIGINT, None))  # type: ignore[misc]
        timer.start()
        summary = runner.run()
        timer.join()
        assert summary.interrupted and {r.status for r in summary.results} == {"interrupted"}, obey
        assert {m for m in launcher.log if m.split()[0] in ("stop", "kill")} == expected
        assert sorted(m for m in launcher.log if m.startswith("close")) == ["close alpha", "close beta"]


def test_a_trial_process_starts_with_no_blocked_signals(tmp_path: Path) -> None:
    """A Ray worker blocks SIGINT; a campaign inheriting that mask would ignore a graceful stop."""
    out = tmp_path / "out.txt"
    script = "import signal; print(sorted(int(s) for s in signal.pthread_sigmask(signal.SIG_BLOCK, [])))"
    got: list[int] = []

    def in_a_blocking_thread() -> None:
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
        with open(out, "wb") as log:
            proc = spawn([sys.executable, "-c", script], log, None)
            got.append(proc.wait())

    t = threading.Thread(target=in_a_blocking_thread)
    t.start()
    t.join()
    assert got == [0] and out.read_text().strip() == "[]"


def test_the_local_launcher_runs_the_argv_with_the_lock_inherited(tmp_path: Path) -> None:
    import fcntl

    lock = open(tmp_path / ".lock", "w")  # noqa: SIM115
    fcntl.flock(lock, fcntl.LOCK_EX)
    child = ("import pathlib, signal, time; signal.signal(signal.SIGINT, signal.SIG_DFL); "
             f"pathlib.Path({str(tmp_path / 'ready')!r}).touch(); time.sleep(30)")  # SIGINT's default action once up
    handle = LocalLauncher().start(tmp_path, tmp_path, [sys.executable, "-c", child], lock, 1)
    lock.close()
    try:
        deadline = time.monotonic() + 30
        while not (tmp_path / "ready").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        probe = open(tmp_path / ".lock", "w")  # noqa: SIM115
        blocked = subprocess.run(["flock", "-n", str(tmp_path / ".lock"), "true"]).returncode
        probe.close()
        assert blocked != 0, "the trial process holds the lock"
        assert handle.poll() is None and handle.snapshot() is None
        handle.stop()
        assert handle.wait(10) == -signal.SIGINT
    finally:
        handle.kill()
        handle.wait(10)
        handle.close()
