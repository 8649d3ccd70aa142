"""What a worker with room runs next: a pending seed as it is, else a mutant of a chosen corpus entry.

A level is drawn by the allocation's weights (:mod:`seedzer.campaign.allocator`: the configured ones,
or adapted to what the levels yield) among those the corpus has entries of, then an entry by that
level's scheduler, kept with the probability of its energy (its seed model's yield and its fatigue:
:data:`ENERGY_DRAWS`) and drawn again while it is an entry another worker ran (:data:`AFFINITY_DRAWS`).
The task carries the factors the worker applies to its level's mutation weights. The mutant's stage
limits are relative to its parent's measured cost (:meth:`Feeder.relative_limits`).
"""

from __future__ import annotations

import random
from collections.abc import Mapping

from seedzer.campaign.allocator import Allocator
from seedzer.campaign.pending import PendingSeeds
from seedzer.campaign.scheduler import Scheduler, make_scheduler
from seedzer.config import RARITY, Config
from seedzer.execute.executor import WorkerSlot
from seedzer.execute.records import ExecTask, FuzzTask, TestCaseInfo
from seedzer.kernel.common import Stage
from seedzer.store.corpus import Corpus, CorpusEntry

AFFINITY_DRAWS = 8
"""Extra draws of the scheduler for an entry the asking worker ran itself (see :meth:`Feeder.choose_for`):
with two workers, ``n`` draws leave 1 choice in ``2 ** (n + 1)`` to another's entry, which costs a parse
(why this value: docs/measurements.md, 'Campaign loop')."""
ENERGY_DRAWS = 16
"""Most draws of the scheduler until one entry is kept with the probability of its energy (the last
drawn is taken): the chosen entries follow the scheduler's weights times the entries' energies, and an
entry of the least energy (1/16 of a tired one of the weakest model) still costs a few draws only."""


class Feeder:
    """Makes the test cases workers run; owns the campaign's random stream, its schedulers (one per
    level) and the test case counter."""

    def __init__(self, cfg: Config, corpus: Corpus, pending: PendingSeeds, limits: Mapping[Stage, float],
                 rng: random.Random, allocator: Allocator) -> None:
        self.cfg = cfg
        self.corpus = corpus
        self.pending = pending
        self.limits = dict(limits)
        self.rng = rng
        self.allocator = allocator
        self.levels = cfg.levels.weights()
        self.schedulers: dict[str, Scheduler] = {name: make_scheduler(cfg.fuzz.scheduler, cfg.fuzz.energy)
                                                 for name in self.levels}
        """One scheduler per level fuzzed: a level is drawn by its weight, then an entry of it."""
        self.tc_counter = 0

    def feed(self, w: WorkerSlot) -> None:
        """Give worker ``w`` its next test case: the first pending seed, else a mutant."""
        self.tc_counter += 1
        entry = self.pending.pop()
        if entry is not None:
            w.submit(ExecTask(self.tc_counter, entry.level, entry.script, entry.passes),
                     TestCaseInfo(self.tc_counter, "exec", entry.seed_id, entry.level, entry.script, entry.passes))
            return
        name = self.level()
        entry = self.choose_for(w.index, name)
        other = self.rng.choice(self.corpus.levels.get(name) or self.corpus.entries).passes
        steer = entry.triggered if self.cfg.fuzz.energy == RARITY else ()  # inserted passes: untriggered first
        task = FuzzTask(self.tc_counter, name, entry.script, entry.passes, entry.failures, other,
                        self.rng.getrandbits(62), steer, self.allocator.mutation_factors(name))
        w.submit(task, TestCaseInfo(self.tc_counter, "fuzz", entry.seed_id, name, limits=self.relative_limits(entry)))

    def relative_limits(self, parent: CorpusEntry) -> dict[Stage, float] | None:
        """A mutant's stage limits: ``timeouts.relative`` times its parent's measured cost, within
        ``timeouts.floor`` and each stage's own limit (None: the stage limits, for a parent not measured
        yet and for the ``timeouts.hang_share`` of mutants whose hangs may be filed). AFL++ likewise
        derives its time limit from the seeds' measured speed and confirms a hang with a longer one."""
        t = self.cfg.timeouts
        if t.relative <= 0 or parent.cost is None or self.rng.random() < t.hang_share:
            return None
        limit = max(t.floor, t.relative * parent.cost)
        return {stage: min(full, limit) for stage, full in self.limits.items()}

    def level(self) -> str:
        """A level drawn by the allocation's weights among the levels on that the corpus has entries of
        (when it has none of a level on, e.g. a campaign whose pool gave no graph seed, the first it has)."""
        present = self.allocator.level_weights(n for n in self.levels if self.corpus.levels.get(n))
        if not present:
            return next(iter(self.corpus.levels))
        return self.rng.choices(list(present), weights=list(present.values()))[0]

    def choose_for(self, worker: int, level: str) -> CorpusEntry:
        """The scheduler's choice, drawn again (up to :data:`AFFINITY_DRAWS` times) while it is an
        entry another worker ran: a worker has the parsed IR of its own entries cached, and parsing
        another's TVMScript is costly (docs/measurements.md, 'Campaign loop'). Workers are alike, so
        every entry is still chosen as often as the scheduler says; each worker mostly grows its own
        part of the corpus."""
        entries, scheduler = self.corpus.levels[level], self.schedulers[level]
        entry = self._energetic(scheduler, entries)
        for _ in range(AFFINITY_DRAWS):
            if entry.worker is None or entry.worker == worker:
                break
            entry = self._energetic(scheduler, entries)
        entry.chosen += 1
        return entry

    def _energetic(self, scheduler: Scheduler, entries: list[CorpusEntry]) -> CorpusEntry:
        """The scheduler's choice, kept with the probability of its energy (see :data:`ENERGY_DRAWS`)."""
        entry = scheduler.choose(entries, self.rng)
        for _ in range(ENERGY_DRAWS - 1):
            if self.rng.random() < self.allocator.energy(entry):
                break
            entry = scheduler.choose(entries, self.rng)
        return entry

    def scheduler(self, entry: CorpusEntry) -> Scheduler:
        """The scheduler of the entry's level (one for a level not fuzzed now, whose entries a resumed
        or imported corpus may hold)."""
        found = self.schedulers.get(entry.level)
        if found is None:
            found = self.schedulers[entry.level] = make_scheduler(self.cfg.fuzz.scheduler, self.cfg.fuzz.energy)
        return found
