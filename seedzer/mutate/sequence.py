"""The sequence mutators, written once and parameterised by a pass family (TVM-free).

Tzer's pass-sequence mutations (insert, delete, replace, crossover) and those of the Relax level
(repeat, swap, options) as LibAFL writes its mutators: one class per operation, generic over the
family it is made with (:class:`~seedzer.passes.family.PassFamily`: the catalogue, the contract check,
how a sequence is applied). A family names the operations it uses and its mutators' prefix
(:class:`~seedzer.passes.family.SequenceRules`), so the TIR family's ``pass_insert`` and the Relax
family's ``relax_insert`` are one :class:`Insert` made with two families.

Each mutator proposes an edit; where the edit has a choice of position it chooses uniformly among the
positions the family's contract check accepts. A proposal is brought to the family's minimum length
(topped up with fresh items), cut to its maximum and settled as the family keeps a sequence
(:meth:`~seedzer.passes.family.PassFamily.settle`); when none of :data:`TRIES` proposals is within
the bounds and in contract, the input comes back unchanged (or, out of contract itself, as the items
the family applies of it). A new item is preferably one the entry has not triggered
(:mod:`seedzer.mutate.untriggered`); for a family whose items depend on those before them (its rules
say ``in_place``: a schedule trace's primitives) an insertion or a replacement picks the position first
and the family draws the items for it, and a deletion or a replacement never picks an item that only
supports others (its rules' ``supporting``). The input is never modified.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Collection, Mapping
from typing import ClassVar

from seedzer.mutate.untriggered import insertion_names
from seedzer.mutate.weighted import checked_weights
from seedzer.passes.catalog import draw
from seedzer.passes.family import PassFamily
from seedzer.seed import PassSpec

Seq = list[PassSpec]
TRIES = 8
"""Proposals a mutator makes before it gives its input back."""


class SequenceMutator:
    """A mutator of one family's sequences (the ``PassMutator`` protocol): its operation's name after
    the family's prefix, a weight, and :meth:`propose`, one edit (None: no edit fits)."""

    operation: ClassVar[str] = ""
    default_weight: ClassVar[float] = 1.0

    def __init__(self, family: PassFamily, weight: float | None = None) -> None:
        self.family = family
        self.rules = family.rules
        self.name = family.rules.prefix + self.operation
        self.weight = self.default_weight if weight is None else float(weight)
        self.triggered: Collection[str] = ()
        """The passes the entry triggered, for this call of :meth:`mutate` (what a new item avoids)."""

    def mutate(self, passes: list[PassSpec], rng: random.Random, other: list[PassSpec] | None = None,
               triggered: Collection[str] = ()) -> list[PassSpec]:
        """A new sequence derived from ``passes`` (``other``: a crossover partner), within the family's
        bounds and contracts (see the module docstring)."""
        self.triggered = triggered
        for _ in range(TRIES):
            out = self.propose(list(passes), rng, other)
            if out is not None:
                out = self.family.settle(self.fit(out, rng))
                if self.valid(out):
                    return out
        kept = list(passes) if self.valid(list(passes)) else [item for _, item in self.family.placeable(passes)]
        return self.fit(kept, rng)

    def propose(self, passes: Seq, rng: random.Random, other: Seq | None) -> Seq | None:
        """One edit of ``passes`` (a copy it may change), or None when it finds none."""
        raise NotImplementedError

    def valid(self, passes: Seq) -> bool:
        """Whether ``passes`` is within the family's length bounds and in contract."""
        return self.rules.min_len <= len(passes) <= self.rules.max_len and self.family.in_contract(passes)

    def fit(self, passes: Seq, rng: random.Random) -> Seq:
        """``passes`` topped up with random items to the minimum length and cut to the maximum."""
        out = list(passes)
        while len(out) < self.rules.min_len:
            out.append(self.sample(rng))
        return out[:self.rules.max_len]

    def choose(self, candidates: list[Seq], rng: random.Random) -> Seq | None:
        """A random candidate among the valid ones, as the family keeps them (None: none is)."""
        valid = [c for c in map(self.family.settle, candidates) if self.valid(c)]
        return rng.choice(valid) if valid else None

    def editable(self, passes: Seq) -> list[int]:
        """The positions a deletion or a replacement may pick (not an item that only supports others)."""
        return [i for i, p in enumerate(passes) if p.name not in self.rules.supporting]

    def sample(self, rng: random.Random) -> PassSpec:
        """A random item the family puts in, with sampled arguments."""
        return draw(self.family.catalog, self.family.names, rng)

    def fresh(self, rng: random.Random) -> PassSpec:
        """A new item to put in, preferably one the entry has not triggered."""
        names = insertion_names(self.family.names, self.triggered, rng, self.family.ran_as)
        return draw(self.family.catalog, names or self.family.names, rng)

    def resample(self, item: PassSpec, rng: random.Random) -> PassSpec:
        """``item`` with freshly sampled arguments."""
        return self.family.catalog[item.name].sample(rng)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name}, weight={self.weight})"


