"""The node side of a campaign's Ray workers: one actor owning a local :class:`WorkerPool` of one worker.

The actor never runs TVM itself: its :class:`~seedzer.execute.worker_pool.WorkerPool` forks the worker from
the node's zygote, so a segfault kills that worker process (restarted by the pool, its death reported
like any other), never the actor or the campaign, and hangs are found on the node by the pool's stage
timeouts.

Tasks and events do not travel as Ray calls. :meth:`WorkerActor.start` opens a listening socket on the
node (on loopback when the node is the campaign's machine; the campaign's secret key authenticates the
one connection it takes) and reports its address;
the campaign connects, and :meth:`WorkerActor.run`, one long call on the actor's main thread, serves
that connection until the campaign says :class:`~seedzer.execute.records.Stop` or goes away: it feeds
the tasks that arrive (:class:`Tasks`) to its worker as it has room, and sends the worker's events back
(:class:`Batch`) as they happen, over the same kind of pickled-message connection a local worker's
pipe is. Ray keeps what it is good at: placing the actor, its lifetime (it dies with the campaign), and
noticing a lost node (the call to ``run`` fails). One call that never returns spares the actor the
processor time and the wake-ups of Ray's task loop that a Ray call per batch costs
(docs/measurements.md, 'Workers and isolation'). This module does not import Ray:
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
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from multiprocessing import AuthenticationError
from multiprocessing.connection import Connection, Listener, wait
from pathlib import Path
from typing import Any

from seedzer.errors import SeedzerError
from seedzer.execute.records import Stop, Task, TestCaseInfo, WorkerEvent
from seedzer.execute.worker import worker_main
from seedzer.execute.worker_pool import WorkerPool
from seedzer.kernel.common import Stage

LOOP_SECONDS = 0.1
"""How long the actor's loop waits before it looks for hangs (it wakes at each of the worker's messages,
at its death, and when the campaign's tasks arrive)."""
LOOPBACK = "127.0.0.1"


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
    address: tuple[str, int] | None = None
    """Where the actor listens for the campaign's connection."""


@dataclass
class Batch:
    """What the actor's worker did since the previous batch, and the worker's current pid.

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


@dataclass(frozen=True)
class Tasks:
    """What the campaign sends an actor: tasks for its worker (with the campaign's test-case infos) and
    the blocks the campaign learned since the last message (for a node-local hit map)."""

    batch: list[tuple[Task, TestCaseInfo]]
    marks: list[int] = field(default_factory=list)


class WorkerActor:
    """One campaign worker on a Ray node (index ``index`` in the campaign): a local pool of one worker.

    ``start`` sets it up and opens the socket the campaign connects to (``authkey`` authenticates it);
    ``run`` serves that connection until told to stop. See the module's description.
    """

    def __init__(self, index: int, settings: Any, timeouts: dict[Stage, float],
                 target: Callable[..., None] = worker_main, paths: Sequence[str] = (), blocks: int = 0,
                 marks: Sequence[int] = (), environment: ProcessEnvironment | None = None,
                 authkey: bytes = b"", campaign_host: str | None = None) -> None:
        self.index, self.settings, self.timeouts, self.target = index, settings, timeouts, target
        self.environment, self.authkey, self.campaign_host = environment, authkey, campaign_host
        self.paths, self.blocks, self.marks = list(paths), blocks, list(marks)
        self.pool: WorkerPool | None = None
        self.hitmap: Any = None
        self.listener: Listener | None = None
        self._queued: deque[tuple[Task, TestCaseInfo]] = deque()
        self._tmp: str | None = None

    def _node_dir(self) -> str:
        if self._tmp is None:
            self._tmp = tempfile.mkdtemp(prefix=f"seedzer-ray-worker-{self.index}-")
        return self._tmp

    def node_address(self) -> str:
        """This node's address in the cluster: loopback here; the Ray actor's class gives its node's."""
        return LOOPBACK

    def listen_address(self) -> str:
        """Where to listen for the campaign: loopback on the campaign's own machine (``campaign_host``, or
        None: no other machine takes part), so nothing outside it can reach the socket; else the node's
        address in the cluster."""
        node = self.node_address()
        return LOOPBACK if self.campaign_host in (None, node) else node

    def start(self) -> ActorStart:
        """Check the paths, take on the campaign's environment, start the worker and listen for the
        campaign; report where this actor runs and where it listens."""
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
        self.listener = Listener((self.listen_address(), 0), "AF_INET", authkey=self.authkey)
        host, port = self.listener.address
        return ActorStart(os.getpid(), node, getattr(settings, "log_dir", None), local, pids=tuple(self.pids()),
                          address=(str(host), int(port)))

    def run(self) -> None:
        """Take the campaign's connection and serve it until the campaign sends ``Stop`` or is gone: feed
        its tasks to the worker, send back every event with the worker's pid; a worker that cannot start
        is reported as the batch's ``error``, and the loop ends."""
        assert self.pool is not None and self.listener is not None, "start() first"
        pool = self.pool
        conn = self._accept(self.listener)
        if conn is None:
            self.close()
            return
        try:
            while self._receive(conn):
                while self._queued:
                    w = next(iter(pool.idle()), None)
                    if w is None:
                        break
                    w.submit(*self._queued.popleft())
                wait([conn, *(x for w in pool.workers for x in (w.conn, w.proc.sentinel))], LOOP_SECONDS)
                try:
                    events = pool.poll(0)
                except SeedzerError as exc:  # a worker that cannot start: the campaign stops with the reason
                    conn.send(Batch([], self.pids(), str(exc)))
                    return
                if events:
                    conn.send(Batch(events, self.pids()))
        except (OSError, EOFError):  # the campaign is gone
            return
        finally:
            conn.close()
            self.close()

    @staticmethod
    def _accept(listener: Listener) -> Connection | None:
        """The first connection that proves it holds the campaign's key (others are turned away); None
        once the listener is closed."""
        while True:
            try:
                return listener.accept()
            except (EOFError, AuthenticationError, ConnectionError):  # a stranger, or one that left
                continue
            except OSError:
                return None

    def _receive(self, conn: Connection) -> bool:
        """Take in every message waiting on ``conn``; False once the campaign says stop."""
        while conn.poll():
            msg = conn.recv()
            if isinstance(msg, Stop):
                return False
            assert isinstance(msg, Tasks)
            if msg.marks and self.hitmap is not None:
                self.hitmap.mark(msg.marks)
            self._queued.extend(msg.batch)
        return True

    def pids(self) -> list[int | None]:
        """The pid of the actor's worker process (it changes when the worker is restarted)."""
        return self.pool.pids() if self.pool is not None else [None]

    def close(self) -> None:
        """Stop listening and stop the worker (``run`` does this as it ends)."""
        if self.listener is not None:
            with contextlib.suppress(OSError):
                self.listener.close()
            self.listener = None
        if self.pool is not None:
            self.pool.close()
            self.pool = None
