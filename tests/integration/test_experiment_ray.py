"""Experiments on a real (local, private) Ray instance with the fake campaign of the runner's tests.

Each trial is a Ray task running the fake campaign's argv; the paths exercised: a shared file system
(the task runs in place), shipped files (``shared_fs=False``: node-local copies, checkpoints, the
directory shipped back), a Ray worker SIGKILLed mid-trial (the trial resumes from the last
checkpoint and ends done), and a graceful stop (the remote campaign gets SIGINT and its directory
still comes back). Ray is started once for the module with ``num_cpus=2``.
"""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from seedzer.experiment.ray_trials import RayHandle, RayLauncher
from seedzer.experiment.trials import is_done
from seedzer.store.db import CampaignDB
from tests.unit.experiment.test_trials import _runner, _setup, _starts


@pytest.fixture(scope="module")
def ray_local() -> Iterator[Any]:
    from seedzer.execute.ray_cluster import connect, disconnect

    info = connect(None, num_cpus=2, private=True)
    assert info.cpus == 2 and info.nodes == 1
    yield info
    disconnect()


class Recording(RayLauncher):
    """A RayLauncher that keeps its handles and messages for the test to look at."""

    def __init__(self, **kw: Any) -> None:
        self.messages: list[str] = []
        super().__init__(echo=self.messages.append, **kw)
        self.handles: list[RayHandle] = []

    def start(self, *args: Any, **kw: Any) -> RayHandle:
        handle = super().start(*args, **kw)
        self.handles.append(handle)
        return handle


def _elapsed(trial_dir: Path) -> float:
    db = CampaignDB(trial_dir / "campaign.db")
    try:
        return float(db.get_meta("elapsed"))
    finally:
        db.close()


def test_trials_run_in_place_on_a_shared_file_system(tmp_path: Path, ray_local: Any) -> None:
    spec, script, record, results = _setup(tmp_path, trials=1)
    launcher = Recording(report_period=0.2)
    summary = _runner(spec, script, record, results, launcher=launcher).run()
    assert summary.count("done") == 2 and not summary.interrupted
    assert sorted(_starts(record)) == [("alpha/trial-1", 0), ("beta/trial-1", 0)]  # the results' own paths
    for arm in ("alpha", "beta"):
        info = json.loads((results / "exp" / arm / "trial-1" / "trial.json").read_text())
        assert info["status"] == "done" and info["returncode"] == 0 and info["elapsed"] >= 0.6
        assert not (results / "exp" / arm / "trial-1" / ".ray-token").exists()
    assert all(h.report is not None and h.report.shared for h in launcher.handles)
    assert sum("(shared file system)" in m for m in launcher.messages) == 2


def test_trials_ship_their_directories_without_a_shared_file_system(tmp_path: Path, ray_local: Any) -> None:
    spec, script, record, results = _setup(tmp_path, trials=1, minutes=0.08)  # ~12 checkpoint periods, even loaded
    launcher = Recording(shared_fs=False, report_period=0.2, checkpoint_period=0.4)
    summary = _runner(spec, script, record, results, launcher=launcher).run()
    assert summary.count("done") == 2
    starts = [line.split()[0] for line in record.read_text().splitlines()]
    assert len(starts) == 2 and all("/seedzer-trial-" in s and not s.startswith(str(results)) for s in starts)
    assert not any(Path(s).exists() for s in starts), "the node-local copies are removed"
    for arm in ("alpha", "beta"):
        trial = results / "exp" / arm / "trial-1"
        assert _elapsed(trial) >= 0.08 * 60  # the campaign's final db came back
        assert "=== " in (trial / "fuzz.log").read_text() and (trial / "config.yaml").exists()
        assert is_done(trial) and not list(trial.parent.glob(".trial-1.incoming-*"))
    assert all(h.report is not None and not h.report.shared and h.have >= 1 for h in launcher.handles), \
        "checkpoints arrived"
    assert sum("(files shipped)" in m for m in launcher.messages) == 2


