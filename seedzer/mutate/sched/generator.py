"""The schedule level's generator: a new schedule plan for a PrimFunc, or a mutant of a plan.

Each call draws one way of making a schedule, by weight (:data:`DEFAULT_WEIGHTS`):

- ``ms.space``: MetaSchedule's design space for llvm, decisions sampled, with the llvm
  postprocessors (:mod:`seedzer.mutate.sched.space`);
- ``dlight``: dlight's CPU rules where one applies (:mod:`seedzer.mutate.sched.dlight_rules`);
- ``decisions``: MetaSchedule's mutators on the plan's decisions (:mod:`seedzer.mutate.sched.decisions`);
- ``trace.insert``, ``trace.delete``, ``trace.replace``, ``trace.crossover``: the house's sequence
  mutators (:mod:`seedzer.mutate.sequence`) made with the schedule family
  (:mod:`seedzer.passes.sched.family`), new primitives drawn from the whole Schedule API
  (:mod:`seedzer.mutate.sched.primitives`) at their place in the trace by :class:`PrimitiveSource`; a
  crossover's partner is another plan of the same PrimFunc;
- ``postprocs``: MetaSchedule's llvm postprocessors switched on or off after the trace.

It returns the plan (TVM's trace JSON and the postprocessors) with the names of the mutations applied
(``ms.space`` with ``ms.rule.<Rule>`` for each MetaSchedule rule whose marks the trace bears,
``dlight.<Rule>``, ``ms.<Mutator>`` or ``resample.<what>``, ``trace.<operation>`` with
``primitive.<Kind>`` for a drawn primitive, ``postprocs.on`` / ``postprocs.off``): the rows of
``status``. What could not be made is counted in :class:`SchedStats` (a way with nothing to work on,
an error TVM raised while generating) and the caller tries again. An empty plan (a seed) is first
given MetaSchedule's design space :data:`SPACE_FIRST` of the time. :func:`way_weights` turns the
configured weights of the ways into the draw's (times a campaign's factors per mutation name, where a
campaign gives them). Imports TVM when called.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from seedzer.kernel.sched.case import LLVM_POSTPROCS, NUM_CORES, SchedPlan
from seedzer.kernel.sched.trace import Instruction, parse_trace, trace_json, trace_problem
from seedzer.mutate.sched.primitives import DRAWERS
from seedzer.mutate.sched.structure import Draft
from seedzer.mutate.sequence import mutator_names, sequence_mutators
from seedzer.passes.sched.family import MAX_INSTRUCTIONS, PREFIX, SCHED_FAMILY
from seedzer.passes.sched.items import apart, instructions_of, item_of
from seedzer.seed import PassSpec

DEFAULT_WEIGHTS = {"ms.space": 1.0, "dlight": 0.3, "decisions": 2.0, "trace.insert": 6.0, "trace.delete": 1.0,
                   "trace.replace": 2.0, "trace.crossover": 1.0, "postprocs": 0.5}
"""How often each way is drawn: mostly new primitives (every primitive of the API reached), then the
decisions a tuning run would mutate, then fresh design spaces."""
DECISION_MUTATIONS = ("ms.MutateTileSize", "ms.MutateUnroll", "ms.MutateComputeLocation", "ms.MutateParallel",
                      "resample.compute_location", "resample.parallel", "resample.tile")
MS_RULES = ("AutoInline", "AddRFactor", "MultiLevelTiling", "ParallelizeVectorizeUnroll", "RandomComputeLocation")
DLIGHT_RULES = ("GEMV", "Reduction")
TRACE_WAYS = mutator_names(SCHED_FAMILY)
"""The ways that are the house's sequence mutators of the schedule family (``trace.insert``...)."""
CROSSOVER = PREFIX + "crossover"
"""The way that needs another plan of the same PrimFunc."""
WAY_MUTATIONS: dict[str, tuple[str, ...]] = {
    "ms.space": ("ms.space",), "dlight": tuple(f"dlight.{r}" for r in DLIGHT_RULES), "decisions": DECISION_MUTATIONS,
    **{way: (way,) for way in TRACE_WAYS}, "postprocs": ("postprocs.on", "postprocs.off")}
"""The mutation names each way gives (besides the rules and primitives it names along)."""
MUTATIONS = frozenset({*(m for names in WAY_MUTATIONS.values() for m in names), *(f"ms.rule.{r}" for r in MS_RULES),
                       *(f"primitive.{k}" for k in DRAWERS)})
