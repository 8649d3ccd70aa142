"""Pass-sequence mutators (insert, delete, replace, crossover).

Every mutator returns a new list of length ``MIN_LEN..MAX_LEN``; the input is never modified.
TVM-free: the campaign process may use these without importing TVM.
"""

from __future__ import annotations

import random
from collections.abc import Collection
from typing import ClassVar

from seedzer.mutate.untriggered import insertion_names
from seedzer.passes.tir import catalog
from seedzer.passes.tir.contracts import fuzzable
from seedzer.seed import PassSpec

MIN_LEN = 1
MAX_LEN = 50
FUZZABLE: tuple[str, ...] = tuple(fuzzable("llvm"))
"""The passes mutators insert: those with a contract for llvm (GPU-only and run-once passes never)."""


def sample_pass(rng: random.Random, names: list[str] | None = None) -> PassSpec:
    """A random fuzzable pass (weighted) with sampled arguments, or one of ``names``."""
    return catalog.sample_pass(rng, names or list(FUZZABLE))


def _clip(passes: list[PassSpec], rng: random.Random) -> list[PassSpec]:
    """Bring a sequence back into ``[MIN_LEN, MAX_LEN]`` (random passes in, or trailing ones out)."""
    out = list(passes)
    while len(out) < MIN_LEN:
        out.append(sample_pass(rng))
    return out[:MAX_LEN]


class BasePassMutator:
    """A pass-sequence mutator (``PassMutator`` protocol) with a name and a weight."""

    name: ClassVar[str] = ""
    default_weight: ClassVar[float] = 1.0

    def __init__(self, weight: float | None = None) -> None:
        self.weight = self.default_weight if weight is None else float(weight)
        self.triggered: Collection[str] = ()
        """The passes the entry triggered, for this call of :meth:`mutate` (what a new pass avoids)."""

    def mutate(self, passes: list[PassSpec], rng: random.Random, other: list[PassSpec] | None = None,
               triggered: Collection[str] = ()) -> list[PassSpec]:
        """Return a new sequence derived from ``passes``; a pass it puts in preferably one the entry
        has not ``triggered`` (:mod:`seedzer.mutate.untriggered`)."""
        self.triggered = triggered
        return _clip(self._mutate(list(passes), rng, other), rng)

    def fresh_pass(self, rng: random.Random) -> PassSpec:
        """A new pass to put in, preferably one the entry has not triggered."""
        return sample_pass(rng, insertion_names(FUZZABLE, self.triggered, rng))

    def _mutate(self, passes: list[PassSpec], rng: random.Random, other: list[PassSpec] | None) -> list[PassSpec]:
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}(weight={self.weight})"


class InsertPass(BasePassMutator):
    """Insert one random pass (or, one time in four, a short random run of passes) anywhere."""

    name: ClassVar[str] = "pass_insert"

    def _mutate(self, passes: list[PassSpec], rng: random.Random, other: list[PassSpec] | None) -> list[PassSpec]:
        room = MAX_LEN - len(passes)
        if room <= 0:
            passes.pop(rng.randrange(len(passes)))
            room = 1
        count = rng.randint(1, min(room, 5)) if rng.random() < 0.25 else 1
        at = rng.randint(0, len(passes))
        return passes[:at] + [self.fresh_pass(rng) for _ in range(count)] + passes[at:]


class DeletePass(BasePassMutator):
    """Delete one pass (or a short slice); a one-pass sequence gets a fresh pass instead."""

    name: ClassVar[str] = "pass_delete"

    def _mutate(self, passes: list[PassSpec], rng: random.Random, other: list[PassSpec] | None) -> list[PassSpec]:
        if len(passes) <= MIN_LEN:
            return [sample_pass(rng)]
        start = rng.randrange(len(passes))
        stop = min(len(passes), start + (rng.randint(1, 4) if rng.random() < 0.25 else 1))
        if stop - start >= len(passes):
            stop = start + len(passes) - MIN_LEN
        return passes[:start] + passes[stop:]


class ReplacePass(BasePassMutator):
    """Replace one pass by a random one, or resample the arguments of the same pass."""

    name: ClassVar[str] = "pass_replace"

    def _mutate(self, passes: list[PassSpec], rng: random.Random, other: list[PassSpec] | None) -> list[PassSpec]:
        if not passes:
            return [sample_pass(rng)]
        i = rng.randrange(len(passes))
        if rng.random() < 0.3:
            passes[i] = sample_pass(rng, [passes[i].name])
        else:
            passes[i] = self.fresh_pass(rng)
        return passes


class Crossover(BasePassMutator):
    """Recombine with ``other``: single-point, two-point or uniform crossover (Tzer's three)."""

    name: ClassVar[str] = "pass_crossover"
    default_weight: ClassVar[float] = 0.5

    def _mutate(self, passes: list[PassSpec], rng: random.Random, other: list[PassSpec] | None) -> list[PassSpec]:
        if not other:
            other = [sample_pass(rng) for _ in range(rng.randint(MIN_LEN, 10))]
        kind = rng.choice(("single", "two", "uniform"))
        if kind == "single":
            i, j = rng.randint(0, len(passes)), rng.randint(0, len(other))
            return passes[:i] + other[j:]
        if kind == "two":
            a, b = sorted(rng.randint(0, len(passes)) for _ in range(2))
            c, d = sorted(rng.randint(0, len(other)) for _ in range(2))
            return passes[:a] + other[c:d] + passes[b:]
        n = max(len(passes), len(other))
        out = []
        for k in range(n):
            pick = other if rng.random() < 0.5 else passes
            if k < len(pick):
                out.append(pick[k])
        return out
