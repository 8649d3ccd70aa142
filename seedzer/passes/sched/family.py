"""The schedule family: a schedule trace's instructions as a pass family, so the house's sequence mutators
(:mod:`seedzer.mutate.sequence`) edit traces as they edit TIR and Relax pass sequences (TVM-free).

An item is one instruction of a trace, then the postprocessors (:mod:`seedzer.passes.sched.items`). An
instruction reads the random variables instructions before it defined (a loop a split made, a block a
getter found), so the family is ``in_place`` (:class:`~seedzer.passes.family.SequenceRules`): an
insertion picks its position first, at the end :data:`TAIL_SHARE` of the time, and a replacement the
primitive it replaces, and the family's :class:`ItemSource` draws a primitive for that place (the
primitive drawers of :mod:`seedzer.mutate.sched.primitives`, on the function as the trace so far left
it: that needs TVM, so a worker gives the source; the family as the level's object sees it has none).
Every proposal is settled (:func:`~seedzer.passes.sched.items.settled`): a deletion takes the
instructions that used the deleted one's results along, a crossover's tail keeps what it can define.
A deletion or a replacement picks a primitive, never a getter or a sampler (``supporting``: they go
with the primitives that use them). The operations are insert, delete, replace and crossover, named
``trace.insert`` ... (the names ``status`` shows).

A crossover joins a trace with another of the same PrimFunc (the worker keeps them), renamed apart
(:func:`~seedzer.passes.sched.items.apart`); without one it has no partner (:meth:`SchedFamily.partner`
is empty) and the sched generator does not draw it.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Callable, Mapping, Sequence
from typing import Protocol

from seedzer.kernel.sched.trace import KINDS
from seedzer.passes.catalog import PassInfo
from seedzer.passes.family import SequenceRules
from seedzer.passes.sched.items import PURE, is_postproc, postproc_item, settled
from seedzer.seed import PassSpec

OPERATIONS = ("insert", "delete", "replace", "crossover")
"""The sequence mutators the family uses (phase 1's trace operations)."""
PREFIX = "trace."
"""Its mutators' name prefix: ``trace.insert``..."""
TAIL_SHARE = 0.7
"""How often an insertion appends a primitive (the rest: before a random instruction); a primitive at the
end applies to everything the trace made."""
MAX_INSTRUCTIONS = 400
"""The longest trace by default (``levels.sched.max_instructions``)."""


class ItemSource(Protocol):
    """Draws the items of one new primitive for position ``at`` of ``items`` (None: none fits there)."""

    def __call__(self, items: Sequence[PassSpec], at: int, rng: random.Random) -> list[PassSpec] | None: ...


def rules(max_instructions: int = MAX_INSTRUCTIONS) -> SequenceRules:
    """The family's rules with traces of at most ``max_instructions`` items."""
    return SequenceRules(prefix=PREFIX, operations=OPERATIONS, min_len=0, max_len=max_instructions, in_place=True,
                         tail_share=TAIL_SHARE, supporting=PURE)


CATALOG: Mapping[str, PassInfo] = {name: PassInfo(name) for name in sorted(KINDS)}
"""Every instruction kind (no argument samplers: a primitive's arguments are drawn at its place)."""


@dataclasses.dataclass
class SchedFamily:
    """The schedule family (see the module docstring); ``source`` draws new primitives (a worker's)."""

    rules: SequenceRules = dataclasses.field(default_factory=rules)
    source: ItemSource | None = None
    catalog: Mapping[str, PassInfo] = dataclasses.field(default_factory=lambda: CATALOG)
    names: Sequence[str] = tuple(CATALOG)

    def with_source(self, source: ItemSource, max_instructions: int = MAX_INSTRUCTIONS) -> SchedFamily:
        """The family drawing new primitives from ``source``, with traces of at most ``max_instructions``."""
        return dataclasses.replace(self, rules=rules(max_instructions), source=source)

    def in_contract(self, items: Sequence[PassSpec]) -> bool:
        """Whether ``items`` is a plan as the family keeps it (:meth:`settle` leaves it unchanged)."""
        return settled(items) == list(items)

    def placeable(self, items: Sequence[PassSpec]) -> list[tuple[int, PassSpec]]:
        """The items a plan keeps of ``items``, numbered as they run (a trace's instructions are renumbered
        once an edit dropped some: :meth:`settle`)."""
        return list(enumerate(settled(items)))

    def settle(self, items: Sequence[PassSpec]) -> list[PassSpec]:
        """``items`` as a plan keeps them (:func:`~seedzer.passes.sched.items.settled`)."""
        return settled(items)

    def draw_at(self, items: Sequence[PassSpec], at: int, rng: random.Random) -> list[PassSpec] | None:
        """A primitive drawn for position ``at`` by the family's source (None: no source, or none fits)."""
        if self.source is None:
            return None
        return self.source([i for i in items[:at] if not is_postproc(i)], at, rng)

    def run(self, rng: random.Random, room: int, fresh: Callable[[random.Random], PassSpec]) -> list[PassSpec]:
        """No run: a primitive is drawn at its place (:meth:`draw_at`)."""
        return []

    def partner(self, rng: random.Random) -> list[PassSpec]:
        """No partner of its own: a trace crosses only with another of its PrimFunc."""
        return []

    def ran_as(self, name: str) -> str:
        """An instruction runs as its kind."""
        return name


SCHED_FAMILY = SchedFamily()
"""The family the schedule level's plans belong to (without a source: the level object's, TVM-free)."""

__all__ = ["CATALOG", "MAX_INSTRUCTIONS", "OPERATIONS", "PREFIX", "SCHED_FAMILY", "TAIL_SHARE", "ItemSource",
           "SchedFamily", "postproc_item", "rules"]
