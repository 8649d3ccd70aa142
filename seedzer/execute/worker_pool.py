"""Campaign-side management of fuzz workers: start, feed, watch for deaths and hangs, restart.

The campaign process never imports TVM: workers are forked by the zygote, and this module only
talks to them through pipes and reads their shared-memory progress slots. :class:`WorkerPool` is
the real :class:`~seedzer.execute.executor.Executor`; given another worker entry point (the cheap
fake worker) it runs the same protocol without TVM.
"""

from __future__ import annotations

import contextlib
import signal
import time
from collections.abc import Callable, Iterator
from multiprocessing.connection import Connection, wait
from pathlib import Path
from typing import Any

from seedzer.errors import CampaignError
from seedzer.execute.death import describe_exit
from seedzer.execute.memory import available_mb, peak_rss_mb
from seedzer.execute.progress import ProgressSlot
from seedzer.execute.records import Announcement, Death, Fatal, Ready, Result, Stop, Task, TestCaseInfo, WorkerEvent
from seedzer.execute.worker import worker_main
from seedzer.execute.zygote import context
from seedzer.kernel.common import Stage

SETUP_DEATHS_LIMIT = 5
"""Consecutive deaths of a worker during set-up (by a signal it raised, not SIGKILL, or by exiting
before it could say why, e.g. an import failing in the child) that stop the campaign: a set-up that
fails every time cannot be helped by restarting."""
MEMORY_SAMPLE_SECONDS = 1.0
QUEUED_TASKS = 1
"""Tasks a worker is given ahead of the one it runs: it finds the next one in its pipe when it sends
a result, instead of waiting a round trip for the campaign's answer (longer while the campaign writes
corpus files or a snapshot). The task is chosen one answer earlier (why this value:
docs/measurements.md, 'Workers and isolation')."""


class WorkerHandle:
    """One forked worker process with its pipe and progress slot."""

    def __init__(self, index: int, settings: Any, target: Callable[..., None] = worker_main) -> None:
        ctx = context()
        self.index = index
        self.slot = ProgressSlot(ctx)
        self.conn, child = ctx.Pipe(duplex=True)
        self.proc = ctx.Process(target=target, args=(child, self.slot, settings, index), daemon=True,
                                name=f"seedzer-worker-{index}")
        self.proc.start()
        child.close()
        self.current: TestCaseInfo | None = None
        """The task the worker runs, or starts next once it has sent its last answer."""
        self.queued: list[TestCaseInfo] = []
        """Tasks sent after ``current``, waiting in the pipe."""
        self.submitted_at = 0.0
        self.ready = False
        self.killed_by_us = False
        self.rss_mb: float | None = None

    @property
    def busy(self) -> bool:
        """True while set-up or a test case is outstanding."""
        return self.current is not None or not self.ready

    @property
    def has_room(self) -> bool:
        """True when the worker is set up and fewer than :data:`QUEUED_TASKS` tasks wait behind its current one."""
        return self.ready and (self.current is None or len(self.queued) < QUEUED_TASKS)

    def submit(self, task: Task, info: TestCaseInfo) -> None:
        """Send a task; the worker must have room. A pipe broken by a dead worker is left to :meth:`poll`."""
        if self.current is None:
            self.current = info
            self.submitted_at = time.time()
        else:
            self.queued.append(info)
        with contextlib.suppress(OSError):  # a worker that died since it was seen idle: poll() reports it
            self.conn.send(task)

    def finished(self) -> None:
        """The current task answered: the next one sent (if any) is what the worker runs now."""
        self.current = self.queued.pop(0) if self.queued else None
        self.submitted_at = time.time()

    def kill(self) -> None:
        """Kill the process outright (used for hangs and shutdown)."""
        if self.proc.is_alive():
            self.killed_by_us = True
            self.proc.kill()
        self.proc.join(timeout=10)

    def stop(self) -> None:
        """Ask the worker to exit, then make sure it did."""
        try:
            if self.proc.is_alive() and not self.busy:
                self.conn.send(Stop())
                self.proc.join(timeout=5)
        except OSError:
            pass
        self.kill()
        self.conn.close()


def _log_tail(log_dir: str | None, index: int, limit: int = 6000) -> str:
    if log_dir is None:
        return ""
    path = Path(log_dir) / f"worker-{index}.log"
    try:
        with open(path, "rb") as fh:
            fh.seek(0, 2)
            size = fh.tell()
            fh.seek(max(0, size - limit))
            return fh.read().decode(errors="replace")
    except OSError:
        return ""


