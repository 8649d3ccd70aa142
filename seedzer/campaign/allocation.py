"""Where the machine's time goes: the weights of levels, mutations and seed models, adapted to what they yield.

A campaign draws a level, the worker draws a mutation, and the seed scheduler draws a corpus entry; the
*allocation* decides with which weights. With fixed weights (``allocation.adaptive: false``) they are
the configured ones, as before. Adaptively, each arm of a *group* (the levels; one group of mutations per
level; the seed models) earns a *reward* per second of worker time, after MOpt's mutator scheduling,
libFuzzer's Entropic and EcoFuzz's energy by novelty:

* new coverage features: ``rewards.coverage`` times ``log2(1 + n)`` for ``n`` features first reached (the
  log keeps one huge first run from outweighing everything after it);
* passes triggered for the first time in the campaign: ``rewards.trigger`` each;
* above all, a bug root new to the ledger (neither in it from earlier campaigns nor filed earlier in
  this one): ``rewards.root``, credited when the filing gate files it, to the arms of the test case
  that reached it. A root already known (the ledger's, or marked reported) or a repeat of a filed
  one earns nothing: it only costs the seconds it took.

An arm's *yield* is its reward per worker-second, discounted with a half-life of ``half_life`` worker
seconds of its group (old observations count half after that long, so the weights follow a campaign
whose best arm changes), and shrunk towards the group's pooled yield by ``prior_seconds`` of pseudo
observation (an arm with little data weighs like the average). The configured weights are the *prior*
that data overrides: an arm's weight blends its configured share with its share of the group's yields,
the yields counting ``S / (S + prior_seconds)`` for ``S`` discounted worker-seconds of the group (so a
level configured at 3 : 1 that yields less per second than the other loses its lead within minutes,
rather than keeping it unless yields differ threefold). ``floor`` of a group's draws is kept for
exploration, spread evenly: every arm keeps at least ``floor / arms`` of them, so nothing starves, and an
arm whose data fades (the half-life) drifts back towards the average and is tried again.

The state is a pure function of the observations in the order they came (no randomness), so a campaign
under ``--seed`` that sees the same observations draws with the same weights; :meth:`Allocation.to_json`
and :meth:`Allocation.from_json` carry it across ``--resume``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from seedzer.config import ALLOCATION_FAMILIES, AllocationConfig
from seedzer.store.allocation_rows import ArmRow

LEVELS = "level"
"""The group of levels (arms: level names)."""
MODELS = "model"
"""The group of seed models (arms: pool model file names, the corpus entries' ``origin``)."""


FAMILIES = dict(zip(ALLOCATION_FAMILIES, (LEVELS, "mutation", MODELS), strict=True))
"""The names ``allocation.pinned`` takes (the configuration's), and the group (or prefix of groups) each pins."""


def mutation_group(level: str) -> str:
    """The group of ``level``'s mutations (arms: the names its mutators give their mutations)."""
    return f"mutation:{level}"


@dataclass(frozen=True)
class Rewards:
    """What one observation earns (see the module docstring)."""

    coverage: float = 1.0
    trigger: float = 2.0
    root: float = 1000.0

    def of(self, new_features: int, new_triggers: int) -> float:
        """The reward of a test case that reached ``new_features`` coverage features and ``new_triggers``
        passes first (roots are credited later, by :meth:`Allocation.credit_root`)."""
        return self.coverage * math.log2(1 + max(new_features, 0)) + self.trigger * max(new_triggers, 0)


@dataclass(frozen=True)
class AllocationSettings:
    """The allocation's knobs (``allocation.*`` in the configuration)."""

    adaptive: bool = True
    floor: float = 0.1
    half_life: float = 900.0
    prior_seconds: float = 10.0
    rewards: Rewards = field(default_factory=Rewards)
    pinned: frozenset[str] = frozenset()
    """Families of groups kept at their configured weights even when adaptive (:data:`FAMILIES`)."""

    @staticmethod
    def of(cfg: AllocationConfig) -> AllocationSettings:
        """The settings the configuration's ``allocation`` section gives."""
        return AllocationSettings(cfg.adaptive, cfg.floor, cfg.half_life, cfg.prior_seconds,
                                  Rewards(cfg.reward_coverage, cfg.reward_trigger, cfg.reward_root),
                                  frozenset(cfg.pinned))


@dataclass
class Arm:
    """One arm's discounted reward and seconds (as of its group's clock ``stamp``), and its totals."""

    reward: float = 0.0
    seconds: float = 0.0
    stamp: float = 0.0
    total_reward: float = 0.0
    total_seconds: float = 0.0
    runs: int = 0
    roots: int = 0

    def decayed(self, clock: float, half_life: float) -> tuple[float, float]:
        """``(reward, seconds)`` discounted to the group's ``clock``."""
        factor = 0.5 ** ((clock - self.stamp) / half_life) if half_life > 0 else 1.0
        return self.reward * factor, self.seconds * factor

    def add(self, reward: float, seconds: float, clock: float, half_life: float) -> None:
        """Fold one observation in at ``clock``."""
        self.reward, self.seconds = self.decayed(clock, half_life)
        self.reward += reward
        self.seconds += seconds
        self.stamp = clock
        self.total_reward += reward
        self.total_seconds += seconds


@dataclass
class Group:
    """The arms of one draw, their configured weights and the group's clock (worker seconds seen)."""

    base: dict[str, float]
    arms: dict[str, Arm] = field(default_factory=dict)
    clock: float = 0.0

    def arm(self, name: str) -> Arm:
        """The arm ``name`` (made on first use: a new seed model, a mutation not configured)."""
        return self.arms.setdefault(name, Arm(stamp=self.clock))


def floored(raw: Mapping[str, float], floor: float) -> dict[str, float]:
    """``raw`` weights as probabilities in which every arm has at least ``floor`` (``1 / arms`` at most):
    the arms below it are raised to it and the others share the rest in proportion."""
    floor = min(max(floor, 0.0), 1.0 / len(raw))
    total = sum(raw.values())
    shares = {a: w / total if total > 0 else 1.0 / len(raw) for a, w in raw.items()}
    low: set[str] = set()
    while True:
        rest = [a for a in shares if a not in low]
        mass = sum(shares[a] for a in rest)
        left = 1.0 - floor * len(low)
        scaled = {a: shares[a] / mass * left if mass > 0 else left / len(rest) for a in rest}
        newly = {a for a, p in scaled.items() if p < floor}
        if not newly:
            return {a: floor if a in low else scaled[a] for a in shares}
        low |= newly


@dataclass(frozen=True)
class Credit:
    """The arms one test case belongs to: its level, the mutations applied and its seed model."""

    level: str
    mutations: tuple[str, ...] = ()
    model: str = ""


FATIGUE_STEP = 0.5
"""The energy an entry keeps for each test case in a row that re-hit a filed root without new coverage."""
FATIGUE_FLOOR = 1.0 / 16
"""The least energy fatigue leaves an entry (it is never starved)."""


@dataclass
class Fatigue:
    """Known bugs stop eating the budget: a corpus entry whose test cases keep re-hitting roots already
    filed (or known to the ledger), without bringing new coverage, loses energy (:data:`FATIGUE_STEP` per
    such test case in a row, down to :data:`FATIGUE_FLOOR`); a test case with new coverage restores it."""

    repeats: dict[str, int] = field(default_factory=dict)

    def observe(self, entry: str, *, known_root: bool, new_coverage: bool) -> None:
        """A test case mutated from ``entry`` ran: it re-hit a known root, brought new coverage, or neither."""
        if new_coverage:
            self.repeats.pop(entry, None)
        elif known_root:
            self.repeats[entry] = self.repeats.get(entry, 0) + 1

    def energy(self, entry: str) -> float:
        """``entry``'s energy factor in (0, 1]."""
        return max(FATIGUE_FLOOR, FATIGUE_STEP ** self.repeats.get(entry, 0))


class Allocation:
    """The adaptive (or fixed) weights of every group (see the module docstring)."""

    def __init__(self, settings: AllocationSettings, base: Mapping[str, Mapping[str, float]]) -> None:
        self.settings = settings
        self.groups: dict[str, Group] = {name: Group(dict(weights)) for name, weights in base.items()}
        self.fatigue = Fatigue()

    def group(self, name: str) -> Group:
        """The group ``name`` (made empty on first use: a group with no configured weights)."""
        return self.groups.setdefault(name, Group({}))

    def adapts(self, group: str) -> bool:
        """Whether ``group``'s weights follow yields (adaptive, and the group not pinned)."""
        family = group.split(":", 1)[0]
        return self.settings.adaptive and all(FAMILIES.get(p) != family for p in self.settings.pinned)

    def weights(self, name: str, arms: Iterable[str] | None = None) -> dict[str, float]:
        """The draw probabilities of ``arms`` (default: the configured ones with a positive weight) in
        group ``name``, summing to 1 (empty when no arm has a positive configured weight). An arm not
        configured weighs 1."""
        group = self.group(name)
        chosen = [a for a in (group.base if arms is None else arms) if group.base.get(a, 1.0) > 0]
        if not chosen:
            return {}
        total = sum(group.base.get(a, 1.0) for a in chosen)
        configured = {a: group.base.get(a, 1.0) / total for a in chosen}
        if not self.adapts(name):
            return configured
        return floored(self._blend(group, configured), self.settings.floor / len(chosen))

    def _blend(self, group: Group, configured: dict[str, float]) -> dict[str, float]:
        """The ``configured`` shares blended with the arms' yield shares (discounted, each shrunk towards the
        pooled yield), the yields counting by the group's discounted seconds (the module docstring)."""
        half = self.settings.half_life
        sums = {a: group.arms[a].decayed(group.clock, half) if a in group.arms else (0.0, 0.0) for a in configured}
        pooled_reward = sum(r for r, _ in sums.values())
        pooled_seconds = sum(s for _, s in sums.values())
        if pooled_reward <= 0 or pooled_seconds <= 0:
            return configured
        pooled = pooled_reward / pooled_seconds
        prior = self.settings.prior_seconds
        yields = {a: (r + pooled * prior) / (s + prior) for a, (r, s) in sums.items()}
        total = sum(yields.values())
        trust = pooled_seconds / (pooled_seconds + prior)
        return {a: (1.0 - trust) * configured[a] + trust * yields[a] / total for a in configured}

    def observe(self, credit: Credit, seconds: float, reward: float) -> None:
        """A test case of ``credit`` took ``seconds`` of worker time and earned ``reward``: each of its
        arms gets both (a test case of several mutations splits them between the mutations)."""
        seconds = max(seconds, 0.0)
        self._add(LEVELS, credit.level, reward, seconds)
        if credit.mutations:
            share = 1.0 / len(credit.mutations)
            for mutation in credit.mutations:
                self._add(mutation_group(credit.level), mutation, reward * share, seconds * share)
        if credit.model:
            self._add(MODELS, credit.model, reward, seconds)

    def credit_root(self, credit: Credit) -> None:
        """A root new to the ledger, reached by a test case of ``credit``: ``rewards.root`` to its arms
        (no seconds: those were counted when it ran; a credit of no level, a pool model's loading,
        rewards its seed model only)."""
        reward = self.settings.rewards.root
        if credit.level:
            self._add(LEVELS, credit.level, reward, 0.0, root=True)
        for mutation in credit.mutations:
            self._add(mutation_group(credit.level), mutation, reward / len(credit.mutations), 0.0, root=True)
        if credit.model:
            self._add(MODELS, credit.model, reward, 0.0, root=True)

    def _add(self, name: str, arm: str, reward: float, seconds: float, *, root: bool = False) -> None:
        group = self.group(name)
        group.clock += seconds
        found = group.arm(arm)
        found.add(reward, seconds, group.clock, self.settings.half_life)
        if root:
            found.roots += 1
        elif seconds > 0:
            found.runs += 1

    def view(self) -> list[ArmRow]:
        """Every arm of every group, as the reports show it (groups and arms in name order)."""
        out = []
        for name in sorted(self.groups):
            group = self.groups[name]
            arms = sorted(set(group.base) | set(group.arms))
            weights = self.weights(name, arms)
            for arm in arms:
                stats = group.arms.get(arm, Arm())
                per_minute = 60.0 * stats.total_reward / stats.total_seconds if stats.total_seconds > 0 else 0.0
                out.append(ArmRow(name, arm, round(weights.get(arm, 0.0), 6), round(per_minute, 6), stats.runs,
                                   stats.roots, round(stats.total_seconds, 3)))
        return out

    def to_json(self) -> dict[str, object]:
        """The state to carry across ``--resume`` (plain JSON)."""
        return {"version": 1, "groups": {
            name: {"clock": g.clock, "arms": {a: [s.reward, s.seconds, s.stamp, s.total_reward, s.total_seconds,
                                                 s.runs, s.roots] for a, s in g.arms.items()}}
            for name, g in self.groups.items()}, "fatigue": dict(self.fatigue.repeats)}

    def restore(self, state: object) -> None:
        """Take the observations of a saved state (:meth:`to_json`); the configured weights stay this
        campaign's. A state that is not one raises ValueError (the caller starts from the configured
        weights and says so)."""
        if not isinstance(state, dict) or state.get("version") != 1 or not isinstance(state.get("groups"), dict):
            raise ValueError("not an allocation state of version 1")
        groups: dict[str, tuple[float, dict[str, Arm]]] = {}
        for name, saved in state["groups"].items():
            if not isinstance(name, str) or not isinstance(saved, dict) or not isinstance(saved.get("arms"), dict):
                raise ValueError(f"group {name!r} is malformed")
            arms = {}
            for arm, values in saved["arms"].items():
                if not isinstance(arm, str) or not isinstance(values, list) or len(values) != 7:
                    raise ValueError(f"arm {arm!r} of group {name!r} is malformed")
                numbers = [float(v) for v in values]
                if not all(math.isfinite(v) and v >= 0 for v in numbers):
                    raise ValueError(f"arm {arm!r} of group {name!r} holds a value out of range")
                reward, seconds, stamp, total_reward, total_seconds = numbers[:5]
                arms[arm] = Arm(reward, seconds, stamp, total_reward, total_seconds, int(numbers[5]), int(numbers[6]))
            clock = float(saved.get("clock", 0.0))
            if not math.isfinite(clock) or clock < 0:
                raise ValueError(f"group {name!r} has a bad clock")
            groups[name] = (clock, arms)
        repeats = state.get("fatigue", {})
        if not isinstance(repeats, dict) or not all(isinstance(k, str) and isinstance(v, int) and v >= 0
                                                    for k, v in repeats.items()):
            raise ValueError("the fatigue of corpus entries is malformed")
        for name, (clock, arms) in groups.items():
            group = self.group(name)
            group.clock, group.arms = clock, arms
        self.fatigue = Fatigue(dict(repeats))