class Insert(SequenceMutator):
    """Insert one fresh item (or, ``run_share`` of the time, the family's run of items) at a position
    its contract allows; a full sequence first loses a random item when the family ``make_room``."""

    operation = "insert"

    def propose(self, passes: Seq, rng: random.Random, other: Seq | None) -> Seq | None:
        room = self.rules.max_len - len(passes)
        if room <= 0 and self.rules.make_room:
            passes.pop(rng.randrange(len(passes)))
            room = 1
        if self.rules.in_place:
            at = len(passes) if not passes or rng.random() < self.rules.tail_share else rng.randrange(len(passes) + 1)
            drawn = self.family.draw_at(passes, at, rng)
            return passes[:at] + drawn + passes[at:] if drawn and len(passes) + len(drawn) <= self.rules.max_len \
                else None
        share = self.rules.run_share
        new = self.family.run(rng, room, self.fresh) if share and rng.random() < share else [self.fresh(rng)]
        if len(passes) + len(new) > self.rules.max_len:
            return None
        return self.choose([passes[:at] + new + passes[at:] for at in range(len(passes) + 1)], rng)


class Delete(SequenceMutator):
    """Delete one item whose removal leaves the others in contract (``run_share`` of the time a slice
    of up to ``longest_deletion`` from there); at the minimum length the last item goes, and the
    sequence is topped up with a fresh one."""

    operation = "delete"

    def propose(self, passes: Seq, rng: random.Random, other: Seq | None) -> Seq | None:
        if len(passes) <= self.rules.min_len:
            return passes[:-1]
        starts = [i for i in self.editable(passes) if self.valid(self.family.settle(passes[:i] + passes[i + 1:]))]
        if not starts:
            return None
        start = rng.choice(starts)
        longest, share = self.rules.longest_deletion, self.rules.run_share
        span = rng.randint(1, longest) if longest > 1 and share and rng.random() < share else 1
        stop = min(len(passes), start + span)
        if stop - start >= len(passes):
            stop = start + len(passes) - self.rules.min_len
        return passes[:start] + passes[stop:]


class Replace(SequenceMutator):
    """Replace one item by another fresh one that is in contract there (``resample_share`` of the time,
    resample the arguments of the item at a random position instead)."""

    operation = "replace"

    def propose(self, passes: Seq, rng: random.Random, other: Seq | None) -> Seq | None:
        if not passes:
            return None
        share = self.rules.resample_share
        if share and rng.random() < share:
            i = rng.randrange(len(passes))
            return [*passes[:i], self.resample(passes[i], rng), *passes[i + 1:]]
        if self.rules.in_place:
            positions = self.editable(passes)
            at = rng.choice(positions) if positions else None
            drawn = self.family.draw_at(passes, at, rng) if at is not None else None
            return [*passes[:at], *drawn, *passes[at + 1:]] if drawn and at is not None else None
        new = self.fresh(rng)
        return self.choose([[*passes[:i], new, *passes[i + 1:]] for i in range(len(passes))
                            if passes[i].name != new.name], rng)


class Repeat(SequenceMutator):
    """Duplicate one item in place (Tzer's repeat: running a pass twice must be harmless)."""

    operation = "repeat"

    def propose(self, passes: Seq, rng: random.Random, other: Seq | None) -> Seq | None:
        return self.choose([passes[:i + 1] + passes[i:] for i in range(len(passes))], rng)


class Swap(SequenceMutator):
    """Swap two adjacent items (half the time) or two random ones, within their contracts."""

    operation = "swap"

    def propose(self, passes: Seq, rng: random.Random, other: Seq | None) -> Seq | None:
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
        return self.choose(candidates, rng)


class Options(SequenceMutator):
    """Resample the arguments of one item that takes arguments (fusion level, layouts, dtypes...)."""

    operation = "options"

    def propose(self, passes: Seq, rng: random.Random, other: Seq | None) -> Seq | None:
        catalog = self.family.catalog
        tunable = [i for i, p in enumerate(passes) if p.name in catalog and catalog[p.name].args]
        if not tunable:
            return None
        i = rng.choice(tunable)
        resampled = self.resample(passes[i], rng)
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


CROSSOVERS: tuple[Callable[[Seq, Seq, random.Random], Seq], ...] = (_single, _two, _uniform)
"""Tzer's three crossovers: single-point, two-point, uniform."""


class Crossover(SequenceMutator):
    """Recombine with ``other`` by one of Tzer's three crossovers; without a partner, with the family's
    (:meth:`~seedzer.passes.family.PassFamily.partner`). The child must be in contract; it is cut to
    the maximum length."""

    operation = "crossover"
    default_weight = 0.5

    def propose(self, passes: Seq, rng: random.Random, other: Seq | None) -> Seq | None:
        partner = list(other) if other else self.family.partner(rng)
        child = self.family.settle(rng.choice(CROSSOVERS)(passes, partner, rng))
        return child[:self.rules.max_len] if self.family.in_contract(child) else None


OPERATIONS: dict[str, type[SequenceMutator]] = {
    cls.operation: cls for cls in (Insert, Delete, Replace, Repeat, Swap, Options, Crossover)
}
"""Every sequence mutator class by its operation."""


def mutator_names(family: PassFamily) -> tuple[str, ...]:
    """The names of the family's mutators (prefix + operation), in its order."""
    return tuple(family.rules.prefix + op for op in family.rules.operations)


def sequence_mutators(family: PassFamily, weights: Mapping[str, object] | None = None) -> list[SequenceMutator]:
    """The family's mutators, in its order, at their default weights overridden by ``weights`` (by
    mutator name; an unknown name or a bad weight is a :class:`~seedzer.errors.ConfigError`)."""
    checked = checked_weights(weights, mutator_names(family), "pass")
    return [OPERATIONS[op](family, checked.get(family.rules.prefix + op)) for op in family.rules.operations]
