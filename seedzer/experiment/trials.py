"""Running an experiment: pools, then every trial as an isolated campaign in its own process.

Layout: ``<results>/<name>/experiment.json`` and ``<results>/<name>/<arm>/trial-<n>/`` (an arm is a
pool, ``<pool>``, or a pool at one level setting, ``<pool>@<label>``; each trial directory is a campaign
directory plus ``config.yaml``, ``fuzz.log`` and, once finished, ``trial.json``). A trial is done
only when its campaign exited cleanly having spent its whole budget; ``trial.json`` with status
``done`` is then written atomically and the trial is never run again. Any other trial with a
campaign.db is continued with ``fuzz --resume``. Trial processes run in their own sessions (a
terminal's Ctrl-C reaches only this runner, which stops them gracefully) and receive SIGTERM if
the runner dies, so a killed experiment leaves no orphan campaign writing to its results. Where a
trial process runs is a :class:`~seedzer.experiment.launch.TrialLauncher`'s business: here by
default, on a Ray cluster with :class:`~seedzer.experiment.ray_trials.RayLauncher`.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import IO, Any

import yaml

from seedzer.config import to_dict
from seedzer.console import echo as say
from seedzer.experiment.launch import LocalLauncher, TrialHandle, TrialLauncher, lock_dir
from seedzer.experiment.progress import Snapshot, latest_snapshot, progress_line, result_line
from seedzer.experiment.spec import FINGERPRINT_DEFAULTS, ExperimentError, ExperimentSpec
from seedzer.store.atomic import write_atomic

Echo = Callable[[str], None]


@dataclass(frozen=True)
class Trial:
    """One campaign of an experiment."""

    heuristic: str
    pool: Path
    number: int
    dir: Path
    minutes: float
    levels: str = ""
    """The arm's ``--levels`` string (empty: the campaign section's levels)."""
    allocation: str = ""
    """The arm's allocation, ``adaptive`` or ``fixed`` (empty: the campaign section's)."""

    @property
    def label(self) -> str:
        """Short name for progress lines, e.g. ``conv3#2`` or ``conv3@tir+graph#2``."""
        return f"{self.dir.parent.name}#{self.number}"


TrialCommand = Callable[[Trial, Path, bool], list[str]]
"""Builds the argv of a trial process from the trial, its config file and whether to resume."""

PoolMaker = Callable[[str, int, Path, int, int | None], None]
"""Generates a missing pool: (heuristic, count, out, seed, max_nodes)."""


def fuzz_command(trial: Trial, config: Path, resume: bool) -> list[str]:
    """The real trial: ``python -m seedzer.cli fuzz`` with the trial's pool, directory and config."""
    argv = [sys.executable, "-m", "seedzer.cli", "fuzz", "--pool", str(trial.pool), "--out", str(trial.dir),
            "--minutes", f"{trial.minutes:g}", "--monitor", "plain", "--config", str(config), "--recorded-as", "trial"]
    return [*argv, "--resume"] if resume else argv


