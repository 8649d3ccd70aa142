"""Mutant bounds: whether a mutant is small enough to run, judged against its parent before it runs.

A mutant out of bounds is not executed: the worker reports it as an ``invalid`` observation at the
``mutate`` stage whose message is the reason this module gives (it starts with ``bounds:``), so it
is never filed nor kept. The checks, all on the mutant's text and pass sequence (no TVM):

- *growth*: the mutant's code is at most ``max_growth`` times its parent's;
- *size*: the mutant's code is at most ``max_script_bytes`` bytes;
- *unroll*: no nest of explicitly unrolled loops (``T.unroll``) has more than ``max_unroll``
  iterations (the product of its extents);
- *unroll-step* / *unroll-extent*: no UnrollLoop configuration asks for more than ``max_unroll``
  iterations of a nest, by its step criterion (``auto_max_step``: every nest of at most that many
  statement executions is unrolled) or its extent criterion (``auto_max_extent``: loops up to that
  extent are unrolled whole, ``auto_max_depth + 1`` levels deep, as
  :func:`seedzer.passes.tir.contracts.bounded` leaves it);
- *passes*: the mutant's pass sequence is at most ``max_passes_growth`` passes longer than its parent's.

"Code" is the TVMScript as if every explicitly unrolled loop were written out (:func:`unrolled_size`),
since that is what the lowering makes of it: a script of modest size may lower to a program many
times larger.

The defaults (:class:`seedzer.config.BoundsConfig`) come from the corpora of finished campaigns:
their figures are in docs/measurements.md, 'Mutant bounds'.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, Protocol

from seedzer.passes.tir.contracts import UNROLL_DEFAULT_DEPTH, bounded
from seedzer.seed import PassSpec

PREFIX = "bounds:"
"""How every out-of-bounds reason starts."""
BOUND_NAMES = {
    "script grew": "growth",
    "script of": "size",
    "unrolled nest": "unroll",
    "UnrollLoop auto_max_step": "unroll-step",
    "UnrollLoop auto_max_extent": "unroll-extent",
    "pass sequence grew": "passes",
}
"""The name of the bound a reason names, by the words after :data:`PREFIX` (one coverage feature each)."""
UNROLL = "tirx.UnrollLoop"

_UNROLL_LINE = re.compile(r"^(\s*)for .+ in T\.unroll\((.*)\):\s*$")
_INT = re.compile(r"^(?:T\.u?int\d+\()?\s*(-?\d+)\s*\)?$")


class Limits(Protocol):
    """The bounds a check reads (:class:`seedzer.config.BoundsConfig` is one)."""

    max_growth: float
    max_script_bytes: int
    max_unroll: int
    max_passes_growth: int


def bound_of(reason: str) -> str | None:
    """The name of the bound an out-of-bounds reason breaks (None: not such a reason)."""
    if not reason.startswith(PREFIX):
        return None
    rest = reason[len(PREFIX):].strip()
    return next((name for words, name in BOUND_NAMES.items() if rest.startswith(words)), "other")


def _positional(args: str) -> list[str]:
    """The top-level, positional arguments of a call's argument text."""
    out, depth, start = [], 0, 0
    for i, ch in enumerate(args + ","):
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "," and depth == 0:
            out.append(args[start:i].strip())
            start = i + 1
    return [a for a in out if a and "=" not in a.split("(", 1)[0]]


def unroll_extent(args: str) -> int:
    """The iterations of ``T.unroll(<args>)``: its constant extent, ``stop - start`` when it has
    two bounds, 1 when they are not constants (such a loop is not unrolled)."""
    values = []
    for arg in _positional(args)[:2]:
        found = _INT.match(arg)
        if found is None:
            return 1
        values.append(int(found.group(1)))
    if not values:
        return 1
    return max(values[-1] - values[0], 0) if len(values) == 2 else max(values[0], 0)


