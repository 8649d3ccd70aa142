"""Seed schedulers: which corpus entry to mutate next (the seam heuristics plug into).

Two are registered. ``uniform`` is Tzer's joint seed pool: every entry equally likely. ``cost``
(the default) weighs what an entry holds against what mutating it costs, after AFL++ and LibAFL:

* **cost**: an entry's cost is the seconds a test case made from it takes, measured, never guessed:
  its own first run, then a moving average over the runs of its mutants (a mutant stopped at its
  time limit counts the limit; :func:`record_cost`). AFL++'s ``calculate_score`` gives a queue
  entry fewer mutations the slower it is than the average; here the weight is
  ``mean cost / cost`` bounded to [:data:`SLOWEST_FACTOR`, :data:`FASTEST_FACTOR`].
* **favored set**: LibAFL's ``IndexesLenTimeMinimizerScheduler`` keeps, for every coverage feature,
  the entry that covers it with the least ``execution time x length``; those entries form the
  favored set, updated as coverage grows (:meth:`CostScheduler.learn`). Favored entries weigh
  :data:`FAVORED_BOOST` times more (AFL++'s ``compute_weight`` uses 5).
* entries not mutated yet weigh :data:`FRESH_BOOST` times more (AFL++ doubles unfuzzed ones).

With ``fuzz.energy: rarity`` the ``cost`` scheduler's weights are multiplied by an entry's *rarity*
(:class:`RarityScheduler`): AFLFast gives more energy to seeds on paths few inputs exercise; here an
entry that triggers a pass (changed the IR with it: :mod:`seedzer.coverage.triggers`) that few corpus
entries trigger weighs up to :data:`RARITY_BOOST` times more (``1 + (RARITY_BOOST - 1) / n`` for the
rarest pass it triggers, ``n`` entries triggering it, itself included). ``coverage`` (the default)
keeps the scheduler as it was, for comparison.

A uniform campaign slows down as its corpus fills with a few huge, slow entries (issue 27); their
weight here falls with their cost (the measured slowdown: docs/measurements.md, 'Campaign loop').
"""

from __future__ import annotations

import bisect
import random
from collections import Counter
from collections.abc import Callable, Hashable, Iterable, Sequence
from typing import Protocol

from seedzer.config import COST, COVERAGE, RARITY, UNIFORM
from seedzer.errors import ConfigError
from seedzer.store.corpus import CorpusEntry

COST_SMOOTHING = 0.25
"""Weight of a new measurement in an entry's moving-average cost."""
FASTEST_FACTOR = 3.0
"""The weight of an entry far faster than the average (AFL++: 300% for 4x faster)."""
SLOWEST_FACTOR = 0.1
"""The weight of an entry far slower than the average (AFL++: 10% for 10x slower)."""
FAVORED_BOOST = 5.0
"""Weight factor of a favored entry (the fastest, smallest holder of some coverage feature)."""
FRESH_BOOST = 2.0
"""Weight factor of an entry not mutated yet."""
RARITY_BOOST = 4.0
"""Weight factor of an entry that alone triggers some pass (rarity energy); rarer passes weigh more,
after AFLFast's FAST schedule (energy inversely proportional to how often a path is exercised)."""
REFRESH_DRAWS = 64
"""Draws between two recomputations of the weights when the corpus did not change (costs drift)."""


def record_cost(entry: CorpusEntry, seconds: float) -> None:
    """Fold one measured test case of ``entry`` (its own run or a mutant's) into its cost."""
    if seconds <= 0:
        return
    entry.cost = seconds if entry.cost is None else entry.cost + COST_SMOOTHING * (seconds - entry.cost)


class Scheduler(Protocol):
    """Chooses the next corpus entry to mutate."""

    name: str

    def choose(self, entries: Sequence[CorpusEntry], rng: random.Random) -> CorpusEntry:
        """Return one of ``entries`` (never empty)."""
        ...

    def learn(self, entry: CorpusEntry, features: Iterable[Hashable]) -> None:
        """``entry`` ran (its cost is measured) and covered ``features``."""
        ...


class UniformScheduler:
    """Tzer's joint seed pool baseline: every entry equally likely."""

    name = UNIFORM

    def choose(self, entries: Sequence[CorpusEntry], rng: random.Random) -> CorpusEntry:
        """Uniform random choice."""
        return entries[rng.randrange(len(entries))]

    def learn(self, entry: CorpusEntry, features: Iterable[Hashable]) -> None:
        """Nothing to learn: every entry weighs the same."""


