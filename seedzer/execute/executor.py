"""The executor interface the campaign drives: workers that take test cases and report events."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

from seedzer.execute.records import Task, TestCaseInfo, WorkerEvent


class WorkerSlot(Protocol):
    """One worker ready for a task (``index``: which worker, stable across its restarts)."""

    index: int

    def submit(self, task: Task, info: TestCaseInfo) -> None:
        """Send ``task``; ``info`` is what the campaign knows about it until the worker answers."""
        ...


class Executor(Protocol):
    """Runs test cases isolated from the campaign and reports what happened.

    The real one is :class:`seedzer.execute.worker_pool.WorkerPool` (TVM workers forked from the zygote);
    tests give the campaign the same pool with the cheap fake worker.
    """

    restarts: int

    def idle(self) -> Iterable[WorkerSlot]:
        """Workers ready for a task."""
        ...

    def poll(self, timeout: float) -> list[WorkerEvent]:
        """Wait up to ``timeout`` seconds for announcements, results and deaths."""
        ...

    def pids(self) -> list[int | None]:
        """Process ids of the current workers."""
        ...

    def close(self) -> None:
        """Stop every worker."""
        ...
