"""A campaign's workers as Ray actors on any node of a cluster (``seedzer fuzz --ray``).

:class:`RayWorkerPool` is an :class:`~seedzer.execute.executor.Executor`: each of its ``jobs`` workers
is a :class:`~seedzer.execute.ray_actor.WorkerActor` (one CPU, never restarted by Ray) that forks its
TVM worker on its node. The campaign keeps the one corpus, coverage map and findings store: a task
carries its parent, and a result its features, so corpus and coverage meet in the campaign; findings
are deduplicated there. Traffic is batched in both directions, as AFL's ``-M/-S`` sync is: tasks
chosen between two polls go to an actor in one call, each actor is kept :data:`AHEAD` tasks ahead, and
that call is also the actor's long-poll: it returns every event since the previous one once
:data:`ANSWERS` results or deaths are among them. Events name the actor's copies of test cases;
:func:`merge` maps them back to the campaign's own :class:`TestCaseInfo` objects, announcements filled
in as :class:`~seedzer.execute.pool.WorkerPool` does.

Each actor takes on the campaign's thread-pool variables and niceness (a
:class:`~seedzer.execute.ray_actor.ProcessEnvironment`) before it forks its worker: Ray runs its
workers at niceness 15 with ``OMP_NUM_THREADS`` set to their CPUs, and TVM's runtime sizes its thread
pool by it, so a test case would otherwise not run as it does in a local campaign.

An actor lost with its process or node is reported as a worker killed by SIGKILL (never a finding),
its outstanding tasks dropped, and a new actor started anywhere; what the campaign already received
stays. Ray is imported only here, when the pool is built.
"""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from seedzer.errors import CampaignError
from seedzer.execute.ray_actor import ActorStart, Batch, ProcessEnvironment, WorkerActor
from seedzer.execute.ray_cluster import import_ray
from seedzer.execute.records import Death, Task, TestCaseInfo, WorkerEvent
from seedzer.execute.worker import worker_main
from seedzer.kernel.common import Stage

AHEAD = 5
"""Tasks an actor is given ahead of its answers: the one its worker runs, one in the worker's pipe and
the rest in the actor's queue, so the worker never waits for the campaign while :data:`ANSWERS`
answers travel together."""
ANSWERS = 3
"""Results (or deaths) one long-poll returns together: a third of the round trips of one per test case
(each costs ~2 ms of processor between campaign and actor), while the worker still has two tasks on
its node."""
LINGER_SECONDS = 0.3
"""How long an answer waits on the node for the next one of its batch (a slow test case's answer
still reaches the campaign promptly)."""
COLLECT_SECONDS = 1.0
"""How long one long-poll waits on the node for an answer before returning empty."""
START_SECONDS = 60.0
"""How long the pool waits, when built, for its actors to start (an actor placed later, when a node
with a free CPU joins, starts fuzzing then)."""
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

    if event.kind == "death":
        dropped = tuple(d for d in (local(r, True) for r in event.dropped) if d is not None)
        return WorkerEvent("death", index, local(event.tc, True), death=event.death, dropped=dropped)
    tc = local(event.tc, event.kind == "result")
    if tc is None:
        return None
    return WorkerEvent(event.kind, index, tc, result=event.result)


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


class ActorSlot:
    """The campaign's side of one worker actor: what it was sent and has not answered, in order."""

    def __init__(self, index: int, actor: Any, ahead: int, cursor: int) -> None:
        self.index, self.actor, self.ahead = index, actor, ahead
        self.ref: Any = actor.start.remote()
        """The call outstanding: the actor's start, then one exchange at a time (None between two)."""
        self.started: ActorStart | None = None
        self.infos: dict[int, TestCaseInfo] = {}
        """Test cases sent and not answered, in the order sent (the first is the one running)."""
        self.outbox: list[tuple[Task, TestCaseInfo]] = []
        self.pids: list[int | None] = [None]
        self.answered = False
        self.cursor = cursor

    @property
    def has_room(self) -> bool:
        """True once the actor is set up while fewer than ``ahead`` of its tasks are unanswered."""
        return self.started is not None and len(self.infos) < self.ahead

    def submit(self, task: Task, info: TestCaseInfo) -> None:
        """Queue a task; it leaves with the others chosen before the next poll."""
        self.infos[info.tc_id] = info
        self.outbox.append((task, info))

    def exchange(self, sync: CoverageSync) -> None:
        """Start the long-poll once set up and the previous one answered: it carries the tasks queued
        since, and the blocks learned since (for a node-local hit map)."""
        if self.started is None or self.ref is not None:
            return
        marks = sync.log[self.cursor:] if self.started.local_hitmap else []
        self.cursor = len(sync.log)
        self.ref = self.actor.exchange.remote(self.outbox, marks, COLLECT_SECONDS,
                                              max(1, min(ANSWERS, self.ahead - 2)), LINGER_SECONDS)
        self.outbox = []

    def lost(self, exc: BaseException) -> WorkerEvent:
        """The death event of an actor lost with its process or node: the first unanswered task is the
        one that was running, the others were dropped."""
        waiting = list(self.infos.values())
        where = f" on {self.started.node}" if self.started else ""
        death = Death("killed", Stage.MUTATE, None, f"ray actor{where} lost ({type(exc).__name__}: its process or "
                      "node died)", signal.SIGKILL, during_setup=self.started is None)
        return WorkerEvent("death", self.index, waiting[0] if waiting else None, death=death,
                           dropped=tuple(waiting[1:]))