class CostScheduler:
    """Entries weighted by speed and by holding coverage cheaply (see the module docstring)."""

    name = COST

    def __init__(self) -> None:
        self.best: dict[Hashable, tuple[float, str]] = {}
        """Per coverage feature: the least ``cost x length`` of an entry covering it, and that entry."""
        self._favored: set[str] | None = None
        self._table: list[float] = []
        self._size = -1
        self._draws = 0

    def learn(self, entry: CorpusEntry, features: Iterable[Hashable]) -> None:
        """Make ``entry`` the holder of every feature it covers more cheaply than the current holder."""
        if entry.cost is None:
            return
        rate = entry.cost * max(len(entry.script), 1)
        changed = False
        for feature in features:
            held = self.best.get(feature)
            if held is None or rate < held[0]:
                self.best[feature] = (rate, entry.seed_id)
                changed = True
        if changed:
            self._favored = None
            self._size = -1

    def favored(self) -> set[str]:
        """The ids of the entries holding some feature most cheaply."""
        if self._favored is None:
            self._favored = {seed_id for _, seed_id in self.best.values()}
        return self._favored

    def weight(self, entry: CorpusEntry, mean_cost: float, favored: set[str]) -> float:
        """An entry's weight: speed relative to ``mean_cost``, favored and freshness boosts."""
        speed = 1.0
        if entry.cost is not None and mean_cost > 0:
            speed = min(FASTEST_FACTOR, max(SLOWEST_FACTOR, mean_cost / entry.cost))
        boost = FAVORED_BOOST if entry.seed_id in favored else 1.0
        return speed * boost * (FRESH_BOOST if entry.chosen == 0 else 1.0)

    def _rebuild(self, entries: Sequence[CorpusEntry]) -> None:
        costs = [e.cost for e in entries if e.cost is not None]
        mean = sum(costs) / len(costs) if costs else 0.0
        favored = self.favored()
        total, table = 0.0, []
        for entry in entries:
            total += self.weight(entry, mean, favored)
            table.append(total)
        self._table, self._size, self._draws = table, len(entries), 0

    def choose(self, entries: Sequence[CorpusEntry], rng: random.Random) -> CorpusEntry:
        """A weighted draw (the weights are recomputed when the corpus changes, and every
        :data:`REFRESH_DRAWS` draws)."""
        if self._size != len(entries) or self._draws >= REFRESH_DRAWS:
            self._rebuild(entries)
        self._draws += 1
        index = min(bisect.bisect_right(self._table, rng.random() * self._table[-1]), len(entries) - 1)
        return entries[index]


class RarityScheduler(CostScheduler):
    """The cost scheduler with rarity energy: an entry that triggers passes few entries trigger weighs
    more (see the module docstring). It reads an entry's triggered passes off ``entry.triggered``,
    which the campaign sets from the entry's own run before :meth:`learn`."""

    name = COST

    def __init__(self) -> None:
        super().__init__()
        self.holders: Counter[str] = Counter()
        """Per pass: the corpus entries whose own run triggered it."""
        self.learned: dict[str, tuple[str, ...]] = {}
        """Per entry: the triggered passes counted in :attr:`holders`."""

    def learn(self, entry: CorpusEntry, features: Iterable[Hashable]) -> None:
        """The cost scheduler's learning, and the entry's triggered passes counted (once per entry)."""
        super().learn(entry, features)
        before = self.learned.get(entry.seed_id)
        if before == entry.triggered:
            return
        if before:
            self.holders.subtract(before)
        self.holders.update(entry.triggered)
        self.learned[entry.seed_id] = entry.triggered
        self._size = -1  # weights change

    def rarity(self, entry: CorpusEntry) -> float:
        """``1 + (RARITY_BOOST - 1) / n``, ``n`` the entries triggering the rarest pass the entry
        triggers (1: it triggers none)."""
        held = [self.holders[name] for name in entry.triggered if self.holders[name] > 0]
        return 1.0 + (RARITY_BOOST - 1.0) / min(held) if held else 1.0

    def weight(self, entry: CorpusEntry, mean_cost: float, favored: set[str]) -> float:
        """The cost scheduler's weight times the entry's rarity."""
        return super().weight(entry, mean_cost, favored) * self.rarity(entry)


SCHEDULERS: dict[str, Callable[[], Scheduler]] = {UNIFORM: UniformScheduler, COST: CostScheduler}
"""The schedulers of ``fuzz.scheduler`` with today's energy (``fuzz.energy: coverage``), by the names the
configuration gives them (:data:`seedzer.config.SCHEDULER_NAMES`)."""
ENERGIES: dict[str, dict[str, Callable[[], Scheduler]]] = {COVERAGE: SCHEDULERS, RARITY: {COST: RarityScheduler}}
"""Per ``fuzz.energy`` (:data:`seedzer.config.ENERGY_NAMES`): the schedulers that give it."""


def make_scheduler(name: str, energy: str = COVERAGE) -> Scheduler:
    """Build the scheduler registered as ``name`` with ``energy`` (``coverage``: today's)."""
    table = ENERGIES.get(energy)
    if table is None:
        raise ConfigError(f"unknown energy '{energy}' (known: {', '.join(ENERGIES)})")
    try:
        return table[name]()
    except KeyError:
        known = ", ".join(table)
        raise ConfigError(f"unknown scheduler '{name}' for energy '{energy}' (known: {known})") from None
