"""Experiment trials as Ray tasks: the same campaign argv as a local trial, run on any node of a cluster.

Each trial is one task (``num_cpus`` = the trial's jobs, never retried by Ray: the runner decides
re-runs) that runs the trial's argv as a child process on its node and returns its exit status.

File systems: the head writes a random token into the trial directory; a task that reads the same
token at the same path (and sees the same pool) runs the campaign in place. Otherwise it unpacks
the pool and the trial directory (shipped as tar bytes in Ray's object store) into a node-local
temporary directory (removed at the end, or by the next task on that node if this one's process was
killed), rewrites the argv's paths to it, runs there, sends a checkpoint of the trial
directory every ``checkpoint_period`` seconds and returns the final directory with its status; the
head unpacks each over its trial directory (:mod:`seedzer.experiment.shipping`). A task lost with
its worker or node is a failed trial: the runner resumes it from what the head holds (the last
checkpoint, or the campaign itself on a shared file system).

Control and progress go through one small actor, :class:`~seedzer.experiment.ray_mailbox.Mailbox`:
every ``report_period`` a task reports its latest snapshot and learns whether the head asked it to
stop (SIGINT to the campaign, which still ships its directory back) or to kill (SIGKILL to the
campaign's process group).
Ray is imported only inside functions, and this module only when ``--ray`` is given.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import signal
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from seedzer.console import echo as say
from seedzer.execute.ray_cluster import import_ray
from seedzer.experiment.launch import lock_dir, signal_process, spawn, wait_for
from seedzer.experiment.progress import Snapshot, latest_snapshot
from seedzer.experiment.ray_mailbox import Mailbox, MailboxEntry, TaskOutcome, TaskReport
from seedzer.experiment.shipping import absolute_paths, pack_dir, rewrite_argv, unpack_dir
from seedzer.store.atomic import write_atomic

TOKEN = ".ray-token"
LOST = -int(signal.SIGKILL)
"""The status of a trial whose task was lost (its worker or node died): a failed trial, resumed."""
KILL_TIMEOUT = 10.0
"""Seconds a task may take to answer a kill before Ray cancels it by force."""


@dataclass(frozen=True)
class TrialTask:
    """What a task needs to run one trial (plain data, sent to the node)."""

    key: str
    argv: list[str]
    trial_dir: str
    pool: str
    token: str | None
    pool_files: list[tuple[str, int]]
    cwd: str
    python: str
    report_period: float = 1.0
    checkpoint_period: float = 60.0
    grace: float = 120.0


def pool_files(pool: Path) -> list[tuple[str, int]]:
    """The pool's top-level files and sizes: a node sees the same pool when it sees the same list."""
    try:
        return sorted((p.name, p.stat().st_size) for p in Path(pool).iterdir() if p.is_file())
    except OSError:
        return []


def shares_files(task: TrialTask) -> bool:
    """True when this node sees the head's trial directory (its token) and the same pool."""
    if task.token is None:
        return False
    try:
        token = (Path(task.trial_dir) / TOKEN).read_text().strip()
    except OSError:
        return False
    return token == task.token and pool_files(Path(task.pool)) == task.pool_files


def _lock(trial_dir: Path, grace: float) -> IO[str]:
    """The trial directory's lock (a campaign left over from a lost task is waited for, as locally)."""
    fh = lock_dir(trial_dir, grace)
    if fh is None:
        raise RuntimeError(f"{trial_dir}: a campaign is still running there (locked)")
    return fh


NODE_PREFIX = "seedzer-trial-"
"""Node-local copies of shipped trials live in ``<tmp>/seedzer-trial-<pid>-*`` (``pid``: the task's)."""


def sweep_stale(tmp_root: Path) -> list[Path]:
    """Remove node-local trial copies left by tasks that died (their Ray worker SIGKILLed, the node
    rebooted): those whose task's process is gone and whose campaign no longer holds the trial's lock.
    Returns what it removed."""
    removed: list[Path] = []
    for path in tmp_root.glob(f"{NODE_PREFIX}*-*"):
        pid = path.name[len(NODE_PREFIX):].split("-", 1)[0]
        if not pid.isdigit() or not path.is_dir() or _alive(int(pid)):
            continue
        trial = path / "trial"
        if (trial / ".lock").exists():
            lock = lock_dir(trial, 0.0)
            if lock is None:
                continue  # its campaign still stops (a SIGTERM from its task's death takes a moment)
            lock.close()
        shutil.rmtree(path, ignore_errors=True)
        removed.append(path)
    return removed


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process
    return True


