"""Campaign-side management of fuzz workers: start, feed, watch for deaths and hangs, restart.

The campaign process never imports TVM: workers are forked by the zygote, and this module only
talks to them through pipes and reads their shared-memory progress slots.
"""

from __future__ import annotations

import signal
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from typing import Any

from seedzer.errors import CampaignError
from seedzer.execute.isolated import describe_exit
from seedzer.execute.progress import ProgressSlot
from seedzer.execute.settings import WorkerSettings
from seedzer.execute.worker import worker_main
from seedzer.execute.zygote import context
from seedzer.outcome import Stage


@dataclass
class TestCaseInfo:
    """What the campaign knows about the test case a worker is running."""

    __test__ = False  # not a pytest class

    tc_id: int
    kind: str
    parent: str | None
    script: str = ""
    passes: str = "[]"
    mutators: list[str] = field(default_factory=list)
    announced: bool = False


@dataclass
class WorkerEvent:
    """Something a worker did: announced a test case, returned a result, or died."""

    kind: str  # "tc" | "result" | "death"
    worker: int
    tc: TestCaseInfo | None
    record: dict[str, Any] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)


class WorkerHandle:
    """One forked worker process with its pipe and progress slot."""

    def __init__(self, index: int, settings: Any, target: Callable[..., None] = worker_main) -> None:
        ctx = context()
        self.index = index
        self.slot = ProgressSlot(ctx)
        self.conn, child = ctx.Pipe(duplex=True)
        self.proc = ctx.Process(target=target, args=(child, self.slot, settings), daemon=True,
                                name=f"seedzer-worker-{index}")
        self.proc.start()
        child.close()
        self.current: TestCaseInfo | None = None
        self.submitted_at = 0.0

    @property
    def busy(self) -> bool:
        """True while a test case is outstanding."""
        return self.current is not None

    def submit(self, message: tuple[Any, ...], info: TestCaseInfo) -> None:
        """Send a task; the worker must be idle."""
        self.current = info
        self.submitted_at = time.time()
        self.conn.send(message)

    def kill(self) -> None:
        """Kill the process outright (used for hangs and shutdown)."""
        if self.proc.is_alive():
            self.proc.kill()
        self.proc.join(timeout=10)

    def stop(self) -> None:
        """Ask the worker to exit, then make sure it did."""
        try:
            if self.proc.is_alive() and not self.busy:
                self.conn.send(("stop",))
                self.proc.join(timeout=5)
        except (OSError, BrokenPipeError):
            pass
        self.kill()
        self.conn.close()


class WorkerPool:
    """A fixed number of workers; dead or hung ones are replaced at once."""

    def __init__(self, jobs: int, settings: WorkerSettings | Any, timeouts: dict[Stage, float],
                 target: Callable[..., None] = worker_main) -> None:
        self.settings = settings
        self.timeouts = timeouts
        self.target = target
        self.workers = [WorkerHandle(i, settings, target) for i in range(jobs)]
        self.restarts = 0

    def idle(self) -> Iterator[WorkerHandle]:
        """Workers ready for a task."""
        return (w for w in self.workers if not w.busy)

    def _death(self, w: WorkerHandle, kind: str, message: str, signum: int | None) -> WorkerEvent:
        view = w.slot.read()
        stage = view.stage or Stage.MUTATE
        death = {"kind": kind, "stage": stage.value, "pass": view.pass_name or None, "message": message,
                 "signal": signum, "exitcode": w.proc.exitcode}
        event = WorkerEvent("death", w.index, w.current, {"death": death})
        w.conn.close()
        self.workers[w.index] = WorkerHandle(w.index, self.settings, self.target)
        self.restarts += 1
        return event

    def _drain(self, w: WorkerHandle, out: list[WorkerEvent]) -> None:
        while True:
            try:
                if not w.conn.poll():
                    return
                msg = w.conn.recv()
            except (EOFError, OSError):
                return
            self._handle(w, msg, out)

    def _handle(self, w: WorkerHandle, msg: tuple[Any, ...], out: list[WorkerEvent]) -> None:
        if msg[0] == "fatal":  # a worker that cannot start would only be restarted to fail again
            raise CampaignError(f"worker {w.index} cannot start: {msg[1]}")
        info = w.current
        if info is None or msg[1] != info.tc_id:
            return
        if msg[0] == "tc":
            info.script, info.passes, info.mutators, info.announced = msg[2], msg[3], list(msg[4]), True
            out.append(WorkerEvent("tc", w.index, info))
        elif msg[0] == "result":
            w.current = None
            out.append(WorkerEvent("result", w.index, info, msg[2], msg[3]))

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
            out.append(self._death(w, "signal" if signum else "exit", describe_exit(code), signum))
        out.extend(self.check_hangs())
        return out

    def check_hangs(self, now: float | None = None) -> list[WorkerEvent]:
        """Kill workers whose current stage outlived its limit; report each as a hang."""
        now = time.time() if now is None else now
        out = []
        for w in list(self.workers):
            if not w.busy:
                continue
            view = w.slot.read()
            limit = self.timeouts.get(view.stage, max(self.timeouts.values())) if view.stage else None
            since = view.elapsed(now) if view.stage else now - w.submitted_at
            if limit is None:
                limit = max(self.timeouts.values())
            if since > limit:
                w.kill()
                where = f"{view.stage.value if view.stage else 'start'}"
                out.append(self._death(w, "timeout", f"{where} stage exceeded {limit:.0f}s", signal.SIGKILL))
        return out

    def pids(self) -> list[int | None]:
        """Process ids of the current workers (recorded as campaign events)."""
        return [w.proc.pid for w in self.workers]

    def close(self) -> None:
        """Stop every worker."""
        for w in self.workers:
            w.stop()