class RayWorkerPool:
    """``jobs`` workers as Ray actors (one CPU each) on any node; see the module's description.

    ``target`` is the worker entry point each actor's pool forks (the real one, or the cheap fake one in
    tests); ``paths`` must be readable on every node (the seed pool); ``ahead``: :data:`AHEAD`.
    """

    def __init__(self, jobs: int, settings: Any, timeouts: dict[Stage, float], *,
                 target: Callable[..., None] = worker_main, paths: Sequence[str] = (), ahead: int = AHEAD) -> None:
        self.ray = import_ray()
        self.settings, self.timeouts, self.target, self.paths, self.ahead = settings, timeouts, target, paths, ahead
        self._actor_class = self.ray.remote(num_cpus=1, max_restarts=0, max_concurrency=4)(WorkerActor)
        self.sync = CoverageSync(settings)
        self.environment = ProcessEnvironment.here()
        self.restarts = 0
        self._setup_deaths = [0] * jobs
        self.slots = [self._slot(i) for i in range(jobs)]
        self._await_start(START_SECONDS)

    def _await_start(self, seconds: float) -> None:
        """Wait up to ``seconds`` for the actors to start, so the campaign records their workers' pids."""
        refs = {s.ref: s for s in self.slots}
        ready, _ = self.ray.wait(list(refs), num_returns=len(refs), timeout=seconds)
        for ref in ready:
            refs[ref].ref = None
            self._answer(refs[ref], ref, [])  # no task was sent yet: a lost actor is only replaced

    def _slot(self, index: int) -> ActorSlot:
        actor = self._actor_class.remote(index, self.settings, self.timeouts, self.target, list(self.paths),
                                         self.sync.blocks, self.sync.initial(), self.environment)
        return ActorSlot(index, actor, self.ahead, len(self.sync.log))

    def idle(self) -> Iterator[ActorSlot]:
        """Actors with room for a task, each offered again while it has room (up to ``ahead`` unanswered):
        everything chosen before the next poll leaves in one call per actor."""
        for s in list(self.slots):
            while s.has_room:
                yield s

    def poll(self, timeout: float) -> list[WorkerEvent]:
        """Send the queued batches, then wait up to ``timeout`` seconds for the actors' answers."""
        for s in self.slots:
            s.exchange(self.sync)
        waiting = {s.ref: s for s in self.slots if s.ref is not None}
        if not waiting:
            return []
        ready, rest = self.ray.wait(list(waiting), num_returns=1, timeout=timeout)
        if ready and rest:
            more, _ = self.ray.wait(rest, num_returns=len(rest), timeout=0)
            ready += more
        out: list[WorkerEvent] = []
        for ref in ready:
            s = waiting[ref]
            s.ref = None
            self._answer(s, ref, out)
        return out

    def _answer(self, s: ActorSlot, ref: Any, out: list[WorkerEvent]) -> None:
        exceptions = self.ray.exceptions
        try:
            answer = self.ray.get(ref)
        except exceptions.RayTaskError:  # an error in the actor's own code: a bug, not a lost node
            raise
        except exceptions.RayError as exc:
            out.append(s.lost(exc))
            self._replace(s)
            return
        if isinstance(answer, ActorStart):
            if answer.error is not None:
                raise CampaignError(answer.error)
            s.started = answer
            s.pids = list(answer.pids)
            self.sync.needed = self.sync.needed or answer.local_hitmap is not None
        else:
            assert isinstance(answer, Batch)
            if answer.error is not None:
                raise CampaignError(answer.error)
            s.pids = answer.pids
            for event in answer.events:
                mine = merge(event, s.infos, s.index)
                if mine is None:
                    continue
                if mine.kind == "result":
                    s.answered = True
                    self._setup_deaths[s.index] = 0
                    if mine.result is not None:
                        self.sync.learn(mine.result.features)
                elif mine.kind == "death":
                    self.restarts += 1  # the actor's pool restarted its worker
                out.append(mine)

    def _replace(self, s: ActorSlot) -> None:
        if not s.answered:
            self._setup_deaths[s.index] += 1
            if self._setup_deaths[s.index] >= ACTOR_SETUP_DEATHS:
                raise CampaignError(f"worker {s.index}: its Ray actor was lost {ACTOR_SETUP_DEATHS} times in a row "
                                    "before it answered once")
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
        """Stop every actor's worker, then the actors."""
        refs = [s.actor.close.remote() for s in self.slots]
        try:
            self.ray.wait(refs, num_returns=len(refs), timeout=15)
        finally:
            for s in self.slots:
                with contextlib.suppress(Exception):  # an actor already gone
                    self.ray.kill(s.actor, no_restart=True)
