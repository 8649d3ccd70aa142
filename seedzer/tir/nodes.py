"""Where a PrimFunc may be mutated: one walk that lists every mutable site with its context.

A *site* is a statement, or an expression in a value position. Positions that decide which memory
is touched are *protected* and never become sites: buffer indices, loop bounds, block bindings,
predicates and regions, buffer shapes, integer divisors and shift amounts, conditions that guard a
buffer access, and (by a fixpoint) the values of let-variables and buffers that flow into any of
those. Mutating only sites therefore cannot create an out-of-bounds access or a division by zero.

Each statement site also records what removing or skipping it would do: whether it writes a
buffer the function allocates itself (skipping such a write makes later reads see uninitialised
memory, a false alarm for the differential oracle; the statements of a reduction's ``init`` count
as such writes) and whether it defines variables (it cannot be duplicated then).
"""

from __future__ import annotations

from typing import Any

from tvm import s_tir

from seedzer.tir.ir import dtype_of, is_buffer
from seedzer.tir.sites import SIZE_EXPONENT, Analysis, LoopInfo, ScopeVar, Site, choose
from seedzer.tir.walker import IF_THEN_ELSE, MATH_OPS, Walker, closure, loop_infos

__all__ = [
    "IF_THEN_ELSE",
    "MATH_OPS",
    "SIZE_EXPONENT",
    "Analysis",
    "LoopInfo",
    "ScopeVar",
    "Site",
    "analyze",
    "choose",
]

_CACHE: list[Analysis] = []
_INIT = ("init", -1)


def analyze(func: Any) -> Analysis:
    """List the mutable sites of ``func`` (cached for the most recent function)."""
    if _CACHE and _CACHE[0].func.same_as(func):
        return _CACHE[0]
    params = list(func.params)
    buffers = {p for p in params if is_buffer(p)}
    scalars = tuple(ScopeVar(p, dtype_of(p)) for p in params if not is_buffer(p))
    w = Walker(buffers)
    ctx: dict[str, Any] = {"scope": scalars, "block": None, "loops": (), "params": scalars}
    w.stmt(func.body, (), ctx, None, "", site=not isinstance(func.body, s_tir.SBlockRealize))
    w.collect_protected()
    closure(w)
    sites = [s for s in w.sites if s.is_stmt or not (s.def_var in w.prot_vars or s.store_buffer in w.prot_bufs)]
    for s in sites:
        if s.is_stmt and _INIT in s.path:  # a reduction's init: never skipped, like an allocated write
            s.writes_alloc = True
    result = Analysis(
        func=func,
        sites=sites,
        loops=loop_infos(w, sites),
        inputs=[p for p in params if p in buffers and p not in w.written],
        outputs=[p for p in params if p in buffers and p in w.written],
        scalar_params=list(scalars),
        has_blocks=w.has_blocks,
    )
    _CACHE[:] = [result]
    return result
