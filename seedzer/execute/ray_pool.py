"""A campaign's workers as Ray actors on any node of a cluster (``seedzer fuzz --ray``).

:class:`RayWorkerPool` is an :class:`~seedzer.execute.executor.Executor`: each of its ``jobs`` workers
is a :class:`~seedzer.execute.ray_actor.WorkerActor` (one CPU, never restarted by Ray) that forks its
TVM worker on its node. The campaign keeps the one corpus, coverage map and findings store: a task
carries its parent, and a result its features, so corpus and coverage meet in the campaign; findings
are deduplicated there. Tasks and events travel over one direct, authenticated connection per
actor (see :mod:`seedzer.execute.ray_actor`), not as Ray calls: tasks chosen between two polls go to an
actor in one message, each actor is kept :data:`AHEAD` tasks ahead, and its worker's events come back as
they happen. Events name the actor's copies of test cases; :func:`merge` maps them back to the
campaign's own :class:`TestCaseInfo` objects, announcements filled in as
:class:`~seedzer.execute.worker_pool.WorkerPool` does.

Each actor takes on the campaign's thread-pool variables and niceness (a
:class:`~seedzer.execute.ray_actor.ProcessEnvironment`) before it forks its worker: Ray runs its
workers at niceness 15 with ``OMP_NUM_THREADS`` set to their CPUs, and TVM's runtime sizes its thread
pool by it, so a test case would otherwise not run as it does in a local campaign.

An actor lost with its process or node (its connection closes, or Ray reports its ``run`` call failed)
is reported as a worker killed by SIGKILL (never a finding),
its outstanding tasks dropped, and a new actor started anywhere; what the campaign already received
stays. Ray is imported only here, when the pool is built.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Callable, Iterator, Sequence
from multiprocessing import AuthenticationError
from multiprocessing.connection import Client, Connection, wait
from typing import Any

from seedzer.errors import CampaignError
from seedzer.execute.ray_actor import ActorStart, Batch, ProcessEnvironment, Tasks, WorkerActor
from seedzer.execute.ray_cluster import import_ray
from seedzer.execute.records import Death, Stop, Task, TestCaseInfo, WorkerEvent
from seedzer.execute.worker import worker_main
from seedzer.kernel.common import Stage

AHEAD = 3
"""Tasks an actor is given ahead of its answers: the one its worker runs, one in the worker's pipe (as a
local worker has, see :data:`~seedzer.execute.worker_pool.QUEUED_TASKS`) and one waiting in the actor, so the
worker never waits for the campaign."""
START_SECONDS = 60.0
"""How long the pool waits, when built, for its actors to start (an actor placed later, when a node
with a free CPU joins, starts fuzzing then)."""
WATCH_SECONDS = 1.0
"""How often the campaign asks Ray whether an actor's ``run`` call has ended (a node lost without its
connection closing, as a network cut leaves it)."""
ENDING_SECONDS = 2.0
"""How long the campaign waits for Ray to say why an actor's connection closed (its own bug, or a lost
process or node)."""
ACTOR_SETUP_DEATHS = 5
"""Consecutive losses of one worker's actor before it ever answered that stop the campaign."""


def merge(event: WorkerEvent, infos: dict[int, TestCaseInfo], index: int) -> WorkerEvent | None:
    """The campaign's view of an actor's ``event``: its test cases replaced by the campaign's own
    objects from ``infos`` (by ``tc_id``), announcements copied into them, answered ones removed from
    ``infos``. None for an event about a test case the campaign no longer waits for."""

    def local(remote: TestCaseInfo | None, answered: bool) -> TestCaseInfo | None:
        if remote is None:
            return None
        info = infos.pop(remote.tc_id, None) if answered else infos.get(remote.tc_id)
        if info is not None and remote.announced:
            info.script, info.passes, info.mutators, info.announced = (remote.script, remote.passes,
                                                                        list(remote.mutators), True)
            info.case = remote.case
        return info

    if event.what == "death":
        dropped = tuple(d for d in (local(r, True) for r in event.dropped) if d is not None)
        return WorkerEvent("death", index, local(event.tc, True), death=event.death, dropped=dropped)
    tc = local(event.tc, event.what == "result")
    if tc is None:
        return None
    return WorkerEvent(event.what, index, tc, result=event.result)


