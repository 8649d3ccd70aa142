"""Shared machinery of the IR mutators: the base class, site replacement with block fix-ups, and
the check that a replacement keeps its parent operation finite."""

from __future__ import annotations

import random
from collections.abc import Iterable
from typing import Any, ClassVar

import tvm
from tvm import s_tir, tirx

from seedzer.tir import exprgen, ub
from seedzer.tir.ir import (
    Interval,
    Path,
    const,
    const_shape,
    dtype_of,
    get_at,
    is_float,
    replace_at,
    replace_fields,
    shape_index_dtype,
)
from seedzer.tir.nodes import MATH_OPS, Analysis, Site, analyze

FLOAT_ARITH = (tirx.Add, tirx.Sub, tirx.Mul, tirx.Div, tirx.Min, tirx.Max)


class BaseIRMutator:
    """An IR mutator (``IRMutator`` protocol): analyse the function, pick a site, rewrite it.

    Subclasses set ``name`` and ``default_weight`` and implement :meth:`apply`, which returns the
    mutated PrimFunc or None when the function offers no applicable site.
    """

    name: ClassVar[str] = ""
    default_weight: ClassVar[float] = 1.0

    def __init__(self, weight: float | None = None) -> None:
        self.weight = self.default_weight if weight is None else float(weight)

    def mutate(self, func: Any, rng: random.Random) -> Any | None:
        """Return a mutated copy of ``func`` or None when no site applies."""
        return self.apply(analyze(func), rng)

    def apply(self, a: Analysis, rng: random.Random) -> Any | None:
        """Mutate the analysed function; None when nothing applies."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}(weight={self.weight})"


def replace_site(a: Analysis, path: Path, new: Any, loaded: Iterable[Any] = ()) -> Any:
    """Return ``a.func`` with the node at ``path`` replaced by ``new``.

    ``loaded`` lists buffers that ``new`` reads; every enclosing non-root block gets the buffer's
    full region added to its ``reads`` so block annotations stay sound.
    """
    body = replace_at(a.func.body, path, new)
    buffers = list(loaded)
    if buffers:
        for prefix in _block_prefixes(a.func.body, path):
            body = replace_at(body, prefix, widen_reads(get_at(body, prefix), buffers))
    return a.func.with_body(body)


def splice(a: Analysis, site: Site, stmts: list[Any]) -> Any:
    """Replace statement ``site`` by the statements ``stmts``.

    Inside a SeqStmt they are spliced into it (so a ``Bind``/``AllocBuffer`` among them, or the
    site itself, keeps scoping over the following siblings); elsewhere they become a new SeqStmt.
    """
    if site.role == "seq" and isinstance(site.parent, tirx.SeqStmt):
        index = site.path[-1][1]
        seq = list(site.parent.seq)
        return replace_site(a, site.path[:-1], tirx.SeqStmt(seq[:index] + stmts + seq[index + 1 :]))
    return replace_site(a, site.path, stmts[0] if len(stmts) == 1 else tirx.SeqStmt(stmts))


def scoping(node: Any) -> bool:
    """Whether a statement defines names for its following siblings (Bind, AllocBuffer, DeclBuffer)."""
    return isinstance(node, (tirx.Bind, tirx.AllocBuffer, tirx.DeclBuffer))


def _block_prefixes(body: Any, path: Path) -> list[Path]:
    """Paths of the non-root SBlocks on the way to ``path`` (innermost first)."""
    out = []
    for i in range(1, len(path) + 1):
        prefix = path[:i]
        node = get_at(body, prefix)
        if isinstance(node, s_tir.SBlock) and len(node.iter_vars) > 0:
            out.append(prefix)
    return out[::-1]


def full_region(buffer: Any) -> Any:
    """The region covering a whole (statically shaped) buffer."""
    shape = const_shape(buffer) or []
    idt = shape_index_dtype(buffer)
    ranges = [tvm.ir.Range.from_min_extent(const(0, idt), const(n, idt)) for n in shape]
    return tirx.BufferRegion(buffer, ranges)


def widen_reads(block: Any, buffers: list[Any]) -> Any:
    """``block`` with the full region of each buffer in its reads (replacing narrower ones)."""
    keep = [r for r in block.reads if not any(r.source.same_as(b) for b in buffers)]
    seen: list[Any] = []
    for b in buffers:
        if not any(b.same_as(x) for x in seen):
            seen.append(b)
            keep.append(full_region(b))
    return replace_fields(block, reads=keep)


def fits(a: Analysis, site: Site, new: Interval) -> bool:
    """Whether a value ranging over ``new`` may replace ``site``'s expression without making its
    parent (a float ``+ - * /``, ``min``/``max`` or math call) undefined or non-finite on the
    harness inputs. Only the parent is looked at; :func:`seedzer.tir.ub.check` sees the rest."""
    p = site.parent
    if p is None or site.is_stmt:
        return True
    dt = dtype_of(p)
    if isinstance(p, FLOAT_ARITH) and is_float(dt) and site.role in ("a", "b"):
        other = ub.value_range(a.func, p.b if site.role == "a" else p.a)
        lhs, rhs = (new, other) if site.role == "a" else (other, new)
        return bool(exprgen.safe_binops([type(p)], lhs, rhs, dt))
    name = getattr(getattr(p, "op", None), "name", None)
    if isinstance(p, tvm.ir.Call) and name in MATH_OPS:
        args = [new if site.role == f"args{i}" else ub.value_range(a.func, x) for i, x in enumerate(p.args)]
        return bool(exprgen.safe_math([str(name)], args, dt))
    return True