def run_trial(task: TrialTask, mailbox: Any, archives: list[Any]) -> TaskOutcome:
    """The Ray task: run the trial's argv on this node; returns its status and (when the files were
    shipped) the final trial directory. ``archives`` holds the refs of the pool's and
    the trial directory's archives, fetched only when this node does not share the head's files."""
    ray = import_ray()
    node = ray.util.get_node_ip_address()
    shared = shares_files(task)
    tmp: Path | None = None
    if shared:
        trial_dir, argv = Path(task.trial_dir), list(task.argv)
        cwd = task.cwd if os.path.isdir(task.cwd) else None
    else:
        sweep_stale(Path(tempfile.gettempdir()))
        tmp = Path(tempfile.mkdtemp(prefix=f"{NODE_PREFIX}{os.getpid()}-"))
        pool_data, trial_data = ray.get(archives)
        unpack_dir(pool_data, tmp / "pool", keep=())
        unpack_dir(trial_data, tmp / "trial")
        trial_dir, cwd = tmp / "trial", str(tmp)
        argv = rewrite_argv(task.argv, {task.trial_dir: str(trial_dir), task.pool: str(tmp / "pool")})
    if argv and argv[0] == task.python and not os.path.exists(argv[0]):
        argv[0] = sys.executable  # another installation of the same Python and Seedzer
    try:
        lock = _lock(trial_dir, task.grace)
        with lock, open(trial_dir / "fuzz.log", "ab") as log:
            proc = spawn(argv, log, lock.fileno(), cwd)
            lock.close()  # the campaign holds it from here on
            try:
                rc = _supervise(task, mailbox, proc, trial_dir, shared, node)
            finally:
                signal_process(proc, kill=True)  # only if still running (an error here)
                proc.wait()
        archive = None if shared else pack_dir(trial_dir)
        return TaskOutcome(rc, shared, node, archive)
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)


def _supervise(task: TrialTask, mailbox: Any, proc: Any, trial_dir: Path, shared: bool, node: str) -> int:
    """Wait for the campaign, reporting progress, obeying orders and sending checkpoints."""
    ray = import_ray()
    next_report = next_checkpoint = time.monotonic()
    next_checkpoint += task.checkpoint_period
    seq, stopped = 0, False
    while (rc := proc.poll()) is None:
        now = time.monotonic()
        if now >= next_report:
            next_report = now + task.report_period
            report = TaskReport(os.getpid(), node, shared, latest_snapshot(trial_dir))
            try:
                order = ray.get(mailbox.report.remote(task.key, report), timeout=30)
            except Exception:  # the head is busy or gone: keep running (Ray ends us if gone)
                order = None
            if order == "kill":
                signal_process(proc, kill=True)
            elif order == "stop" and not stopped:
                signal_process(proc, kill=False)
                stopped = True
        if not shared and now >= next_checkpoint:
            next_checkpoint = now + task.checkpoint_period
            seq += 1
            mailbox.checkpoint.remote(task.key, seq, pack_dir(trial_dir))
        time.sleep(0.1)
    return int(rc)


