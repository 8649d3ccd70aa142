"""Insert, delete, replace and crossover of trace instructions, as operations over a sequence of items.

The items are :class:`~seedzer.kernel.sched.trace.Instruction` records; an item sequence *applies*
as a trace when :func:`applies` finds nothing wrong with it (every random variable defined before it
is used, once; known kinds) and TVM then accepts it, which only the kernel knows. Each operation
keeps a sequence well-formed by construction: deleting an instruction deletes what uses its
results; a crossover's tail takes along the getters and samplers of its head that it needs, and
drops what needs a result only the other head's transformations make. New instructions come from
an :class:`ItemSource` (the primitive drawers), so the house's generic sequence mutators can run
these operations with this module's :func:`applies` as their validity test and :data:`OPERATIONS`
as their catalogue. TVM-free.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Protocol

from seedzer.kernel.sched.trace import GETTERS, SAMPLERS, Instruction, canonical, renamed, trace_problem

Items = list[Instruction]


class ItemSource(Protocol):
    """Draws the instructions of one new primitive for position ``at`` of ``items`` (None: none fits)."""

    def __call__(self, items: Sequence[Instruction], at: int, rng: random.Random) -> Items | None: ...


def applies(items: Sequence[Instruction]) -> str | None:
    """Why ``items`` cannot be a trace (None: it may be; TVM decides the rest)."""
    return trace_problem(items)


def dependents(items: Sequence[Instruction], removed: set[int]) -> set[int]:
    """``removed`` and every later instruction that uses a result of one of them, transitively."""
    dead = set(removed)
    gone = {o for i in dead for o in items[i].outputs}
    for index in range(min(dead, default=len(items)), len(items)):
        if index in dead:
            continue
        if any(name in gone for name in items[index].used()):
            dead.add(index)
            gone.update(items[index].outputs)
    return dead


def delete(items: Sequence[Instruction], index: int) -> Items:
    """``items`` without instruction ``index`` and what depends on it."""
    dead = dependents(items, {index})
    return canonical([inst for i, inst in enumerate(items) if i not in dead])


def _fresh(items: Sequence[Instruction], tag: str) -> Items:
    """``items`` with every random variable renamed apart (``<name>_<tag>``)."""
    return renamed(items, {o: f"{o}_{tag}" for inst in items for o in inst.outputs if o != "_"})


def insert(items: Sequence[Instruction], at: int, new: Sequence[Instruction]) -> Items:
    """``new`` inserted before instruction ``at``."""
    return canonical([*items[:at], *_fresh(new, "ins"), *items[at:]])


def replace(items: Sequence[Instruction], index: int, new: Sequence[Instruction]) -> Items:
    """Instruction ``index`` (and what depends on it) replaced by ``new`` at its place."""
    dead = dependents(items, {index})
    kept = [inst for i, inst in enumerate(items[:index]) if i not in dead]
    rest = [inst for i, inst in enumerate(items) if i > index and i not in dead]
    return canonical([*kept, *_fresh(new, "rep"), *rest])


def crossover(first: Sequence[Instruction], second: Sequence[Instruction], cut: int, other_cut: int) -> Items:
    """``first[:cut]`` followed by ``second[other_cut:]``: the tail takes along the pure instructions
    (getters, samplers) of ``second``'s head whose results it uses; what needs a result of
    ``second``'s head's transformations is dropped."""
    head, tail_head, tail = list(first[:cut]), list(second[:other_cut]), list(second[other_cut:])
    defined_by = {o: i for i, inst in enumerate(tail_head) for o in inst.outputs}
    needed: set[int] = set()
    pending = [name for inst in tail for name in inst.used() if name in defined_by]
    while pending:
        index = defined_by[pending.pop()]
        if index in needed:
            continue
        needed.add(index)
        pending.extend(name for name in tail_head[index].used() if name in defined_by)
    pure = {i for i in needed if tail_head[i].kind in GETTERS | SAMPLERS}
    carried = [inst for i, inst in enumerate(tail_head) if i in pure]
    missing = {o for i in needed - pure for o in tail_head[i].outputs}
    joined = [*carried, *tail]
    unusable = {i for i, inst in enumerate(joined) if any(n in missing for n in inst.used())}
    joined = [inst for i, inst in enumerate(joined) if i not in dependents(joined, unusable)]
    return canonical([*_fresh(head, "a"), *_fresh(joined, "b")])


Operation = Callable[[Sequence[Instruction], Sequence[Instruction], ItemSource, random.Random], Items | None]


def _transforming(items: Sequence[Instruction]) -> list[int]:
    return [i for i, inst in enumerate(items) if inst.kind not in GETTERS | SAMPLERS]


def op_insert(items: Sequence[Instruction], other: Sequence[Instruction], source: ItemSource,
              rng: random.Random) -> Items | None:
    """A new primitive at the end (mostly) or before a random instruction."""
    at = len(items) if not items or rng.random() < 0.7 else rng.randrange(len(items) + 1)
    new = source(items, at, rng)
    return insert(items, at, new) if new else None


def op_delete(items: Sequence[Instruction], other: Sequence[Instruction], source: ItemSource,
              rng: random.Random) -> Items | None:
    """One primitive deleted, with what uses its results."""
    candidates = _transforming(items)
    return delete(items, rng.choice(candidates)) if candidates else None


def op_replace(items: Sequence[Instruction], other: Sequence[Instruction], source: ItemSource,
               rng: random.Random) -> Items | None:
    """One primitive replaced by a new one drawn at its place."""
    candidates = _transforming(items)
    if not candidates:
        return None
    index = rng.choice(candidates)
    dead = dependents(items, {index})
    prefix = [inst for i, inst in enumerate(items[:index]) if i not in dead]
    new = source(prefix, len(prefix), rng)
    return replace(items, index, new) if new else None


def op_crossover(items: Sequence[Instruction], other: Sequence[Instruction], source: ItemSource,
                 rng: random.Random) -> Items | None:
    """This trace's head and another trace's (same PrimFunc) tail."""
    if not other:
        return None
    return crossover(items, other, rng.randrange(len(items) + 1), rng.randrange(len(other)))


OPERATIONS: dict[str, Operation] = {"insert": op_insert, "delete": op_delete, "replace": op_replace,
                                    "crossover": op_crossover}
"""The item operations by name (the names a status row shows, under ``trace.``)."""