def cores() -> int:
    """CPU cores this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


def generate_pool_default(heuristic: str, count: int, out: Path, seed: int, max_nodes: int | None) -> None:
    """Generate (or complete) a pool with :func:`seedzer.generate.generate_pool` on every core."""
    try:
        from seedzer.generate import generate_pool
    except ImportError as exc:
        raise ExperimentError(f"{out}: pool missing and the generator cannot be imported ({exc})") from exc
    generate_pool(heuristic, count, out, jobs=cores(), seed=seed, max_nodes=max_nodes,
                  progress=True)


def pool_models(path: Path) -> int:
    """Models in the pool at ``path``: its manifest entries, else its ``*.onnx`` files (0 if none)."""
    try:
        data = json.loads((path / "manifest.json").read_text())
        return len(data.get("models", []))
    except (OSError, ValueError, AttributeError):
        return len(list(path.glob("*.onnx"))) if path.is_dir() else 0


def read_trial_json(trial_dir: Path) -> dict[str, Any]:
    """A trial's trial.json, or an empty dict when absent or unreadable."""
    try:
        data = json.loads((trial_dir / "trial.json").read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def is_done(trial_dir: Path) -> bool:
    """True when the trial finished its whole budget (trial.json status ``done``)."""
    return read_trial_json(trial_dir).get("status") == "done"


@dataclass
class Running:
    """A trial process in flight."""

    trial: Trial
    handle: TrialHandle
    resumed: bool
    started: float
    argv: list[str]


@dataclass
class TrialResult:
    """How a trial ended in this run (or that it was already done)."""

    trial: Trial
    status: str
    snapshot: Snapshot | None = None
    returncode: int | None = None
    note: str = ""


@dataclass
class ExperimentSummary:
    """Every trial's result after a run."""

    root: Path
    results: list[TrialResult] = field(default_factory=list)
    interrupted: bool = False

    def count(self, status: str) -> int:
        """Trials with ``status``."""
        return sum(r.status == status for r in self.results)


class ExperimentRunner:
    """Schedules an experiment's trials (at most ``parallel`` at once) and resumes interrupted ones."""

    def __init__(self, spec: ExperimentSpec, results: Path, *, resume: bool = False, parallel: int | None = None,
                 command: TrialCommand = fuzz_command, make_pool: PoolMaker = generate_pool_default,
                 echo: Echo | None = None, progress_period: float = 15.0, grace: float = 120.0,
                 launcher: TrialLauncher | None = None) -> None:
        self.spec, self.resume = spec, resume
        self.launcher: TrialLauncher = launcher or LocalLauncher()
        self.root = Path(results) / spec.name
        self.parallel = parallel or spec.parallel or max(1, cores() // spec.jobs)
        self.command, self.make_pool = command, make_pool
        self.echo: Echo = echo or (lambda s: say(s, err=True))
        self.progress_period, self.grace = progress_period, grace
        self._stop = 0
        self._lock: IO[str] | None = None

    # --- set-up ------------------------------------------------------------------------------
    def prepare(self) -> None:
        """Lock the results directory and check (or record) the experiment definition."""
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            self._lock = lock_dir(self.root, 0.0)  # held for the whole run
        except OSError as exc:
            raise ExperimentError(f"{self.root}: cannot create results directory ({exc.strerror or exc})") from exc
        if self._lock is None:
            raise ExperimentError(f"{self.root}: another 'experiment run' is using these results")
        previous = self.root / "experiment.json"
        if previous.exists() or any(self.root.glob("*/trial-*")):
            if not self.resume:
                raise ExperimentError(f"{self.root}: results already exist (use --resume to continue them)")
            self._check_compatible(previous)
        write_atomic(previous, json.dumps(self.spec.to_dict(), indent=2))

    def _check_compatible(self, previous: Path) -> None:
        try:
            old = json.loads(previous.read_text())
        except (OSError, ValueError):
            return
        mine = self.spec.fingerprint()
        for key, value in mine.items():
            if key not in old and key not in FINGERPRINT_DEFAULTS:
                continue
            was = old.get(key, FINGERPRINT_DEFAULTS.get(key))
            if (sorted(was) if key == "oracles" else was) != value:
                raise ExperimentError(f"{self.root}: cannot resume, '{key}' changed from {was!r} to "
                                      f"{value!r} in {self.spec.source or 'the experiment file'}")

    def ensure_pools(self) -> None:
        """Generate every missing pool; existing pools are reused as they are."""
        for h in self.spec.heuristics:
            path, size = self.spec.pool_path(h), self.spec.pool_size(h)
            have = pool_models(path)
            if have >= size:
                self.echo(f"pool {path}: reusing {have} models")
                continue
            self.echo(f"pool {path}: {'completing' if have else 'generating'} {size} '{h}' models ...")
            t0 = time.monotonic()
            self.make_pool(h, size, path, self.spec.pool.seed, self.spec.pool.max_nodes)
            have = pool_models(path)
            if not have:
                raise ExperimentError(f"{path}: pool generation produced no models")
            self.echo(f"pool {path}: {have} models ready in {time.monotonic() - t0:.0f} s")

    def plan(self) -> list[Trial]:
        """All trials, trial 1 of every arm first, so partial results stay balanced."""
        trials = []
        for n in range(1, self.spec.trials + 1):
            for arm in self.spec.arms():
                trials.append(Trial(arm.heuristic, self.spec.pool_path(arm.heuristic), n,
                                    self.root / arm.name / f"trial-{n}", self.spec.minutes, arm.levels,
                                    arm.allocation))
        return trials

    # --- trials --------------------------------------------------------------------------------
    def _lock_trial(self, trial: Trial) -> IO[str]:
        """Lock the trial directory; the lock is inherited by the campaign process, so a campaign left
        over from a killed runner (still stopping) is waited for instead of being run twice."""
        fh = lock_dir(trial.dir, self.grace,
                      lambda: self.echo(f"waiting for an earlier campaign in {trial.dir} to stop ..."))
        if fh is None:
            raise ExperimentError(f"{trial.dir}: a campaign is still running there (locked)")
        return fh

    def _start(self, trial: Trial) -> Running:
        trial.dir.mkdir(parents=True, exist_ok=True)
        lock = self._lock_trial(trial)
        config = trial.dir / "config.yaml"
        cfg = self.spec.trial_config(trial.number, trial.levels, trial.heuristic, trial.allocation)
        if not cfg.ledger.path:
            # trials are independent samples: a ledger shared by trials makes one trial's roots "seen before" in
            # the next (and the adaptive allocation's later trials earn no reward for them)
            cfg.ledger.path = str((trial.dir / "ledger.db").resolve())
        write_atomic(config, yaml.safe_dump(to_dict(cfg), sort_keys=False))
        resume = (trial.dir / "campaign.db").exists()
        argv = self.command(trial, config, resume)
        with open(trial.dir / "fuzz.log", "ab") as log:
            log.write(f"\n=== {time.strftime('%Y-%m-%d %H:%M:%S')} {' '.join(argv)}\n".encode())
        try:
            handle = self.launcher.start(trial.dir, trial.pool, argv, lock, self.spec.jobs)
        finally:
            lock.close()  # the trial process (or the launcher) holds the lock from here on
        self.echo(f"start {trial.label} ({'resume' if resume else 'fresh'}) -> {trial.dir}")
        return Running(trial, handle, resume, time.time(), argv)

    def _finish(self, run: Running) -> TrialResult:
        trial, rc = run.trial, run.handle.poll()
        run.handle.close()
        snap = latest_snapshot(trial.dir)
        spent = snap is not None and snap.elapsed >= trial.minutes * 60 - 0.01
        if rc == 0 and spent:
            status = "done"
        elif self._stop or rc in (-signal.SIGINT, -signal.SIGTERM) or (rc == 0 and not spent):
            status = "interrupted"
        else:
            status = "failed"
        record = {"status": status, "heuristic": trial.heuristic, "pool": str(trial.pool), "trial": trial.number,
                  "minutes": trial.minutes, "returncode": rc, "started": run.started, "finished": time.time(),
                  "resumed": run.resumed, "command": run.argv, **({"levels": trial.levels} if trial.levels else {}),
                  **({"allocation": trial.allocation} if trial.allocation else {}),
                  "sessions": int(read_trial_json(trial.dir).get("sessions", 0)) + 1,
                  **(snap.to_dict() if snap else {})}
        write_atomic(trial.dir / "trial.json", json.dumps(record, indent=2))
        note = "" if status == "done" else _log_tail(trial.dir / "fuzz.log")
        result = TrialResult(trial, status, snap, rc, note)
        self.echo(result_line(trial.label, status, snap, rc, note))
        return result

    def _signal(self, signum: int, _frame: FrameType | None) -> None:
        self._stop += 1
        self.echo("stopping: trials are being stopped (interrupt again to kill them)" if self._stop == 1
                  else "killing trials")

    @staticmethod
    def _stop_all(running: list[Running], kill: bool) -> None:
        """Ask each campaign to stop (SIGINT: it stops its own workers), or kill the trial's whole process
        group (campaign, zygote and workers)."""
        for r in running:
            if r.handle.poll() is None:
                if kill:
                    r.handle.kill()
                else:
                    r.handle.stop()

    def run(self) -> ExperimentSummary:
        """Prepare, generate pools, run every trial not done yet; returns when all ended or on a stop.
        The results directory is locked from the start of the run to its end, however it ends."""
        try:
            return self._run()
        finally:
            if self._lock is not None:
                self._lock.close()
                self._lock = None

    def _run(self) -> ExperimentSummary:
        self.prepare()
        self.ensure_pools()
        summary = ExperimentSummary(self.root)
        queue: list[Trial] = []
        for t in self.plan():
            if is_done(t.dir):
                summary.results.append(TrialResult(t, "done", latest_snapshot(t.dir), 0, "already done"))
            else:
                queue.append(t)
        total = len(summary.results) + len(queue)
        self.echo(f"experiment {self.spec.name}: {total} trials ({total - len(queue)} already done), "
                  f"{self.parallel} at a time, {self.spec.minutes:g} min each -> {self.root}")
        old = {s: signal.signal(s, self._signal) for s in (signal.SIGINT, signal.SIGTERM)}
        running: list[Running] = []
        retried: set[Trial] = set()
        t0 = time.monotonic()
        next_progress = t0 + self.progress_period
        stopping_since: float | None = None
        try:
            while queue or running:
                if self._stop and stopping_since is None:
                    stopping_since = time.monotonic()
                    summary.results += [TrialResult(t, "pending", latest_snapshot(t.dir)) for t in queue]
                    queue.clear()
                    self._stop_all(running, kill=False)
                if stopping_since is not None and (self._stop > 1 or time.monotonic() - stopping_since > self.grace):
                    self._stop_all(running, kill=True)
                while queue and len(running) < self.parallel and not self._stop:
                    running.append(self._start(queue.pop(0)))
                for r in [r for r in running if r.handle.poll() is not None]:
                    running.remove(r)
                    res = self._finish(r)
                    if res.status == "failed" and r.trial not in retried and not self._stop:
                        retried.add(r.trial)  # one retry per run: a campaign that died mid-way resumes
                        queue.insert(0, r.trial)
                        continue
                    summary.results.append(res)
                if time.monotonic() >= next_progress and running:
                    next_progress = time.monotonic() + self.progress_period
                    self.echo(progress_line(self.spec.name, time.monotonic() - t0, summary.count("done"), total,
                                            [(r.trial.label, r.trial.minutes, r.handle.snapshot())
                                             for r in running]))
                time.sleep(0.2)
        finally:
            if running:  # an unexpected error: do not leave campaigns behind
                self._stop_all(running, kill=True)
                for r in running:
                    r.handle.wait(self.grace)
                    r.handle.close()
            for s, h in old.items():
                signal.signal(s, h)
        summary.interrupted = bool(self._stop)
        order = {t: i for i, t in enumerate(self.plan())}
        summary.results.sort(key=lambda r: order.get(r.trial, 0))
        return summary


def _log_tail(log: Path, lines: int = 1) -> str:
    try:
        text = log.read_text(errors="replace").strip().splitlines()
    except OSError:
        return ""
    tail = [ln for ln in text if ln.strip() and not ln.startswith("===")][-lines:]
    return " | ".join(t.strip()[:200] for t in tail)
