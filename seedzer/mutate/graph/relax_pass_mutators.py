"""Relax (graph-level) pass-sequence mutators: Tzer's insert, delete, repeat, swap, replace, options
and crossover, kept within the Relax pass contracts.

A Relax sequence runs before ``tvm.compile``'s default pipeline, so its length is ``0..MAX_LEN`` (the
empty sequence is the default pipeline alone). Unlike the TIR level, where a plan re-places passes
after TVM's fixed pipeline, the order of a Relax sequence *is* the order the kernel runs, and a pass's
contract depends on the phases earlier passes established (:mod:`seedzer.passes.graph.contracts`).
So every mutator here chooses among the edits that keep the whole sequence in contract (an insertion
goes only where its contract allows, a deletion never strands a pass that needed the deleted one);
when no such edit exists it returns the input unchanged (or, for an input already out of contract,
its in-contract plan). The input is never modified. TVM-free.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Collection
from typing import ClassVar

from seedzer.mutate.untriggered import insertion_names
from seedzer.passes.graph.catalog import RELAX_CATALOG, RELAX_PASS_NAMES, sample_relax_pass
from seedzer.passes.graph.contracts import PIPELINE_ORDERS, out_of_contract, plan_relax
from seedzer.seed import PassSpec

MIN_LEN = 0
MAX_LEN = 24
TRIES = 8
"""Fresh samples a mutator tries before it gives up and returns its input."""

Seq = list[PassSpec]


def in_contract(passes: Seq) -> bool:
    """Whether every pass of ``passes`` is in contract and the length is within ``MIN_LEN..MAX_LEN``."""
    return MIN_LEN <= len(passes) <= MAX_LEN and not out_of_contract(passes)


def _first_valid(candidates: list[Seq], rng: random.Random) -> Seq | None:
    """A random in-contract candidate (None: none is)."""
    valid = [c for c in candidates if in_contract(c)]
    return rng.choice(valid) if valid else None


class RelaxPassMutator:
    """A Relax pass-sequence mutator (``PassMutator`` protocol): a name, a weight, and ``_mutate``,
    which proposes one in-contract sequence or None (then the base tries again, up to :data:`TRIES`)."""

    name: ClassVar[str] = ""
    default_weight: ClassVar[float] = 1.0

    def __init__(self, weight: float | None = None) -> None:
        self.weight = self.default_weight if weight is None else float(weight)
        self.triggered: Collection[str] = ()
        """The passes the entry triggered, for this call of :meth:`mutate` (what a new pass avoids)."""

    def mutate(self, passes: list[PassSpec], rng: random.Random, other: list[PassSpec] | None = None,
               triggered: Collection[str] = ()) -> list[PassSpec]:
        """Return a new in-contract sequence derived from ``passes`` (the input unchanged if none); a
        pass it puts in preferably one the entry has not ``triggered`` (:mod:`seedzer.mutate.untriggered`)."""
        self.triggered = triggered
        for _ in range(TRIES):
            out = self._mutate(list(passes), rng, other)
            if out is not None and in_contract(out):
                return out
        return list(passes) if in_contract(list(passes)) else plan_relax(passes)[:MAX_LEN]

    def _mutate(self, passes: Seq, rng: random.Random, other: Seq | None) -> Seq | None:
        raise NotImplementedError

    def fresh_pass(self, rng: random.Random) -> PassSpec:
        """A new pass to put in, preferably one the entry has not triggered."""
        return sample_relax_pass(rng, insertion_names(RELAX_PASS_NAMES, self.triggered, rng))

    def __repr__(self) -> str:
        return f"{type(self).__name__}(weight={self.weight})"


def _chunk(rng: random.Random) -> Seq:
    """A contiguous run of one of TVM's own pipeline orders (reaches phases one pass seldom does)."""
    order = rng.choice([o for o in PIPELINE_ORDERS.values() if o])
    start = rng.randrange(len(order))
    return order[start:rng.randint(start + 1, len(order))]


class InsertRelaxPass(RelaxPassMutator):
    """Insert one random pass (one time in five, a run of a TVM pipeline order) at a position its
    contract allows."""

    name: ClassVar[str] = "relax_insert"

    def _mutate(self, passes: Seq, rng: random.Random, other: Seq | None) -> Seq | None:
        new = _chunk(rng) if rng.random() < 0.2 else [self.fresh_pass(rng)]
        if len(passes) + len(new) > MAX_LEN:
            return None
        return _first_valid([passes[:at] + new + passes[at:] for at in range(len(passes) + 1)], rng)


