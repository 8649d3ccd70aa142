"""The TIR pass family: TIR passes a plan inserts into TVM's pipeline (TVM-free).

A TIR test case's sequence is 1 to 50 passes; the plan (:func:`seedzer.passes.tir.contracts.plan`)
places each after the pipeline pass of its contract, keeping their order within a phase, so every
sequence is in contract (a pass without a contract for llvm is left out of the plan). A mutator puts
in only passes with a contract for llvm (:data:`FUZZABLE`); an insertion is one time in four a run of
up to five fresh passes (into a full sequence, after a random pass went), a deletion one time in four
a slice of up to four, and a replacement
resamples the replaced pass's arguments 30% of the time (Tzer's argument mutation: the family has no
``options`` mutator). Its mutators are named ``pass_insert``, ``pass_delete``, ``pass_replace`` and
``pass_crossover``.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence

from seedzer.passes.catalog import PassInfo, draw
from seedzer.passes.family import ContextFree, SequenceRules
from seedzer.passes.tir.catalog import CATALOG
from seedzer.passes.tir.contracts import fuzzable, placeable
from seedzer.seed import PassSpec

FUZZABLE: tuple[str, ...] = tuple(fuzzable("llvm"))
"""The passes mutators insert: those with a contract for llvm (GPU-only and run-once passes never)."""
LONGEST_RUN = 5
"""Most fresh passes one insertion puts in."""
LONGEST_PARTNER = 10
"""Longest random sequence a crossover without a partner recombines with."""


class TirFamily(ContextFree):
    """The TIR pass family (see the module docstring)."""

    rules = SequenceRules(prefix="pass_", operations=("insert", "delete", "replace", "crossover"), min_len=1,
                          max_len=50, run_share=0.25, longest_deletion=4, make_room=True, resample_share=0.3)
    catalog: Mapping[str, PassInfo] = CATALOG
    names: Sequence[str] = FUZZABLE

    def in_contract(self, items: Sequence[PassSpec]) -> bool:
        """Always: the plan puts every pass where its contract allows (or leaves it out)."""
        return True

    def placeable(self, items: Sequence[PassSpec]) -> list[tuple[int, PassSpec]]:
        """The passes a plan keeps, by phase (:func:`seedzer.passes.tir.contracts.placeable`)."""
        return placeable(items)

    def run(self, rng: random.Random, room: int, fresh: Callable[[random.Random], PassSpec]) -> list[PassSpec]:
        """Up to :data:`LONGEST_RUN` fresh passes (no more than ``room``)."""
        return [fresh(rng) for _ in range(rng.randint(1, min(room, LONGEST_RUN)))]

    def partner(self, rng: random.Random) -> list[PassSpec]:
        """A random sequence of fuzzable passes, 1 to :data:`LONGEST_PARTNER` long."""
        return [draw(CATALOG, FUZZABLE, rng) for _ in range(rng.randint(self.rules.min_len, LONGEST_PARTNER))]

    def ran_as(self, name: str) -> str:
        """A TIR pass runs under its catalogue name (``tirx.UnrollLoop``)."""
        return name


TIR_FAMILY = TirFamily()
"""The family the TIR level's sequences belong to."""