class RayHandle:
    """The head's side of one trial task (see :class:`~seedzer.experiment.launch.TrialHandle`)."""

    def __init__(self, launcher: RayLauncher, key: str, ref: Any, trial_dir: Path) -> None:
        self.launcher, self.key, self.ref, self.trial_dir = launcher, key, ref, trial_dir
        self.rc: int | None = None
        self.report: TaskReport | None = None
        """The task's last report (None until it reported)."""
        self.have = 0
        self._next_fetch = 0.0
        self._killed_at: float | None = None
        self._cancelled = False

    def _fetch(self) -> None:
        """The task's latest report; a newer checkpoint is unpacked over the trial directory."""
        ray = import_ray()
        try:
            got: MailboxEntry = ray.get(self.launcher.mailbox().fetch.remote(self.key, self.have), timeout=30)
        except Exception:  # no news this time
            return
        if got.report is not None and self.report is None:
            mode = "shared file system" if got.report.shared else "files shipped"
            self.launcher.echo(f"ray: {self.trial_dir.parent.name}/{self.trial_dir.name} runs on "
                               f"{got.report.node} ({mode})")
        self.report = got.report or self.report
        if got.checkpoint is not None:
            seq, data = got.checkpoint
            unpack_dir(data, self.trial_dir)
            self.have = seq

    def poll(self) -> int | None:
        """The campaign's status once the task has ended (:data:`LOST` if the task was lost)."""
        if self.rc is not None:
            return self.rc
        ray = import_ray()
        ready, _ = ray.wait([self.ref], timeout=0)
        if not ready:
            now = time.monotonic()
            if now >= self._next_fetch:
                self._next_fetch = now + self.launcher.report_period
                self._fetch()
            if self._killed_at is not None and not self._cancelled and now - self._killed_at > KILL_TIMEOUT:
                self._cancelled = True
                with contextlib.suppress(Exception):
                    ray.cancel(self.ref, force=True)
            return None
        try:
            outcome: TaskOutcome = ray.get(self.ref)
        except ray.exceptions.RayError as exc:
            self._fetch()  # the last checkpoint, if any
            why = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
            with open(self.trial_dir / "fuzz.log", "a") as log:
                log.write(f"ray: the trial's task was lost ({type(exc).__name__}: {why[:200]})\n")
            self.rc = LOST
        else:
            if outcome.archive is not None:
                unpack_dir(outcome.archive, self.trial_dir)
            self.rc = outcome.returncode
        self.launcher.mailbox().forget.remote(self.key)
        return self.rc

    def stop(self) -> None:
        """Ask the task to stop its campaign with SIGINT (it still returns the trial directory)."""
        self.launcher.mailbox().order.remote(self.key, "stop")

    def kill(self) -> None:
        """Ask the task to SIGKILL its campaign; Ray cancels the task if it does not answer in time."""
        if self._killed_at is None:
            self._killed_at = time.monotonic()
        self.launcher.mailbox().order.remote(self.key, "kill")

    def wait(self, timeout: float | None = None) -> int | None:
        """Wait for the task to end."""
        return wait_for(self, timeout)

    def snapshot(self) -> Snapshot | None:
        """The snapshot the task last reported, else the one in the trial directory here."""
        snap = self.report.snapshot if self.report is not None else None
        return snap or latest_snapshot(self.trial_dir)

    def close(self) -> None:
        """Remove the file-system token (the task holds its node's lock and log itself)."""
        (self.trial_dir / TOKEN).unlink(missing_ok=True)


class RayLauncher:
    """Starts trials as tasks on the Ray cluster this process is connected to
    (:func:`seedzer.execute.ray_cluster.connect`). ``shared_fs=False`` always ships the files (as
    between machines without a shared file system); ``None`` detects it per task."""

    def __init__(self, *, shared_fs: bool | None = None, report_period: float = 1.0,
                 checkpoint_period: float = 60.0, grace: float = 120.0, echo: Any = None) -> None:
        self.shared_fs, self.report_period = shared_fs, report_period
        self.checkpoint_period, self.grace = checkpoint_period, grace
        self.echo = echo or (lambda s: say(s, err=True))
        self._mailbox: Any = None
        self._remote: Any = None
        self._pools: dict[str, Any] = {}
        self._count = 0

    def mailbox(self) -> Any:
        """The :class:`Mailbox` actor, created on this node on first use."""
        if self._mailbox is None:
            ray = import_ray()
            from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

            here = NodeAffinitySchedulingStrategy(ray.get_runtime_context().get_node_id(), soft=True)
            self._mailbox = ray.remote(num_cpus=0)(Mailbox).options(scheduling_strategy=here).remote()
        return self._mailbox

    def _pool_archive(self, pool: Path) -> Any:
        key = str(pool.absolute())
        if key not in self._pools:
            self._pools[key] = import_ray().put(pack_dir(pool, exclude=()))
        return self._pools[key]

    def start(self, trial_dir: Path, pool: Path, argv: list[str], lock: IO[str], jobs: int) -> RayHandle:
        """Submit the trial's task (``num_cpus=jobs``); the head's lock is released by the caller and
        taken again by the task where the campaign runs."""
        ray = import_ray()
        if self._remote is None:
            self._remote = ray.remote(max_retries=0)(run_trial)
        token = None
        (trial_dir / TOKEN).unlink(missing_ok=True)
        if self.shared_fs is not False:
            token = secrets.token_hex(16)
            write_atomic(trial_dir / TOKEN, token)
        self._count += 1
        absolute = Path(trial_dir).absolute()
        task = TrialTask(f"{absolute}#{self._count}", rewrite_argv(argv, absolute_paths([trial_dir, pool])),
                         str(absolute), str(pool.absolute()), token, pool_files(pool), os.getcwd(),
                         sys.executable, self.report_period, self.checkpoint_period, self.grace)
        archives = [self._pool_archive(pool), ray.put(pack_dir(trial_dir))]
        ref = self._remote.options(num_cpus=jobs).remote(task, self.mailbox(), archives)
        return RayHandle(self, task.key, ref, Path(trial_dir))
