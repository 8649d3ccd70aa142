"""The node side of a campaign's Ray workers: one actor owning a local :class:`WorkerPool` of one worker.

The actor never runs TVM itself: its :class:`~seedzer.execute.pool.WorkerPool` forks the worker from
the node's zygote, so a segfault kills that worker process (restarted by the pool, its death reported
like any other), never the actor or the campaign, and hangs are found on the node by the pool's stage
timeouts. The actor queues the tasks the campaign sends in batches, feeds them to its worker as it has
room, and buffers the worker's events until the campaign's long-poll (:meth:`WorkerActor.exchange`,
which brings the next batch of tasks) takes them. This module does not import Ray:
:mod:`seedzer.execute.ray_pool` wraps the class with ``ray.remote``, and tests drive it directly.

Paths on the node: worker logs go to the campaign's ``logs`` folder when that path exists on the node
(the same machine or a shared file system), else to a node-local temporary folder; the seed pool must
be readable at the same path (graph-level seeds name their model files there), checked at start. A
breakpoints hit map not found at the campaign's path is replaced by a node-local copy, kept in step with
the campaign's coverage by the block marks each batch of tasks carries (AFL's ``-M/-S`` sync).
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import os
import socket
import tempfile
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from multiprocessing.connection import wait
from pathlib import Path
from typing import Any

from seedzer.errors import SeedzerError
from seedzer.execute.pool import WorkerPool
from seedzer.execute.records import Task, TestCaseInfo, WorkerEvent
from seedzer.execute.worker import worker_main
from seedzer.kernel.common import Stage

LOOP_SECONDS = 0.1
"""How long the actor's loop waits before it looks for hangs (it wakes at each of the worker's messages,
at its death, and when a batch of tasks arrives)."""


@dataclass(frozen=True)
class ActorStart:
    """What an actor reports once set up: where it runs, or why it cannot (``error``, one line)."""

    pid: int
    node: str
    log_dir: str | None
    local_hitmap: str | None = None
    error: str | None = None
    pids: tuple[int | None, ...] = ()
    """The worker's pid on the node."""


@dataclass
class Batch:
    """Everything the actor's worker did since the previous exchange, and the worker's current pid.

    ``error`` is a reason the campaign must stop (a worker that cannot start, see :class:`Fatal`).
    """

    events: list[WorkerEvent] = field(default_factory=list)
    pids: list[int | None] = field(default_factory=list)
    error: str | None = None


THREAD_VARIABLES = ("OMP_NUM_THREADS", "TVM_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")
"""Variables that size thread pools (TVM's runtime follows ``TVM_NUM_THREADS``, else ``OMP_NUM_THREADS``):
Ray sets ``OMP_NUM_THREADS`` to an actor's CPUs when unset."""


@dataclass(frozen=True)
class ProcessEnvironment:
    """What a worker forked by the campaign's own process inherits and a Ray actor's process changes:
    the thread-pool variables (``None``: unset) and the scheduling niceness (Ray runs its workers at
    15). An actor applies the campaign's before it forks its worker, so a test case runs as it would
    in a local campaign."""

    variables: tuple[tuple[str, str | None], ...]
    niceness: int

    @classmethod
    def here(cls) -> ProcessEnvironment:
        """This process's."""
        return cls(tuple((name, os.environ.get(name)) for name in THREAD_VARIABLES), os.nice(0))

    def apply(self) -> None:
        """Make this process's environment this one; a niceness it may not lower (without the privilege
        to) stays as it is."""
        for name, value in self.variables:
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        if self.niceness != os.nice(0):
            with contextlib.suppress(OSError):
                os.setpriority(os.PRIO_PROCESS, 0, self.niceness)


def check_paths(paths: Sequence[str], node: str) -> str | None:
    """A one-line error when one of ``paths`` (the seed pool) cannot be read on this node, else None."""
    for path in paths:
        readable = (os.path.isdir(path) and os.access(path, os.R_OK | os.X_OK)) or \
            (os.path.isfile(path) and os.access(path, os.R_OK))
        if not readable:
            return (f"ray worker on node {node}: {path} is not readable there (the seed pool's model files must "
                    "be at the same path on every node: a shared file system or a copy)")
    return None


def node_settings(settings: Any, node_dir: Callable[[], str], blocks: int = 0,
                  marks: Sequence[int] = ()) -> tuple[Any, str | None]:
    """``settings`` as a worker on this node needs them, and the path of a node-local hit map (or None).

    The log folder stays when it exists here, else becomes ``node_dir()`` (a node-local temporary
    folder); a breakpoints hit map absent here is created in ``node_dir()`` with ``blocks`` bytes and
    ``marks`` (the blocks the campaign knows) marked.
    """
    out = copy.copy(settings)
    log_dir = getattr(settings, "log_dir", None)
    if log_dir is not None and not os.path.isdir(log_dir):
        out.log_dir = node_dir()
    spec = getattr(settings, "collector", None)
    hitmap = spec.options.get("hitmap") if spec is not None and spec.name == "breakpoints" else None
    if hitmap is None or os.path.exists(hitmap):
        return out, None
    from seedzer.coverage.hitmap import HitMap

    assert spec is not None
    local = str(Path(node_dir()) / Path(hitmap).name)
    HitMap.create(local, blocks).mark(marks)
    out.collector = dataclasses.replace(spec, options={**spec.options, "hitmap": local})
    return out, local