class DeleteRelaxPass(RelaxPassMutator):
    """Delete one pass whose removal leaves every other pass in contract."""

    name: ClassVar[str] = "relax_delete"

    def _mutate(self, passes: Seq, rng: random.Random, other: Seq | None) -> Seq | None:
        return _first_valid([passes[:i] + passes[i + 1:] for i in range(len(passes))], rng)


class RepeatRelaxPass(RelaxPassMutator):
    """Duplicate one pass in place (Tzer's repeat: running a pass twice must be harmless)."""

    name: ClassVar[str] = "relax_repeat"

    def _mutate(self, passes: Seq, rng: random.Random, other: Seq | None) -> Seq | None:
        return _first_valid([passes[:i + 1] + passes[i:] for i in range(len(passes))], rng)


class SwapRelaxPasses(RelaxPassMutator):
    """Swap two adjacent passes (half the time) or two random ones, within their contracts."""

    name: ClassVar[str] = "relax_swap"

    def _mutate(self, passes: Seq, rng: random.Random, other: Seq | None) -> Seq | None:
        n = len(passes)
        if n < 2:
            return None
        if rng.random() < 0.5:
            pairs = [(i, i + 1) for i in range(n - 1)]
        else:
            pairs = [(i, j) for i in range(n) for j in range(i + 2, n)] or [(0, 1)]
        candidates = []
        for i, j in pairs:
            if passes[i] != passes[j]:
                swapped = list(passes)
                swapped[i], swapped[j] = swapped[j], swapped[i]
                candidates.append(swapped)
        return _first_valid(candidates, rng)


class ReplaceRelaxPass(RelaxPassMutator):
    """Replace one pass by another random pass that is in contract there."""

    name: ClassVar[str] = "relax_replace"

    def _mutate(self, passes: Seq, rng: random.Random, other: Seq | None) -> Seq | None:
        if not passes:
            return None
        new = self.fresh_pass(rng)
        candidates = [[*passes[:i], new, *passes[i + 1:]] for i in range(len(passes)) if passes[i].name != new.name]
        return _first_valid(candidates, rng)


class RelaxPassOptions(RelaxPassMutator):
    """Resample the arguments of one pass that takes arguments (fusion level, layouts, dtypes...)."""

    name: ClassVar[str] = "relax_options"

    def _mutate(self, passes: Seq, rng: random.Random, other: Seq | None) -> Seq | None:
        tunable = [i for i, p in enumerate(passes) if p.name in RELAX_CATALOG and RELAX_CATALOG[p.name].args]
        if not tunable:
            return None
        i = rng.choice(tunable)
        resampled = RELAX_CATALOG[passes[i].name].sample(rng)
        if resampled == passes[i]:
            return None
        return [*passes[:i], resampled, *passes[i + 1:]]


def _single(a: Seq, b: Seq, rng: random.Random) -> Seq:
    return a[:rng.randint(0, len(a))] + b[rng.randint(0, len(b)):]


def _two(a: Seq, b: Seq, rng: random.Random) -> Seq:
    i, j = sorted(rng.randint(0, len(a)) for _ in range(2))
    k, m = sorted(rng.randint(0, len(b)) for _ in range(2))
    return a[:i] + b[k:m] + a[j:]


def _uniform(a: Seq, b: Seq, rng: random.Random) -> Seq:
    out = []
    for k in range(max(len(a), len(b))):
        pick = b if rng.random() < 0.5 else a
        if k < len(pick):
            out.append(pick[k])
    return out


_CROSSOVERS: tuple[Callable[[Seq, Seq, random.Random], Seq], ...] = (_single, _two, _uniform)


class RelaxCrossover(RelaxPassMutator):
    """Recombine with ``other`` (single-point, two-point or uniform, Tzer's three); without a partner,
    with one of TVM's pipeline orders."""

    name: ClassVar[str] = "relax_crossover"
    default_weight: ClassVar[float] = 0.5

    def _mutate(self, passes: Seq, rng: random.Random, other: Seq | None) -> Seq | None:
        partner = list(other) if other else list(rng.choice(list(PIPELINE_ORDERS.values())))
        child = rng.choice(_CROSSOVERS)(passes, partner, rng)
        return child[:MAX_LEN] if not out_of_contract(child) else None


RELAX_PASS_MUTATORS: dict[str, type[RelaxPassMutator]] = {
    cls.name: cls
    for cls in (InsertRelaxPass, DeleteRelaxPass, RepeatRelaxPass, SwapRelaxPasses, ReplaceRelaxPass,
                RelaxPassOptions, RelaxCrossover)
}
"""Every Relax pass-sequence mutator class by its name."""


def default_relax_pass_mutators() -> list[RelaxPassMutator]:
    """Every Relax pass-sequence mutator at its default weight."""
    return [cls() for cls in RELAX_PASS_MUTATORS.values()]