"""Every mutation name the generator gives (TVM-free: the level's ``mutations``)."""
MAX_TRIES = 8
"""Ways tried per call before giving up."""
SPACE_FIRST = 0.5
"""How often an empty plan (a seed) is given MetaSchedule's design space rather than a drawn way."""


def way_weights(configured: Mapping[str, float], factors: Mapping[str, float] | None = None) -> dict[str, float]:
    """The weights a way is drawn by: its configured weight times the mean of ``factors`` (per mutation
    name: a campaign's allocation) over the mutation names it gives (1 where none is given)."""
    out = {}
    for way, weight in configured.items():
        given = [factors[m] for m in WAY_MUTATIONS.get(way, (way,)) if factors and m in factors]
        out[way] = weight * (sum(given) / len(given) if given else 1.0)
    return out


@dataclass(frozen=True)
class Generated:
    """A generated plan and the names of the mutations that made it."""

    plan: SchedPlan
    mutations: tuple[str, ...]


@dataclass
class SchedStats:
    """Counters of a generator: ways tried, made, with nothing to work on, failing in TVM; primitives drawn."""

    tried: Counter[str] = field(default_factory=Counter)
    made: Counter[str] = field(default_factory=Counter)
    inapplicable: Counter[str] = field(default_factory=Counter)
    errors: Counter[str] = field(default_factory=Counter)
    reasons: Counter[str] = field(default_factory=Counter)
    drawn: Counter[str] = field(default_factory=Counter)
    gave_up: int = 0

    def as_dict(self) -> dict[str, Any]:
        """JSON-friendly snapshot."""
        return {"tried": dict(self.tried), "made": dict(self.made), "inapplicable": dict(self.inapplicable),
                "errors": dict(self.errors), "reasons": dict(self.reasons.most_common(20)),
                "drawn": dict(self.drawn), "gave_up": self.gave_up}


class PrimitiveSource:
    """New primitives for a place in a trace of one PrimFunc, drawn from the whole Schedule API,
    preferring the primitives drawn least so far (every primitive gets reached): the schedule family's
    :class:`~seedzer.passes.sched.family.ItemSource` in a worker."""

    def __init__(self, func: Any, stats: SchedStats) -> None:
        self.func = func
        self.stats = stats
        self.last: str | None = None
        self.views: dict[str, Any] = {}
        """The function described after each trace prefix drawn at (a mutator's tries reuse them)."""

    def __call__(self, items: Sequence[PassSpec], at: int, rng: random.Random) -> list[PassSpec] | None:
        from seedzer.kernel.tir.lowering import StepFailure
        from seedzer.mutate.sched.structure import view_at

        prefix = instructions_of(items[:at])
        key = repr(trace_json(prefix))
        view = self.views.get(key)
        if view is None:
            try:
                view = view_at(self.func, prefix)
            except StepFailure:
                return None
            self.views = {key: view}
        kinds = sorted(DRAWERS)
        weights = [1.0 / (1 + self.stats.drawn[k]) for k in kinds]
        for _ in range(4):
            kind = rng.choices(kinds, weights)[0]
            draft = Draft(view)
            if DRAWERS[kind](draft, rng):
                self.stats.drawn[kind] += 1
                self.last = kind
                return [item_of(i) for i in draft.instructions]
            self.stats.inapplicable[f"primitive.{kind}"] += 1
        return None