class CoverageSync:
    """Breakpoint coverage for node-local hit maps: blocks the campaign learns of are marked in its own
    map and sent, in the next batch of tasks, to every actor whose node has a copy of its own."""

    def __init__(self, settings: Any) -> None:
        spec = getattr(settings, "collector", None)
        self.path: str | None = spec.options.get("hitmap") if spec is not None and spec.name == "breakpoints" else None
        self.options = spec.options if spec is not None else {}
        self.blocks = os.path.getsize(self.path) if self.path and os.path.exists(self.path) else 0
        self.log: list[int] = []
        """Blocks learned from results, in order (an actor's cursor says how many it has)."""
        self.needed = False
        """True once an actor runs with a node-local map (until then every worker marks the campaign's)."""
        self._table: Any = None
        self._map: Any = None

    def initial(self) -> list[int]:
        """Blocks marked in the campaign's map now (a new node-local copy starts with them)."""
        if not self.blocks or self.path is None:
            return []
        import numpy as np

        return np.flatnonzero(np.fromfile(self.path, dtype=np.uint8, count=self.blocks)).tolist()

    def learn(self, features: Sequence[str]) -> None:
        """Take in a result's features (the campaign dedups them; marking twice is harmless)."""
        if not self.needed or not self.blocks:
            return
        bp = [f for f in features if f.startswith("bp:")]
        if not bp:
            return
        if self._table is None:
            from seedzer.coverage.blocktable import load_or_build
            from seedzer.coverage.hitmap import HitMap

            self._table = load_or_build(self.options["library"], self.options["cache_dir"],
                                        self.options["granularity"], progress=False)
            self._map = HitMap(str(self.path), self.blocks)
        indices = self._table.indices_of(bp).tolist()
        self._map.mark(indices)
        self.log.extend(indices)


def node_ip(ray: Any) -> str:
    """This process's node's IP address as the cluster knows it (``ray start --node-ip-address``: what the
    other nodes reach it by), not the address of the machine's default route, which
    ``ray.util.get_node_ip_address`` gives."""
    here = ray.get_runtime_context().get_node_id()
    for node in ray.nodes():
        if node.get("NodeID") == here and node.get("NodeManagerAddress"):
            return str(node["NodeManagerAddress"])
    return str(ray.util.get_node_ip_address())


class NodeWorkerActor(WorkerActor):
    """The worker actor as Ray places it: it knows its node's address in the cluster."""

    def node_address(self) -> str:
        """The actor's node's IP address in the cluster."""
        import ray

        return node_ip(ray)


class ActorSlot:
    """The campaign's side of one worker actor: its calls, its connection, what it was sent and has not
    answered, in order."""

    def __init__(self, index: int, actor: Any, ahead: int, cursor: int) -> None:
        self.index, self.actor, self.ahead = index, actor, ahead
        self.start_ref: Any = actor.start.remote()
        """The actor's start call until it answered (then None)."""
        self.run_ref: Any = None
        """The actor's ``run`` call, outstanding while it serves the campaign."""
        self.conn: Connection | None = None
        self.started: ActorStart | None = None
        self.infos: dict[int, TestCaseInfo] = {}
        """Test cases sent and not answered, in the order sent (the first is the one running)."""
        self.outbox: list[tuple[Task, TestCaseInfo]] = []
        self.pids: list[int | None] = [None]
        self.answered = False
        self.cursor = cursor

    @property
    def has_room(self) -> bool:
        """True once connected to the actor while fewer than ``ahead`` of its tasks are unanswered."""
        return self.conn is not None and len(self.infos) < self.ahead

    def submit(self, task: Task, info: TestCaseInfo) -> None:
        """Queue a task; it leaves with the others chosen before the next poll."""
        self.infos[info.tc_id] = info
        self.outbox.append((task, info))

    def send(self, sync: CoverageSync) -> None:
        """Send the tasks queued since the last poll, with the blocks learned since (for a node-local hit
        map); raises OSError when the actor is gone."""
        if self.conn is None or self.started is None:
            return
        marks = sync.log[self.cursor:] if self.started.local_hitmap else []
        if not self.outbox and not marks:
            return
        self.cursor = len(sync.log)
        batch, self.outbox = self.outbox, []
        self.conn.send(Tasks(batch, marks))

    def lost(self, exc: BaseException) -> WorkerEvent:
        """The death event of an actor lost with its process or node: the first unanswered task is the
        one that was running, the others were dropped."""
        waiting = list(self.infos.values())
        where = f" on {self.started.node}" if self.started else ""
        death = Death("killed", Stage.MUTATE, None, f"ray actor{where} lost ({type(exc).__name__}: its process or "
                      "node died)", signal.SIGKILL, during_setup=self.started is None)
        return WorkerEvent("death", self.index, waiting[0] if waiting else None, death=death,
                           dropped=tuple(waiting[1:]))

    def disconnect(self) -> None:
        """Close the connection to the actor (once it is lost or stopped)."""
        if self.conn is not None:
            with contextlib.suppress(OSError):
                self.conn.close()
            self.conn = None