class WorkerActor:
    """One campaign worker on a Ray node (index ``index`` in the campaign): a local pool of one worker.

    ``start`` sets it up; ``exchange`` queues a batch of tasks (with the campaign's test-case infos,
    copied here) and returns the events since the last call once some answers are in. A background
    thread owns the pool: it feeds queued tasks as the worker has room and polls the worker.
    """

    def __init__(self, index: int, settings: Any, timeouts: dict[Stage, float],
                 target: Callable[..., None] = worker_main, paths: Sequence[str] = (), blocks: int = 0,
                 marks: Sequence[int] = (), environment: ProcessEnvironment | None = None) -> None:
        self.index, self.settings, self.timeouts, self.target = index, settings, timeouts, target
        self.environment = environment
        self.paths, self.blocks, self.marks = list(paths), blocks, list(marks)
        self.pool: WorkerPool | None = None
        self.hitmap: Any = None
        self._queued: deque[tuple[Task, TestCaseInfo]] = deque()
        self._events: list[WorkerEvent] = []
        self._error: str | None = None
        self._news = threading.Condition()
        self._closing = False
        self._thread: threading.Thread | None = None
        self._tmp: str | None = None
        self._wake_r, self._wake_w = os.pipe()
        os.set_blocking(self._wake_w, False)

    def _node_dir(self) -> str:
        if self._tmp is None:
            self._tmp = tempfile.mkdtemp(prefix=f"seedzer-ray-worker-{self.index}-")
        return self._tmp

    def start(self) -> ActorStart:
        """Check the paths, take on the campaign's environment, start the worker and the loop; report
        where this actor runs."""
        node = socket.gethostname()
        error = check_paths(self.paths, node)
        if error is not None:
            return ActorStart(os.getpid(), node, None, error=error)
        settings, local = node_settings(self.settings, self._node_dir, self.blocks, self.marks)
        if local is not None:
            from seedzer.coverage.hitmap import HitMap

            self.hitmap = HitMap(local, self.blocks)
        if self.environment is not None:
            self.environment.apply()  # before the pool starts the zygote its worker is forked from
        self.pool = WorkerPool(1, settings, self.timeouts, self.target, first=self.index)
        self._thread = threading.Thread(target=self._loop, name=f"seedzer-ray-worker-{self.index}", daemon=True)
        self._thread.start()
        return ActorStart(os.getpid(), node, getattr(settings, "log_dir", None), local, pids=tuple(self.pids()))

    def exchange(self, batch: list[tuple[Task, TestCaseInfo]], marks: Sequence[int] = (), timeout: float = 1.0,
                 answers: int = 1, linger: float = 0.0) -> Batch:
        """Queue ``batch`` for the worker and mark ``marks`` (blocks the campaign reached) in a node-local
        hit map; then return every event since the last call, once ``answers`` of them are results or
        deaths, or ``linger`` seconds after the first answer, or after ``timeout`` seconds (maybe none).

        One call both ways: the campaign keeps one outstanding per actor (a long-poll), and the worker,
        several tasks ahead, never waits for the next call."""
        if marks and self.hitmap is not None:
            self.hitmap.mark(marks)
        if batch:
            with self._news:
                self._queued.extend(batch)
            self._wake()
        return self._collect(timeout, answers, linger)

    def _collect(self, timeout: float, answers: int, linger: float) -> Batch:
        start = time.monotonic()
        first: float | None = None
        with self._news:
            while self._error is None:
                now = time.monotonic()
                got = sum(ev.kind != "tc" for ev in self._events)
                if got and first is None:
                    first = now
                if got >= answers or (first is not None and now - first >= linger):
                    break
                left = min(start + timeout, first + linger if first is not None else start + timeout) - now
                if left <= 0:
                    break
                self._news.wait(left)
            events, self._events = self._events, []
            error = self._error
        return Batch(events, self.pids(), error)

    def pids(self) -> list[int | None]:
        """The pid of the actor's worker process (it changes when the worker is restarted)."""
        return self.pool.pids() if self.pool is not None else [None]

    def actor_pid(self) -> int:
        """The pid of the actor's own process."""
        return os.getpid()

    def _loop(self) -> None:
        assert self.pool is not None
        pool = self.pool
        try:
            while not self._closing:
                with self._news:
                    while self._queued:
                        w = next(iter(pool.idle()), None)
                        if w is None:
                            break
                        w.submit(*self._queued.popleft())
                # the worker's pipe and process, and the wake-up pipe a new batch writes to
                ready = wait([self._wake_r, *(x for w in pool.workers for x in (w.conn, w.proc.sentinel))],
                             LOOP_SECONDS)
                if self._wake_r in ready:
                    os.read(self._wake_r, 4096)
                events = pool.poll(0)
                if events:
                    with self._news:
                        self._events.extend(events)
                        self._news.notify_all()
        except SeedzerError as exc:  # a worker that cannot start: the campaign stops with the reason
            with self._news:
                self._error = str(exc)
                self._news.notify_all()

    def _wake(self) -> None:
        with contextlib.suppress(BlockingIOError):  # a full pipe wakes the loop already
            os.write(self._wake_w, b"!")

    def close(self) -> None:
        """Stop the loop and the worker."""
        self._closing = True
        self._wake()
        if self._thread is not None:
            self._thread.join(timeout=10)
        if self.pool is not None:
            self.pool.close()
        for fd in (self._wake_r, self._wake_w):
            with contextlib.suppress(OSError):
                os.close(fd)
