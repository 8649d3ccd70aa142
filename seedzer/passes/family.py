"""The seam of a pass family: what the generic sequence mutators and a level's fuzzer ask of a kind of
pass sequence (TVM-free).

A *pass family* is a kind of sequence a test case carries and its kernel applies: the TIR passes a plan
inserts into TVM's pipeline (:mod:`seedzer.passes.tir.family`), the Relax passes and IR mutations run
before ``tvm.compile`` (:mod:`seedzer.passes.graph.family`). Its items are
:class:`~seedzer.seed.PassSpec`\\ s (a name its catalogue knows, JSON arguments), so a sequence is
stored, scheduled and reduced alike in every family. The mutators (:mod:`seedzer.mutate.sequence`:
insert, delete, replace, repeat, swap, options, crossover) are written once and parameterised by a
family, as LibAFL's mutators are by their input type; what differs between families is:

- the catalogue (:attr:`PassFamily.catalog`: names, argument samplers, weights) and the names a new
  item is drawn from (:attr:`PassFamily.names`);
- the contract check (:meth:`PassFamily.in_contract`): whether a whole sequence runs as TVM means
  its items to, each given the items before it (the mutators choose among the edits it accepts);
- how a sequence is applied (:meth:`PassFamily.placeable`: the items the kernel runs, in order);
- the shape of its sequences and of some edits (:class:`SequenceRules`, :meth:`PassFamily.run`,
  :meth:`PassFamily.partner`), and the name under which an item runs (:meth:`PassFamily.ran_as`).

A family of schedule primitives fits as a third without a copy: an item is a trace instruction (the
primitive's name; its block, loop and buffer arguments as index seeds into what the PrimFunc and the
instructions before it define, resolved modulo their number when the trace is applied, as the Relax
IR mutations' ``index`` arguments are; a sampling instruction's decision as an argument). Its
catalogue lists the primitives with their argument samplers; :meth:`~PassFamily.in_contract` sees the
whole sequence, so the check of one instruction can read its context (a loop must exist before it is
split, a block be left before it is inlined); :meth:`~PassFamily.placeable` names the instructions
applied; :meth:`~PassFamily.run` can insert a run of a design space's instructions (as the Relax
family inserts a run of one of TVM's pipeline orders), :meth:`~PassFamily.partner` a trace of the
same PrimFunc to cross over with.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from seedzer.passes.catalog import PassInfo
from seedzer.seed import PassSpec


@dataclass(frozen=True)
class SequenceRules:
    """How the generic mutators shape a family's sequences."""

    prefix: str
    """What the family's mutators are named with: ``prefix`` + operation (``pass_insert``,
    ``relax_crossover``: the names campaign.db and ``status`` show)."""
    operations: tuple[str, ...]
    """The mutators the family uses, in the order a weighted pick sees them."""
    min_len: int
    max_len: int
    run_share: float = 0.0
    """How often an insertion puts in a run of items (:meth:`PassFamily.run`) rather than one fresh
    item, and a deletion removes a slice of up to :attr:`longest_deletion` items."""
    longest_deletion: int = 1
    make_room: bool = False
    """Whether an insertion into a full sequence first drops a random item (else it finds no edit)."""
    resample_share: float = 0.0
    """How often a replacement resamples the arguments of the item at a position instead (what a family
    without an ``options`` mutator does there)."""


class PassFamily(Protocol):
    """A kind of pass sequence (see the module docstring)."""

    rules: SequenceRules
    catalog: Mapping[str, PassInfo]
    """Every item the family knows, by name."""
    names: Sequence[str]
    """The items a mutator puts in (a subset of the catalogue: those with a contract where it runs)."""

    def in_contract(self, items: Sequence[PassSpec]) -> bool:
        """Whether every item of ``items`` is where its contract allows, given the items before it
        (the length bounds are :attr:`rules`')."""
        ...

    def placeable(self, items: Sequence[PassSpec]) -> list[tuple[int, PassSpec]]:
        """``(index, item)`` of the items the kernel applies, in the order it applies them (an item
        out of contract is left out)."""
        ...

    def run(self, rng: random.Random, room: int, fresh: Callable[[random.Random], PassSpec]) -> list[PassSpec]:
        """A run of items an insertion puts in as one (at most ``room`` of them where the family can
        bound it; ``fresh`` draws one new item as the mutator would)."""
        ...

    def partner(self, rng: random.Random) -> list[PassSpec]:
        """A sequence to cross over with when the entry has no partner."""
        ...

    def ran_as(self, name: str) -> str:
        """The name under which TVM runs item ``name`` (what an entry's ``triggered`` passes hold)."""
        ...