class RayWorkerPool:
    """``jobs`` workers as Ray actors (one CPU each) on any node; see the module's description.

    ``target`` is the worker entry point each actor's pool forks (the real one, or the cheap fake one in
    tests); ``paths`` must be readable on every node (the seed pool); ``ahead``: :data:`AHEAD`;
    ``actor_class``: the node side (:class:`NodeWorkerActor`, or a test's variant of it).
    """

    def __init__(self, jobs: int, settings: Any, timeouts: dict[Stage, float], *,
                 target: Callable[..., None] = worker_main, paths: Sequence[str] = (), ahead: int = AHEAD,
                 actor_class: type[WorkerActor] = NodeWorkerActor) -> None:
        self.ray = import_ray()
        self.settings, self.timeouts, self.target, self.paths, self.ahead = settings, timeouts, target, paths, ahead
        self._actor_class = self.ray.remote(num_cpus=1, max_restarts=0)(actor_class)
        self.sync = CoverageSync(settings)
        self.environment = ProcessEnvironment.here()
        self.authkey = os.urandom(32)
        """The secret an actor's connection is authenticated by (sent to the actors through Ray)."""
        self.host = node_ip(self.ray)
        """The campaign's node: an actor on the same machine listens on loopback only."""
        self.restarts = 0
        self._setup_deaths = [0] * jobs
        self._watched = time.monotonic()
        self.slots = [self._slot(i) for i in range(jobs)]
        self._await_start(START_SECONDS)

    def _await_start(self, seconds: float) -> None:
        """Wait up to ``seconds`` for the actors to start, so the campaign records their workers' pids."""
        refs = {s.start_ref: s for s in self.slots}
        ready, _ = self.ray.wait(list(refs), num_returns=len(refs), timeout=seconds)
        for ref in ready:
            self._started(refs[ref], [])  # no task was sent yet: a lost actor is only replaced

    def _slot(self, index: int) -> ActorSlot:
        actor = self._actor_class.remote(index, self.settings, self.timeouts, self.target, list(self.paths),
                                         self.sync.blocks, self.sync.initial(), self.environment, self.authkey,
                                         self.host)
        return ActorSlot(index, actor, self.ahead, len(self.sync.log))

    def idle(self) -> Iterator[ActorSlot]:
        """Actors with room for a task, each offered again while it has room (up to ``ahead`` unanswered):
        everything chosen before the next poll leaves in one message per actor."""
        for s in list(self.slots):
            while s.has_room:
                yield s

    def poll(self, timeout: float) -> list[WorkerEvent]:
        """Send the queued tasks, then wait up to ``timeout`` seconds for the actors' events (and for
        actors still starting)."""
        out: list[WorkerEvent] = []
        for s in list(self.slots):
            try:
                s.send(self.sync)
            except OSError as exc:
                self._lose(s, exc, out)
        starting = {s.start_ref: s for s in self.slots if s.start_ref is not None}
        conns: dict[Any, ActorSlot] = {s.conn: s for s in self.slots if s.conn is not None}
        if starting:
            ready, _ = self.ray.wait(list(starting), num_returns=len(starting), timeout=0 if conns else timeout)
            for ref in ready:
                self._started(starting[ref], out)
            timeout = min(timeout, 0.05)
        for conn in wait(list(conns), timeout) if conns else ():
            self._drain(conns[conn], out)
        self._watch(out)
        return out

    def _started(self, s: ActorSlot, out: list[WorkerEvent]) -> None:
        """Take an actor's answer to ``start``; connect to it while it begins to serve (``run``)."""
        exceptions = self.ray.exceptions
        ref, s.start_ref = s.start_ref, None
        try:
            answer = self.ray.get(ref)
        except exceptions.RayTaskError:  # an error in the actor's own code: a bug, not a lost node
            raise
        except exceptions.RayError as exc:
            self._lose(s, exc, out)
            return
        assert isinstance(answer, ActorStart)
        if answer.error is not None:
            raise CampaignError(answer.error)
        assert answer.address is not None
        s.started, s.pids = answer, list(answer.pids)
        self.sync.needed = self.sync.needed or answer.local_hitmap is not None
        s.run_ref = s.actor.run.remote()  # it accepts the connection below
        try:
            s.conn = Client(answer.address, "AF_INET", authkey=self.authkey)
        except (OSError, EOFError, AuthenticationError) as exc:
            host, port = answer.address
            self._lose(s, ConnectionError(f"cannot connect to {host}:{port}: {exc}"), out)

    def _drain(self, s: ActorSlot, out: list[WorkerEvent]) -> None:
        """Take every batch waiting on an actor's connection; a closed one is a lost actor."""
        assert s.conn is not None
        while True:
            try:
                if not s.conn.poll():
                    return
                answer = s.conn.recv()
            except (EOFError, OSError) as exc:
                self._lose(s, self._ending(s, exc), out)
                return
            assert isinstance(answer, Batch)
            if answer.error is not None:
                raise CampaignError(answer.error)
            s.pids = answer.pids
            for event in answer.events:
                mine = merge(event, s.infos, s.index)
                if mine is None:
                    continue
                if mine.what == "result":
                    s.answered = True
                    self._setup_deaths[s.index] = 0
                    if mine.result is not None:
                        self.sync.learn(mine.result.features)
                elif mine.what == "death":
                    self.restarts += 1  # the actor's pool restarted its worker
                out.append(mine)

    def _ending(self, s: ActorSlot, exc: BaseException) -> BaseException:
        """Why an actor's connection closed, as Ray tells it within :data:`ENDING_SECONDS`; an error in the
        actor's own code is raised (a bug, not a lost node)."""
        if s.run_ref is None:
            return exc
        ready, _ = self.ray.wait([s.run_ref], timeout=ENDING_SECONDS)
        if not ready:
            return exc
        try:
            self.ray.get(ready[0])
        except self.ray.exceptions.RayTaskError:
            raise
        except self.ray.exceptions.RayError as err:
            return err
        return exc

    def _watch(self, out: list[WorkerEvent]) -> None:
        """Every :data:`WATCH_SECONDS`, replace the actors whose ``run`` call has ended (Ray noticed their
        process or node gone before their connection did)."""
        now = time.monotonic()
        if now - self._watched < WATCH_SECONDS:
            return
        self._watched = now
        running = {s.run_ref: s for s in self.slots if s.run_ref is not None}
        if not running:
            return
        ready, _ = self.ray.wait(list(running), num_returns=len(running), timeout=0)
        for ref in ready:
            s = running[ref]
            if s.conn is not None:
                self._drain(s, out)  # what it sent before it ended
            if self.slots[s.index] is s:  # not lost while draining
                self._lose(s, self._ending(s, ConnectionError("its run call ended")), out)

    def _lose(self, s: ActorSlot, exc: BaseException, out: list[WorkerEvent]) -> None:
        """Report an actor lost with its process or node, and start a new one in its place."""
        out.append(s.lost(exc))
        s.disconnect()
        if not s.answered:
            self._setup_deaths[s.index] += 1
            if self._setup_deaths[s.index] >= ACTOR_SETUP_DEATHS:
                raise CampaignError(f"worker {s.index}: its Ray actor was lost {ACTOR_SETUP_DEATHS} times in a row "
                                    f"before it answered once (last: {type(exc).__name__}: "
                                    f"{str(exc).splitlines()[0] if str(exc) else ''})")
        self.ray.kill(s.actor, no_restart=True)
        self.slots[s.index] = self._slot(s.index)
        self.restarts += 1

    def pids(self) -> list[int | None]:
        """Process ids of the workers on their nodes (None until an actor reports)."""
        return [pid for s in self.slots for pid in s.pids]

    def actor_pids(self) -> list[int | None]:
        """Process ids of the actors on their nodes (None before one started)."""
        return [s.started.pid if s.started else None for s in self.slots]

    def nodes(self) -> list[str | None]:
        """Host names of the nodes the actors run on (None before one started)."""
        return [s.started.node if s.started else None for s in self.slots]

    def close(self) -> None:
        """Tell every actor to stop (it stops its worker), wait for them, then end the actors."""
        for s in self.slots:
            if s.conn is not None:
                with contextlib.suppress(OSError):
                    s.conn.send(Stop())
        refs = [s.run_ref for s in self.slots if s.run_ref is not None]
        try:
            if refs:
                self.ray.wait(refs, num_returns=len(refs), timeout=15)
        finally:
            for s in self.slots:
                s.disconnect()
                with contextlib.suppress(Exception):  # an actor already gone
                    self.ray.kill(s.actor, no_restart=True)
