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

A family whose items depend on what the items before them define is a family too: the schedule
family's items are the instructions of a schedule trace (:mod:`seedzer.passes.sched.family`), each
reading the blocks and loops that instructions before it named. Two parts of the seam serve it, and a
family whose items fit anywhere takes them as they are (:class:`ContextFree`):

- :meth:`PassFamily.settle`: the sequence an edit leaves, as the family keeps it (a trace without the
  instructions that lost an input, renumbered); every mutator's proposal is settled before it is judged;
- :meth:`PassFamily.draw_at`: new items drawn for one position, given the items before it (a primitive
  on the loops the trace made so far), asked by an insertion and a replacement when the family's rules
  say ``in_place``; the rules' ``supporting`` names the items a mutator never picks to delete or
  replace (a trace's getters and samplers: they come and go with the primitives that use them).
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
    in_place: bool = False
    """Whether a new item depends on the items before it: an insertion or a replacement then picks its
    position first and asks the family for items that fit there (:meth:`PassFamily.draw_at`), instead of
    drawing one and placing it where its contract allows."""
    tail_share: float = 0.0
    """With ``in_place``: how often an insertion goes at the end (the rest: a random position)."""
    supporting: frozenset[str] = frozenset()
    """Item names a deletion or a replacement never picks: they support the items that use them and go
    with them (:meth:`PassFamily.settle`)."""


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

    def settle(self, items: Sequence[PassSpec]) -> list[PassSpec]:
        """``items`` as the family keeps a sequence an edit left (every proposal is settled before it is
        judged; a family whose items fit anywhere keeps them as they are)."""
        ...

    def draw_at(self, items: Sequence[PassSpec], at: int, rng: random.Random) -> list[PassSpec] | None:
        """New items that fit at position ``at`` of ``items``, given the items before it (None: nothing
        fits there); asked only when the family's rules say ``in_place``."""
        ...


class ContextFree:
    """The part of :class:`PassFamily` a family whose items fit anywhere their contract allows shares: a
    sequence is kept as it is, and no item is drawn for a position (its rules are not ``in_place``)."""

    def settle(self, items: Sequence[PassSpec]) -> list[PassSpec]:
        """``items`` unchanged."""
        return list(items)

    def draw_at(self, items: Sequence[PassSpec], at: int, rng: random.Random) -> list[PassSpec] | None:
        """None: its items are drawn without a position (:meth:`PassFamily.run`, the catalogue's draw)."""
        return None