def unrolled_size(script: str) -> tuple[int, int]:
    """``(size, product)`` of a TVMScript text: its bytes as if every ``T.unroll`` loop were written
    out (a loop's body counted once per iteration), and the most iterations of one nest of
    explicitly unrolled loops (the product of their extents; 1 without any)."""
    # stack of open unrolled loops: (indent, extent, bytes of its body so far, product down to it)
    stack: list[tuple[int, int, int, int]] = []
    total, product = 0, 1

    def close(indent: int) -> None:
        nonlocal total
        while stack and stack[-1][0] >= indent:
            _, extent, body, _ = stack.pop()
            if stack:
                ind, ext, outer, prod = stack[-1]
                stack[-1] = (ind, ext, outer + extent * body, prod)
            else:
                total += extent * body

    for line in script.splitlines():
        if not line.strip():
            continue
        indent = len(line) - len(line.lstrip())
        close(indent)
        size = len(line.encode()) + 1
        if stack:
            ind, ext, body, prod = stack[-1]
            stack[-1] = (ind, ext, body + size, prod)
        else:
            total += size
        found = _UNROLL_LINE.match(line)
        if found is not None:
            extent = unroll_extent(found.group(2))
            inner = (stack[-1][3] if stack else 1) * extent
            product = max(product, inner)
            stack.append((indent, extent, 0, inner))
    close(0)
    return total, product


def unroll_asks(args: dict[str, Any]) -> tuple[int, int]:
    """``(step, extent)``: the iterations of one nest an UnrollLoop configuration asks to unroll by
    its step criterion (``auto_max_step``) and by its extent criterion (``auto_max_extent`` to the
    power of its levels, after :func:`seedzer.passes.tir.contracts.bounded`)."""
    step = int(args.get("auto_max_step", 0) or 0)
    config = bounded(dict(args))
    extent = int(config.get("auto_max_extent", 0) or 0)
    levels = int(config.get("auto_max_depth", UNROLL_DEFAULT_DEPTH)) + 1
    return step, (extent ** max(levels, 1) if extent > 1 else 0)


def passes_reason(passes: Sequence[PassSpec], parent: Sequence[PassSpec], limits: Limits) -> str | None:
    """Why a pass sequence is out of bounds against its parent's (None: it is within them)."""
    grown = len(passes) - len(parent)
    if grown > limits.max_passes_growth:
        return f"{PREFIX} pass sequence grew by {grown} passes"
    for spec in passes:
        if spec.name != UNROLL:
            continue
        step, extent = unroll_asks(dict(spec.args))
        if step > limits.max_unroll:
            return f"{PREFIX} UnrollLoop auto_max_step={step} over {limits.max_unroll}"
        if extent > limits.max_unroll:
            return f"{PREFIX} UnrollLoop auto_max_extent unrolls {extent} iterations, over {limits.max_unroll}"
    return None


def script_reason(script: str, parent: str, limits: Limits) -> str | None:
    """Why a mutant's script is out of bounds against its parent's (None: it is within them)."""
    if script == parent:
        return None
    size, product = unrolled_size(script)
    if product > limits.max_unroll:
        return f"{PREFIX} unrolled nest of {product} iterations, over {limits.max_unroll}"
    if size > limits.max_script_bytes:
        return f"{PREFIX} script of {size} bytes written out, over {limits.max_script_bytes}"
    before, _ = unrolled_size(parent)
    growth = size / max(before, 1)
    if growth > limits.max_growth:
        return f"{PREFIX} script grew {growth:.1f}x written out"
    return None


def out_of_bounds(parent: tuple[str, Sequence[PassSpec]], mutant: tuple[str, Sequence[PassSpec]],
                  limits: Limits) -> str | None:
    """Why the mutant ``(script, passes)`` of ``parent`` is out of ``limits`` (None: within them).

    The reason starts with :data:`PREFIX`; :func:`bound_of` names the bound it breaks."""
    return script_reason(mutant[0], parent[0], limits) or passes_reason(mutant[1], parent[1], limits)
