"""Background jobs in processes forked from the zygote: the campaign never waits for them.

The filing gate (and anything else that runs TVM for the campaign besides the workers) runs here:
one job at a time, each in its own child of the zygote, so TVM is already imported (no interpreter
start-up) and a crash takes only the job down. A job running longer than ``timeout`` seconds is
killed. A job runs at a slightly lower priority than the workers (``nice``, as the epoch generator: a
worker wins a tie for a processor; the gate's share of the processor is ``oracles.gate_share``'s to keep,
not the priority's). :meth:`Background.poll` returns finished jobs; each reports its CPU seconds, which count in
the campaign's time accounting (a job that died or was killed cannot say: it is charged its wall
seconds).
"""

from __future__ import annotations

import os
import resource
import time
import traceback
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any

from seedzer.execute.death import describe_exit
from seedzer.execute.orphans import die_with_parent
from seedzer.execute.zygote import context
from seedzer.generate.cpu_share import lower_priority
from seedzer.logfiles import redirect_output


@dataclass
class JobResult:
    """A finished job: its value, or why it has none; wall and CPU seconds."""

    key: str
    value: Any = None
    error: str | None = None
    seconds: float = 0.0
    cpu_seconds: float = 0.0


def _cpu() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def _child(conn: Connection, fn: Callable[..., Any], args: tuple[Any, ...], log_dir: str | None, name: str) -> None:
    die_with_parent()  # never outlive the zygote that forked it (a campaign killed outright)
    lower_priority()  # a worker busy with a test case comes first
    redirect_output(os.path.join(log_dir, f"{name}.log") if log_dir else None)
    try:
        value = fn(*args)
        conn.send(("ok", value, _cpu()))
    except BaseException as exc:  # the parent records it; a job must never take the campaign down
        conn.send(("error", f"{type(exc).__name__}: {exc}\n{traceback.format_exc()[-3000:]}", _cpu()))
    finally:
        conn.close()


class Background:
    """A queue of jobs run one at a time in zygote children (see the module docstring)."""

    def __init__(self, name: str = "gate", log_dir: str | None = None, timeout: float = 1800.0) -> None:
        self.name = name
        self.log_dir = log_dir
        self.timeout = timeout
        self.queue: deque[tuple[str, Callable[..., Any], tuple[Any, ...]]] = deque()
        self.running: tuple[str, Any, Connection, float] | None = None
        self.cpu_seconds = 0.0
        self.wall_seconds = 0.0

    def submit(self, key: str, fn: Callable[..., Any], *args: Any) -> None:
        """Queue ``fn(*args)`` (a module-level function and picklable arguments)."""
        self.queue.append((key, fn, args))

    def pending(self) -> int:
        """Jobs not finished yet."""
        return len(self.queue) + (self.running is not None)

    def _start(self) -> None:
        if self.running is not None or not self.queue:
            return
        key, fn, args = self.queue.popleft()
        ctx = context()
        parent, child = ctx.Pipe(duplex=False)
        proc = ctx.Process(target=_child, args=(child, fn, args, self.log_dir, self.name), daemon=True,
                           name=f"seedzer-{self.name}")
        proc.start()
        child.close()
        self.running = (key, proc, parent, time.monotonic())

    def poll(self) -> list[JobResult]:
        """Start the next job if idle; return jobs that finished."""
        self._start()
        if self.running is None:
            return []
        key, proc, conn, started = self.running
        elapsed = time.monotonic() - started
        out: JobResult | None = None
        if conn.poll():
            try:
                outcome, payload, cpu = conn.recv()
                out = JobResult(key, payload if outcome == "ok" else None, None if outcome == "ok" else payload,
                                elapsed, cpu)
            except (EOFError, OSError):
                proc.join(timeout=5)
                out = JobResult(key, error=f"the {self.name} job died ({describe_exit(proc.exitcode)})",
                                seconds=elapsed, cpu_seconds=elapsed)
        elif not proc.is_alive():
            out = JobResult(key, error=f"the {self.name} job died ({describe_exit(proc.exitcode)})", seconds=elapsed,
                            cpu_seconds=elapsed)
        elif elapsed > self.timeout:
            proc.kill()
            out = JobResult(key, error=f"the {self.name} job ran over {self.timeout:.0f}s", seconds=elapsed,
                            cpu_seconds=elapsed)
        if out is None:
            return []
        proc.join(timeout=5)
        conn.close()
        self.running = None
        self.cpu_seconds += out.cpu_seconds
        self.wall_seconds += out.seconds
        self._start()
        return [out]

    def drain(self, budget: float) -> list[JobResult]:
        """Wait up to ``budget`` seconds for outstanding jobs (the rest stay queued: not lost)."""
        out: list[JobResult] = []
        end = time.monotonic() + budget
        while self.pending() and time.monotonic() < end:
            out.extend(self.poll())
            time.sleep(0.05)
        return out

    def close(self) -> None:
        """Kill a running job (it is re-run on resume)."""
        if self.running is not None:
            _, proc, conn, _ = self.running
            if proc.is_alive():
                proc.kill()
            proc.join(timeout=5)
            conn.close()
            self.running = None