@pytest.mark.parametrize("shared_fs", [False, None], ids=["shipped", "shared"])
def test_a_killed_ray_worker_is_resumed_and_the_trial_ends_done(tmp_path: Path, ray_local: Any,
                                                                shared_fs: bool | None) -> None:
    spec, script, record, results = _setup(tmp_path, trials=1, minutes=0.1)
    launcher = Recording(shared_fs=shared_fs, report_period=0.2, checkpoint_period=0.5)
    killed: list[int] = []

    def kill_a_worker() -> None:  # once alpha's task has sent a checkpoint (or run a while), kill its worker
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            h = next((h for h in launcher.handles if "alpha" in str(h.trial_dir)), None)
            snap = h.snapshot() if h is not None else None
            if h is not None and snap is not None and snap.elapsed > 2.0 and h.report is not None \
                    and (h.have >= 1 or shared_fs is None):
                killed.append(h.report.pid)
                os.kill(killed[0], signal.SIGKILL)
                return
            time.sleep(0.05)

    killer = threading.Thread(target=kill_a_worker)
    killer.start()
    summary = _runner(spec, script, record, results, launcher=launcher).run()
    killer.join()
    assert killed, "the worker was never killed"
    assert summary.count("done") == 2
    alpha = results / "exp" / "alpha" / "trial-1"
    assert [r for _, r in _starts(record)].count(1) == 1, "exactly one resume: alpha's"
    assert "ray: the trial's task was lost (" in (alpha / "fuzz.log").read_text()
    info = json.loads((alpha / "trial.json").read_text())
    assert info["status"] == "done" and info["resumed"] is True and info["elapsed"] >= 0.1 * 60
    db = CampaignDB(alpha / "campaign.db")
    times = [s["time"] for s in db.snapshots()]
    db.close()
    assert times == sorted(times) and times[-1] >= 0.1 * 60  # one timeline, continued after the loss


STOPPED_BUDGET = 0.15
"""Minutes of each trial of the stopped experiment: the stop comes once both ran a second, and travels
through Ray to the campaigns before they end (8 s of margin for a machine busy with other work)."""


def test_a_graceful_stop_interrupts_the_remote_campaign_and_ships_it_back(tmp_path: Path,
                                                                          ray_local: Any) -> None:
    spec, script, record, results = _setup(tmp_path, trials=1, minutes=STOPPED_BUDGET)
    launcher = Recording(shared_fs=False, report_period=0.2, checkpoint_period=60.0)
    runner = _runner(spec, script, record, results, launcher=launcher)

    def interrupt_when_running() -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            snaps = [h.snapshot() for h in list(launcher.handles)]
            if len(snaps) == 2 and all(s is not None and s.elapsed > 1.0 for s in snaps):
                os.kill(os.getpid(), signal.SIGINT)  # as Ctrl-C on the head would
                return
            time.sleep(0.05)

    stopper = threading.Thread(target=interrupt_when_running)
    stopper.start()
    summary = runner.run()
    stopper.join()
    assert summary.interrupted and {r.status for r in summary.results} == {"interrupted"}
    for arm in ("alpha", "beta"):
        trial = results / "exp" / arm / "trial-1"
        assert 1.0 < _elapsed(trial) < STOPPED_BUDGET * 60, "stopped early, and its db came back with the stop"
        assert json.loads((trial / "trial.json").read_text())["status"] == "interrupted"
    again = _runner(spec, script, record, results, resume=True, launcher=Recording(shared_fs=False)).run()
    assert again.count("done") == 2
    assert [r for _, r in _starts(record)] == [0, 0, 1, 1], "each trial resumed once, from what came back"


def test_the_cli_runs_an_experiment_on_the_cluster(tmp_path: Path, ray_local: Any,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    from click.testing import CliRunner

    import seedzer.experiment.trials as runner_module
    from seedzer.cli import main

    spec, script, record, _ = _setup(tmp_path, trials=1, heuristics=["basic", "conv3"])
    fake = _runner(spec, script, record, tmp_path)  # its fake campaign command and pool maker

    class FakeCampaigns(runner_module.ExperimentRunner):
        def __init__(self, *args: Any, **kw: Any) -> None:
            super().__init__(*args, command=fake.command, make_pool=fake.make_pool, **kw)

    monkeypatch.setattr(runner_module, "ExperimentRunner", FakeCampaigns)
    exp = tmp_path / "exp.yaml"
    exp.write_text(json.dumps(spec.to_dict()))
    results = tmp_path / "cli-results"
    out = CliRunner().invoke(main, ["experiment", "run", str(exp), "--ray", "--results", str(results), "--no-report"])
    assert out.exit_code == 0, out.output
    assert f"ray {ray_local.address}: 1 node(s), 2 CPU(s)" in out.output
    assert "2 trials (0 already done), 2 at a time" in out.output, "parallel: the cluster's CPUs // jobs"
    assert "runs on" in out.output and "(shared file system)" in out.output
    assert is_done(results / "exp" / "basic" / "trial-1") and is_done(results / "exp" / "conv3" / "trial-1")
