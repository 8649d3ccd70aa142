"""Where a trial's campaign process runs: the seam between the experiment runner and its executors.

The runner prepares a trial (its directory, lock, config and argv) and hands it to a
:class:`TrialLauncher`; the :class:`TrialHandle` it gets back is all the runner polls, stops and
kills. :class:`LocalLauncher` runs the argv as a child process of this machine (the default);
:mod:`seedzer.experiment.ray_trials` runs it as a task on a Ray cluster.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, Protocol

from seedzer.execute.orphans import die_with_parent
from seedzer.experiment.progress import Snapshot, latest_snapshot
from seedzer.experiment.spec import ExperimentError


class TrialHandle(Protocol):
    """A trial in flight, wherever it runs."""

    def poll(self) -> int | None:
        """The campaign's exit status once it has ended (negative: killed by that signal), else None.

        When it returns a status, the trial directory on this machine holds the campaign's final state."""

    def stop(self) -> None:
        """Ask the campaign to stop gracefully (as SIGINT does): it writes its last snapshot and exits."""

    def kill(self) -> None:
        """Stop the campaign and all its processes now (SIGKILL)."""

    def wait(self, timeout: float | None = None) -> int | None:
        """Block until :meth:`poll` gives a status (or ``timeout`` seconds passed; then None)."""

    def snapshot(self) -> Snapshot | None:
        """The campaign's latest snapshot as far as this machine knows (for progress lines)."""

    def close(self) -> None:
        """Release what the handle holds (log file, lock); called once the trial has ended."""


class TrialLauncher(Protocol):
    """Starts a prepared trial: ``argv`` in ``trial_dir``; ``lock`` is the trial directory's lock file,
    held until the launcher has passed it on (or taken its own), then closed by the caller."""

    def start(self, trial_dir: Path, pool: Path, argv: list[str], lock: IO[str], jobs: int) -> TrialHandle:
        """Start the trial process and return its handle; raises :class:`ExperimentError` if it cannot."""


def child_setup() -> None:  # pragma: no cover - runs in the child between fork and exec
    """Ask Linux to send SIGTERM to this (trial) process when its parent dies, and unblock the signals
    its parent blocked (a Ray worker blocks SIGINT; the mask would be inherited across exec and the
    campaign would never see a graceful stop)."""
    die_with_parent(signal.SIGTERM)
    with contextlib.suppress(OSError, ValueError):
        signal.pthread_sigmask(signal.SIG_SETMASK, set())


def spawn(argv: list[str], log: IO[bytes], lock_fd: int | None, cwd: str | None = None) -> subprocess.Popen[bytes]:
    """Start a trial process: its own session (a terminal's Ctrl-C reaches only the runner), output to
    ``log``, SIGTERM when this process dies, and the trial lock (``lock_fd``) inherited."""
    return subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, cwd=cwd,
                            start_new_session=True, preexec_fn=child_setup,
                            pass_fds=() if lock_fd is None else (lock_fd,))


def signal_process(proc: subprocess.Popen[bytes], kill: bool) -> None:
    """SIGINT to the campaign process (it stops its own workers), or SIGKILL to its whole process group."""
    if proc.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        if kill:
            os.killpg(proc.pid, signal.SIGKILL)
        else:
            os.kill(proc.pid, signal.SIGINT)


class LocalHandle:
    """A trial running as a child process of this machine."""

    def __init__(self, trial_dir: Path, proc: subprocess.Popen[bytes], log: IO[bytes]) -> None:
        self.trial_dir, self.proc, self.log = trial_dir, proc, log

    def poll(self) -> int | None:
        """The process's exit status, or None while it runs."""
        return self.proc.poll()

    def stop(self) -> None:
        """SIGINT to the campaign process."""
        signal_process(self.proc, kill=False)

    def kill(self) -> None:
        """SIGKILL to the trial's process group (campaign, zygote and workers)."""
        signal_process(self.proc, kill=True)

    def wait(self, timeout: float | None = None) -> int | None:
        """Wait for the process to exit."""
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            return None

    def snapshot(self) -> Snapshot | None:
        """The latest snapshot in the trial's campaign.db."""
        return latest_snapshot(self.trial_dir)

    def close(self) -> None:
        """Close the log file."""
        self.log.close()


class LocalLauncher:
    """Runs each trial as a child process of this machine (the experiment runner's default)."""

    def start(self, trial_dir: Path, pool: Path, argv: list[str], lock: IO[str], jobs: int) -> LocalHandle:
        """Start ``argv`` with its output appended to ``trial_dir/fuzz.log``; the process inherits the lock."""
        log = open(trial_dir / "fuzz.log", "ab")  # noqa: SIM115 - closed by LocalHandle.close
        try:
            proc = spawn(argv, log, lock.fileno())
        except OSError as exc:
            log.close()
            raise ExperimentError(f"{trial_dir}: cannot start the trial ({argv[0]}: {exc.strerror or exc})") from exc
        return LocalHandle(trial_dir, proc, log)


def wait_for(handle: TrialHandle, timeout: float | None, period: float = 0.2) -> int | None:
    """Poll ``handle`` until it gives a status or ``timeout`` seconds passed (helper for handles)."""
    deadline = None if timeout is None else time.monotonic() + timeout
    while (rc := handle.poll()) is None:
        if deadline is not None and time.monotonic() > deadline:
            return None
        time.sleep(period)
    return rc


def lock_dir(directory: Path, grace: float, on_wait: Callable[[], None] | None = None) -> IO[str] | None:
    """Take ``directory/.lock`` (exclusive), waiting up to ``grace`` seconds for a campaign left over
    from a killed runner or a lost task to stop (``on_wait`` is called once when it must wait). The open
    file holds the lock (hand it to the campaign process); None when the lock stayed taken."""
    fh = open(directory / ".lock", "w")  # noqa: SIM115 - handed to the campaign process
    deadline = time.monotonic() + grace
    waited = False
    while True:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return fh
        except OSError:
            if time.monotonic() > deadline:
                fh.close()
                return None
            if not waited and on_wait is not None:
                on_wait()
            waited = True
            time.sleep(0.2)