class WorkerPool:
    """A fixed number of workers; dead or hung ones are replaced at once."""

    def __init__(self, jobs: int, settings: Any, timeouts: dict[Stage, float],
                 target: Callable[..., None] = worker_main, first: int = 0) -> None:
        self.settings = settings
        self.timeouts = timeouts
        self.target = target
        self.first = first
        """Index of the first worker (a pool that is one part of a campaign's workers, e.g. in a Ray
        actor, names its workers and their logs by their index in the campaign)."""
        self.workers = [WorkerHandle(first + i, settings, target) for i in range(jobs)]
        self.restarts = 0
        self._setup_deaths = [0] * jobs
        self._sampled = 0.0

    def idle(self) -> Iterator[WorkerHandle]:
        """Workers with room for a task (one may wait behind the running one: :data:`QUEUED_TASKS`)."""
        return (w for w in self.workers if w.has_room)

    def _death(self, w: WorkerHandle, cause: str, message: str, signum: int | None,
               seconds: float | None = None) -> WorkerEvent:
        view = w.slot.read()
        log_dir = getattr(self.settings, "log_dir", None)
        death = Death(cause, view.stage or Stage.MUTATE, view.pass_name or None, message, signum, w.proc.exitcode,
                      w.rss_mb, available_mb(), _log_tail(log_dir, w.index), seconds, not w.ready)
        event = WorkerEvent("death", w.index, w.current, death=death, dropped=tuple(w.queued))
        w.conn.close()
        self._restart(w, death)
        return event

    def _restart(self, w: WorkerHandle, death: Death) -> None:
        at = w.index - self.first
        if death.during_setup and death.cause in ("signal", "exit") and death.signal != signal.SIGKILL:
            self._setup_deaths[at] += 1
            if self._setup_deaths[at] >= SETUP_DEATHS_LIMIT:
                raise CampaignError(f"worker {w.index} dies while setting up: {death.message} "
                                    f"({SETUP_DEATHS_LIMIT} times in a row)")
        elif not death.during_setup:
            self._setup_deaths[at] = 0
        self.workers[at] = WorkerHandle(w.index, self.settings, self.target)
        self.restarts += 1

    def _drain(self, w: WorkerHandle, out: list[WorkerEvent]) -> None:
        while True:
            try:
                if not w.conn.poll():
                    return
                msg = w.conn.recv()
            except (EOFError, OSError, ValueError):  # a worker killed mid-message
                return
            self._handle(w, msg, out)

    def _handle(self, w: WorkerHandle, msg: Any, out: list[WorkerEvent]) -> None:
        if isinstance(msg, Fatal):  # a worker that cannot start would only be restarted to fail again
            raise CampaignError(f"worker {w.index} cannot start: {msg.message}")
        if isinstance(msg, Ready):
            w.ready = True
            self._setup_deaths[w.index - self.first] = 0
            return
        info = w.current
        if info is None or getattr(msg, "tc_id", None) != info.tc_id:
            return
        if isinstance(msg, Announcement):
            info.script, info.passes, info.mutators, info.announced = msg.script, msg.passes, list(msg.mutators), True
            info.case = msg.case
            out.append(WorkerEvent("tc", w.index, info))
        elif isinstance(msg, Result):
            w.finished()
            out.append(WorkerEvent("result", w.index, info, result=msg.result))

    def poll(self, timeout: float) -> list[WorkerEvent]:
        """Wait up to ``timeout`` seconds; return what happened (deaths replace their worker)."""
        out: list[WorkerEvent] = []
        handles: dict[Any, WorkerHandle] = {}
        for w in self.workers:
            handles[w.conn] = w
            handles[w.proc.sentinel] = w
        ready = wait(list(handles), timeout=timeout)
        dead: list[WorkerHandle] = []
        for obj in ready:
            w = handles[obj]
            if isinstance(obj, Connection):
                self._drain(w, out)
            elif w not in dead:
                dead.append(w)
        for w in dead:
            self._drain(w, out)
            w.proc.join(timeout=5)
            code = w.proc.exitcode
            signum = -code if code is not None and code < 0 else None
            cause = "killed" if signum == signal.SIGKILL else "signal" if signum else "exit"
            out.append(self._death(w, cause, describe_exit(code), signum))
        out.extend(self.check_hangs())
        self._sample_memory()
        return out

    def _sample_memory(self) -> None:
        # A worker without a figure yet is sampled at once: one killed young still gets its figure.
        now = time.monotonic()
        due = now - self._sampled >= MEMORY_SAMPLE_SECONDS
        if due:
            self._sampled = now
        for w in self.workers:
            if w.proc.pid is not None and (due or w.rss_mb is None):
                w.rss_mb = peak_rss_mb(w.proc.pid) or w.rss_mb

    def check_hangs(self, now: float | None = None) -> list[WorkerEvent]:
        """Kill workers whose current stage outlived its limit; report each as a hang (``timeout``), or
        as ``slow`` when the limit was the test case's own relative one, below the stage's."""
        now = time.time() if now is None else now
        out = []
        for w in list(self.workers):
            if w.current is None:
                continue
            view = w.slot.read()
            longest = max(self.timeouts.values())
            full = self.timeouts.get(view.stage, longest) if view.stage else longest
            own = w.current.limits
            limit = min(full, own.get(view.stage, full)) if own is not None and view.stage else full
            since = view.elapsed(now) if view.stage else now - w.submitted_at
            if since > limit:
                w.kill()
                where = view.stage.value if view.stage else "start"
                if limit < full:
                    out.append(self._death(w, "slow", f"{where} stage exceeded the test case's relative limit "
                                           f"{limit:.1f}s (the stage's limit: {full:.0f}s)", signal.SIGKILL, since))
                else:
                    out.append(self._death(w, "timeout", f"{where} stage exceeded {limit:.0f}s", signal.SIGKILL,
                                           since))
        return out

    def pids(self) -> list[int | None]:
        """Process ids of the current workers (recorded as campaign events)."""
        return [w.proc.pid for w in self.workers]

    def close(self) -> None:
        """Stop every worker."""
        for w in self.workers:
            w.stop()
