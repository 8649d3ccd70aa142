"""What a schedule primitive can be applied to at one point of a trace: the function's blocks, their
loops and their buffers, read off a schedule that replayed the trace up to that point.

:func:`view_at` replays a prefix of a trace (it applied before: a corpus entry's trace ran cleanly)
and describes the scheduled function as :class:`Block` and :class:`Loop` records that the primitive
drawers (:mod:`seedzer.mutate.sched.primitives`) draw arguments from. A drawer refers to a block by
its name and to a loop by its position under its block: :class:`Draft` emits the ``GetSBlock`` and
``GetLoops`` instructions that bind them, so a drawn primitive never depends on how the trace before
it named its random variables. Imports TVM.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from seedzer.kernel.sched.trace import Instruction

DATA_PARALLEL, REDUCE = 0, 2
"""``IterVar.iter_type`` of a spatial and of a reduction block iterator."""


@dataclasses.dataclass(frozen=True)
class Loop:
    """One loop above a block: its extent (None when not a constant), kind and the iterator kinds
    of the block iterators its variable feeds (``S``, ``R`` or both)."""

    extent: int | None
    kind: int
    feeds: str
    annotated: tuple[str, ...] = ()


@dataclasses.dataclass(frozen=True)
class Buffer:
    """A buffer a block reads or writes: its name, dtype, shape and whether the function allocates it
    (an intermediate) rather than takes it as a parameter."""

    name: str
    dtype: str
    shape: tuple[int | None, ...]
    intermediate: bool
    window: bool = False
    """Whether the block accesses it through a sliding window: an index sums two of the block's
    iterators (a convolution's or a pooling's input, ``pad[vy + vky]``)."""


@dataclasses.dataclass(frozen=True)
class Block:
    """One block of the scheduled function, with its loops (outermost first) and buffers."""

    name: str
    iters: str
    """The kinds of its block iterators, e.g. ``SSR`` (``S`` spatial, ``R`` reduction, ``O`` other)."""
    extents: tuple[int | None, ...]
    loops: tuple[Loop, ...]
    reads: tuple[Buffer, ...]
    writes: tuple[Buffer, ...]
    has_init: bool
    producers: tuple[str, ...]
    consumers: tuple[str, ...]
    annotations: tuple[str, ...] = ()
    nested: bool = False
    """Whether it sits in another non-root block (a blockized or tensorized block's inside)."""

    @property
    def reduction(self) -> bool:
        """Whether it is a reduction block (an init and a reduction iterator)."""
        return self.has_init and "R" in self.iters


@dataclasses.dataclass(frozen=True)
class View:
    """The scheduled function at one point of a trace: its blocks (root excluded), by name."""

    blocks: tuple[Block, ...]
    func: Any
    root_annotations: tuple[str, ...] = ()

    def block(self, name: str) -> Block:
        """The block called ``name``."""
        return next(b for b in self.blocks if b.name == name)


def _int(expr: Any) -> int | None:
    value = getattr(expr, "value", None)
    return int(value) if isinstance(value, int) else None


def _window(region: Any, iters: Sequence[Any]) -> bool:
    """Whether an index of ``region`` uses two or more of the block iterators ``iters``."""
    import tvm_ffi

    for dim in region.region:
        used: list[Any] = []
        tvm_ffi.structural_walk(dim.min, (type(iters[0]) if iters else type(None), used.append))
        if sum(any(u.same_as(v) for u in used) for v in iters) >= 2:
            return True
    return False


def _buffer(region: Any, allocated: set[str], iters: Sequence[Any] = ()) -> Buffer:
    source = region.source
    return Buffer(str(source.name), str(source.dtype), tuple(_int(d) for d in source.shape),
                  str(source.name) in allocated, _window(region, iters))


def _iter_kind(iter_type: int) -> str:
    return "S" if iter_type == DATA_PARALLEL else "R" if iter_type == REDUCE else "O"


def _feeds(loop_var: Any, block: Any, realize: Any) -> str:
    """The iterator kinds of the block iterators whose binding uses ``loop_var``."""
    import tvm_ffi

    kinds = ""
    for iv, binding in zip(block.iter_vars, realize.iter_values if realize is not None else [], strict=False):
        used: list[Any] = []
        tvm_ffi.structural_walk(binding, (type(loop_var), used.append))
        if any(u.same_as(loop_var) for u in used):
            kinds += _iter_kind(int(iv.iter_type))
    return "".join(sorted(set(kinds)))


def describe(sch: Any) -> View:
    """The blocks of ``sch``'s function (the schedule is used as a scratch pad: its getters are
    recorded in its trace, which nobody keeps)."""
    import tvm_ffi

    func = sch.mod["main"]
    realizes: list[Any] = []
    tvm_ffi.structural_walk(func.body, (_realize_type(), realizes.append))
    allocated: set[str] = set()
    for realize in realizes:
        allocated.update(str(b.name) for b in realize.block.alloc_buffers)
    names = [r.block.name_hint for r in realizes]
    root = tuple(str(k) for r in realizes if r.block.name_hint == "root" for k in r.block.annotations)
    blocks = []
    for realize in realizes:
        block = realize.block
        if block.name_hint == "root" or names.count(block.name_hint) != 1:
            continue
        rv = sch.get_sblock(block.name_hint)
        iters = [iv.var for iv in block.iter_vars]
        loops = []
        for loop_rv in sch.get_loops(rv):
            loop = sch.get(loop_rv)
            loops.append(Loop(_int(loop.extent), int(loop.kind), _feeds(loop.loop_var, block, realize),
                              tuple(str(k) for k in loop.annotations)))
        parent = sch.get_sref(rv).parent
        nested = False
        while parent is not None:
            stmt = parent.stmt
            if stmt is not None and hasattr(stmt, "name_hint") and stmt.name_hint != "root":
                nested = True
                break
            parent = parent.parent
        blocks.append(Block(
            block.name_hint, "".join(_iter_kind(int(iv.iter_type)) for iv in block.iter_vars),
            tuple(_int(iv.dom.extent) for iv in block.iter_vars), tuple(loops),
            tuple(_buffer(r, allocated, iters) for r in block.reads),
            tuple(_buffer(w, allocated) for w in block.writes),
            block.init is not None, tuple(sch.get(p).name_hint for p in sch.get_producers(rv)),
            tuple(sch.get(c).name_hint for c in sch.get_consumers(rv)),
            tuple(str(k) for k in block.annotations), nested))
    return View(tuple(blocks), func, root)


def _realize_type() -> Any:
    import tvm

    return tvm.s_tir.SBlockRealize


def view_at(func: Any, instructions: Sequence[Instruction]) -> View:
    """The function after ``instructions`` (a prefix of a trace that applied before), described."""
    from seedzer.kernel.sched.apply import apply_trace

    applied = apply_trace(func, instructions, verify_each=False, debug_mask=0)
    return describe(applied.schedule)


class Draft:
    """The instructions of one drawn primitive: getters for the blocks and loops it names, then the
    primitive itself, with fresh random variable names (``tmp_b0``, ...; :func:`canonical` renames
    them as TVM would once the draft joins its trace)."""

    def __init__(self, view: View) -> None:
        self.view = view
        self.instructions: list[Instruction] = []
        self._blocks: dict[str, str] = {}
        self._loops: dict[str, list[str]] = {}
        self._count = 0

    def fresh(self, letter: str) -> str:
        """A new random variable name of kind ``letter`` (``b``, ``l`` or ``v``)."""
        self._count += 1
        return f"{letter}_new{self._count}"

    def block(self, name: str) -> str:
        """The random variable of block ``name`` (a ``GetSBlock`` the first time)."""
        if name not in self._blocks:
            rv = self.fresh("b")
            self.instructions.append(Instruction("GetSBlock", (), (name, "main"), (rv,)))
            self._blocks[name] = rv
        return self._blocks[name]

    def loops(self, name: str) -> list[str]:
        """The random variables of block ``name``'s loops, outermost first (a ``GetLoops``)."""
        if name not in self._loops:
            block = self.block(name)
            rvs = [self.fresh("l") for _ in self.view.block(name).loops]
            self.instructions.append(Instruction("GetLoops", (block,), (), tuple(rvs)))
            self._loops[name] = rvs
        return self._loops[name]

    def emit(self, kind: str, inputs: Sequence[Any] = (), attrs: Sequence[Any] = (), outputs: int | str = 0,
             decision: Any = None) -> list[str]:
        """Append instruction ``kind``; ``outputs``: how many (or the letters of) its results."""
        letters = outputs if isinstance(outputs, str) else "b" * outputs
        names = [self.fresh(letter) for letter in letters]
        self.instructions.append(Instruction(kind, tuple(_tuple(v) for v in inputs), tuple(_tuple(v) for v in attrs),
                                             tuple(names), decision))
        return names


def _tuple(value: Any) -> Any:
    if isinstance(value, list):
        return tuple(_tuple(v) for v in value)
    return value