class SchedGenerator:
    """Makes schedule plans for the PrimFuncs of one worker (see the module docstring)."""

    def __init__(self, num_cores: int = NUM_CORES, weights: dict[str, float] | None = None,
                 stats: SchedStats | None = None, max_instructions: int = MAX_INSTRUCTIONS,
                 space_first: float = SPACE_FIRST) -> None:
        from seedzer.mutate.sched.environment import dlight_missing, meta_schedule_missing

        self.num_cores = num_cores
        self.weights = dict(DEFAULT_WEIGHTS if weights is None else weights)
        self.stats = stats if stats is not None else SchedStats()
        self.max_instructions = max_instructions
        self.space_first = space_first
        self.disabled: dict[str, str] = {}
        """Ways this TVM cannot do, with the one line that says why."""
        missing = meta_schedule_missing()
        if missing is not None:
            self.disabled.update({"ms.space": missing, "decisions": missing, "postprocs": missing})
        if dlight_missing() is not None:
            self.disabled["dlight"] = dlight_missing() or ""

    def fresh(self, func: Any, rng: random.Random) -> Generated:
        """A first plan for ``func``: MetaSchedule's design space when it can make one, else no schedule."""
        made = self._space(func, rng) if "ms.space" not in self.disabled else None
        return made or Generated(SchedPlan([[], []]), ())

    def mutate(self, func: Any, plan: SchedPlan, rng: random.Random, others: Sequence[SchedPlan] = (),
               factors: Mapping[str, float] | None = None,
               on_way: Callable[[str], None] = lambda way: None) -> Generated | None:
        """A mutant of ``plan`` (a plan of ``func``; ``others``: plans of the same function to cross
        with; ``factors``: a campaign's factor per mutation name, :func:`way_weights`; ``on_way`` hears
        each way before it is tried), or None after :data:`MAX_TRIES` ways made nothing."""
        items = parse_trace(plan.trace)
        drawn = way_weights({w: v for w, v in self.weights.items() if v > 0 and w not in self.disabled}, factors)
        if not others:
            drawn.pop(CROSSOVER, None)  # a crossover needs another plan of this function
        ways = sorted(w for w, v in drawn.items() if v > 0)
        if not ways:
            self.stats.gave_up += 1
            return None
        first = "ms.space" if not items and "ms.space" in ways and rng.random() < self.space_first else None
        for _ in range(MAX_TRIES):
            way = first or rng.choices(ways, [drawn[w] for w in ways])[0]
            first = None
            on_way(way)
            self.stats.tried[way] += 1
            try:
                made = self._way(way, func, items, plan, rng, others)
            except Exception as exc:  # TVM raised while generating: counted, the caller tries again
                self.stats.errors[way] += 1
                first = str(exc).splitlines()[0][:160] if str(exc) else ""
                self.stats.reasons[f"{way}: {type(exc).__name__}: {first}"] += 1
                continue
            if made is None or trace_problem(parse_trace(made.plan.trace)) is not None \
                    or len(made.plan.trace[0]) > self.max_instructions or made.plan == plan:
                self.stats.inapplicable[way] += 1
                continue
            self.stats.made[way] += 1
            return made
        self.stats.gave_up += 1
        return None

    def _way(self, way: str, func: Any, items: list[Instruction], plan: SchedPlan, rng: random.Random,
             others: Sequence[SchedPlan]) -> Generated | None:
        if way == "ms.space":
            return self._space(func, rng)
        if way == "dlight":
            from seedzer.mutate.sched.dlight_rules import dlight_trace

            found = dlight_trace(func, rng, self.num_cores)
            return Generated(SchedPlan.of(found[0]), (f"dlight.{found[1]}",)) if found else None
        if way == "decisions":
            from seedzer.mutate.sched.decisions import mutations

            table = mutations()
            for name in rng.sample(sorted(table), len(table)):
                mutated = table[name](func, items, rng, self.num_cores)
                if mutated is not None and mutated != items:
                    return Generated(SchedPlan.of(mutated, plan.postprocs), (name,))
            return None
        if way == "postprocs":
            on = not plan.postprocs
            return Generated(SchedPlan(plan.trace, LLVM_POSTPROCS if on else ()),
                             ("postprocs.on" if on else "postprocs.off",))
        source = PrimitiveSource(func, self.stats)
        family = SCHED_FAMILY.with_source(source, self.max_instructions)
        mutator = next(m for m in sequence_mutators(family) if m.name == way)
        current = [item_of(i) for i in items]
        partner = apart([item_of(i) for i in parse_trace(rng.choice(others).trace)], "p") if others else None
        edited = mutator.mutate(current, rng, partner)
        if edited == current:
            return None
        names = (way, f"primitive.{source.last}") if source.last else (way,)
        return Generated(SchedPlan.of(instructions_of(edited), plan.postprocs), names)

    def _space(self, func: Any, rng: random.Random) -> Generated | None:
        from seedzer.mutate.sched.space import rules_of, sample_space

        found = sample_space(func, rng, self.num_cores)
        if found is None:
            return None
        items, postprocs = found
        return Generated(SchedPlan.of(items, postprocs), ("ms.space", *(f"ms.rule.{r}" for r in rules_of(items))))
