"""Tzer's tensor-specific IR mutators on TVM 0.27: wrappers, loop structure, buffer loads.

Semantics-preserving where skipping would read uninitialised memory: a statement that writes a
buffer the function allocates is only wrapped in an ``if`` whose condition always holds (or whose
else branch repeats it). Loops are only split exactly (or with a guard), made parallel/vectorized
only when they are bound to data-parallel block iterators of a single block, and unrolled only when
the unrolled code stays small. Values put in place of an expression (a select's constant, a load)
must keep the operation above it finite on the harness inputs (:func:`seedzer.mutate.tir.base.fits`).
"""

from __future__ import annotations

import random
from typing import Any, ClassVar

import tvm
from tvm import s_tir, tirx

from seedzer.mutate.tir.base import BaseIRMutator, fits, replace_site, scoping, splice
from seedzer.tir import exprgen, ub
from seedzer.tir.ir import arith, const, dtype_of, is_float, is_int, join, replace_fields, substitute
from seedzer.tir.nodes import Analysis, LoopInfo, Site, choose

MAX_UNROLL = 64
MAX_UNROLL_PRODUCT = 64
"""Most iterations of one nest of unrolled loops a mutation makes (the default ``max_unroll`` of
:class:`seedzer.config.BoundsConfig`: a bigger nest is out of bounds, :mod:`seedzer.mutate.tir.bounds`)."""
MAX_VECTOR = 64
ATTR_KEYS = ("pragma_auto_unroll_max_step", "pragma_unroll_explicit")
"""Attributes a statement may be wrapped in. Not ``compute_scope``: MakePackedAPI puts exactly one
around a function's body, and a second, nested one (an IR form TVM never produces) always broke the
LLVM module's debug info (filed as a bug, dismissed on audit)."""
ATTR_KEY_WEIGHTS = (3.0, 2.0)
LOOP_PRAGMAS = ("pragma_auto_unroll_max_step", "pragma_unroll_explicit", "pragma_loop_partition_hint")


def _wrappable(a: Analysis) -> list[Site]:
    return [s for s in a.stmt_sites() if s.path and not scoping(s.node)]


class WrapIf(BaseIRMutator):
    """Wrap a statement in ``IfThenElse`` (always-true guard if skipping it is unsafe)."""

    name: ClassVar[str] = "wrap_if"
    default_weight: ClassVar[float] = 1.0

    def apply(self, a: Analysis, rng: random.Random) -> Any | None:
        """Wrap a statement chosen by size."""
        site = choose(_wrappable(a), rng)
        if site is None:
            return None
        s = site.node
        dup_ok = not site.defines
        if site.writes_alloc and not (dup_ok and rng.random() < 0.5):
            return replace_site(a, site.path, tirx.IfThenElse(exprgen.tautology(site.scope, rng), s, None))
        cond = exprgen.random_cond(site.scope, rng)
        else_case = s if dup_ok and (site.writes_alloc or rng.random() < 0.3) else None
        return replace_site(a, site.path, tirx.IfThenElse(cond, s, else_case))


class WrapSelect(BaseIRMutator):
    """Wrap an expression ``e`` in ``Select(cond, e, other)`` (or with the branches swapped)."""

    name: ClassVar[str] = "wrap_select"
    default_weight: ClassVar[float] = 0.5

    def apply(self, a: Analysis, rng: random.Random) -> Any | None:
        """Wrap a value expression chosen by size."""
        site = choose(a.expr_sites(), rng)
        if site is None:
            return None
        cond = exprgen.random_cond(site.scope, rng)
        other = exprgen.random_const(site.dtype, rng)
        if is_float(site.dtype):  # the select may yield the constant: its parent must stay finite
            span = join(ub.value_range(a.func, site.node), (other.value, other.value))
            if span is None or not fits(a, site, span):
                return None
        t, f = (site.node, other) if rng.random() < 0.5 else (other, site.node)
        return replace_site(a, site.path, tirx.Select(cond, t, f))


class WrapAlloc(BaseIRMutator):
    """Route a stored value through a freshly allocated scratch buffer (local or global scope)."""

    name: ClassVar[str] = "wrap_alloc"
    default_weight: ClassVar[float] = 0.5

    def apply(self, a: Analysis, rng: random.Random) -> Any | None:
        """Rewrite ``B[i] = v`` as ``tmp = alloc(n); tmp[j] = v; B[i] = tmp[j]``."""
        site = choose([s for s in a.stmt_sites() if isinstance(s.node, tirx.BufferStore)], rng)
        if site is None:
            return None
        st = site.node
        n = rng.choice([1, 2, 4, 16, 256])
        scope = rng.choice(["local", "global"])
        tmp = tirx.decl_buffer(
            (n,), dtype_of(st.value), name=f"alloc_{rng.randrange(1 << 16)}", scope=scope, layout=None
        )
        j = [tirx.const(rng.randrange(n), "int32")]
        seq = [
            tirx.AllocBuffer(tmp),
            tirx.BufferStore(tmp, st.value, j),
            tirx.BufferStore(st.buffer, tirx.BufferLoad(tmp, j), st.indices),
        ]
        return splice(a, site, seq)


class WrapAssert(BaseIRMutator):
    """Put an ``AssertStmt`` whose condition always holds in front of a statement."""

    name: ClassVar[str] = "wrap_assert"
    default_weight: ClassVar[float] = 0.5

    def apply(self, a: Analysis, rng: random.Random) -> Any | None:
        """Prefix a statement chosen by size with an always-true assertion."""
        site = choose(_wrappable(a), rng)
        if site is None:
            return None
        cond = exprgen.tautology(site.scope, rng)
        # The Python AssertStmt wrapper of 0.27 passes its arguments in the wrong order.
        assert_stmt = tirx.stmt._ffi_api.AssertStmt(
            cond, tvm.ir.StringImm("RuntimeError"), [tvm.ir.StringImm("seedzer assertion")], None
        )
        return splice(a, site, [assert_stmt, site.node])


class WrapAttr(BaseIRMutator):
    """Wrap a statement in an ``AttrStmt`` (unroll pragmas or a separate compute scope)."""

    name: ClassVar[str] = "wrap_attr"
    default_weight: ClassVar[float] = 0.5

    def apply(self, a: Analysis, rng: random.Random) -> Any | None:
        """Wrap a statement chosen by size."""
        site = choose(_wrappable(a), rng)
        if site is None:
            return None
        key = rng.choices(ATTR_KEYS, weights=ATTR_KEY_WEIGHTS, k=1)[0]
        value: Any
        if key == "pragma_unroll_explicit":
            value = tirx.const(rng.randint(0, 1), "int32")
        else:
            value = tirx.const(rng.choice([0, 4, 16, 64, 512]), "int32")
        return replace_site(a, site.path, tirx.AttrStmt(0, key, value, site.node))


class SplitLoop(BaseIRMutator):
    """Split a constant-extent loop into an outer and an inner loop (guarded if inexact)."""

    name: ClassVar[str] = "split_loop"
    default_weight: ClassVar[float] = 1.0

    def apply(self, a: Analysis, rng: random.Random) -> Any | None:
        """Split a loop chosen by size by a divisor of its extent, or any factor with a guard."""
        loops = {li.path: li for li in a.loops if li.const_extent is not None and li.const_extent >= 2}
        site = choose([a.by_path[p] for p in loops], rng)
        if site is None:
            return None
        loop, n = site.node, loops[site.path].const_extent
        assert n is not None
        divisors = [f for f in range(2, n) if n % f == 0]
        factor = rng.choice(divisors) if divisors and rng.random() < 0.8 else rng.randint(2, max(2, n - 1))
        outer_n = -(-n // factor)
        dt = dtype_of(loop.loop_var)
        name = loop.loop_var.name
        vo, vi = tirx.Var(f"{name}_o", dt), tirx.Var(f"{name}_i", dt)
        fused = loop.min + vo * const(factor, dt) + vi
        body = substitute(loop.body, loop.loop_var, fused)
        if outer_n * factor != n:
            guard = tirx.LT(vo * const(factor, dt) + vi, const(n, dt))
            if isinstance(body, s_tir.SBlockRealize):
                body = replace_fields(body, predicate=tirx.And(body.predicate, guard))
            else:
                body = tirx.IfThenElse(guard, body, None)
        kind = loop.kind
        inner_kind = kind if int(kind) in (int(tirx.ForKind.VECTORIZED), int(tirx.ForKind.UNROLLED)) else 0
        outer_kind = kind if int(kind) == int(tirx.ForKind.PARALLEL) else 0
        inner = tirx.For(vi, const(0, dt), const(factor, dt), inner_kind, body)
        outer = tirx.For(
            vo, const(0, dt), const(outer_n, dt), outer_kind, inner, annotations=dict(loop.annotations) or None
        )
        return replace_site(a, site.path, outer)


def nest_product(li: LoopInfo, loops: list[LoopInfo]) -> int:
    """Iterations of the largest nest of unrolled loops through ``li`` once ``li`` is unrolled: the
    unrolled loops around it and the deepest chain of unrolled loops inside it."""
    unrolled = int(tirx.ForKind.UNROLLED)
    inside = [d.unrolled_product * (d.const_extent or 1) for d in loops
              if len(d.path) > len(li.path) and d.path[: len(li.path)] == li.path and int(d.node.kind) == unrolled]
    return (li.const_extent or 1) * max([li.unrolled_product, *inside])


def allowed_kinds(li: LoopInfo, loops: list[LoopInfo] | None = None) -> list[int]:
    """Loop kinds that keep ``li``'s semantics and code size sane (current kind excluded); ``loops``:
    every loop of the function (unrolled loops inside ``li`` count towards its nest)."""
    kinds = [int(tirx.ForKind.SERIAL)]
    n = li.const_extent
    if n is None:
        return [k for k in kinds if k != int(li.node.kind)]
    if n <= MAX_UNROLL and nest_product(li, loops or [li]) <= MAX_UNROLL_PRODUCT:
        kinds.append(int(tirx.ForKind.UNROLLED))
    if li.parallel_safe and n <= MAX_VECTOR and isinstance(li.node.body, s_tir.SBlockRealize):
        kinds.append(int(tirx.ForKind.VECTORIZED))
    if li.parallel_safe and not li.inside_parallel and not li.contains_parallel:
        kinds.append(int(tirx.ForKind.PARALLEL))
    return [k for k in kinds if k != int(li.node.kind)]


class LoopKind(BaseIRMutator):
    """Change a loop's kind among serial / unrolled / vectorized / parallel where it is safe."""

    name: ClassVar[str] = "loop_kind"
    default_weight: ClassVar[float] = 1.0

    def apply(self, a: Analysis, rng: random.Random) -> Any | None:
        """Re-kind a loop chosen by size."""
        infos = {
            li.path: li for li in a.loops
            if int(li.node.kind) != int(tirx.ForKind.THREAD_BINDING) and allowed_kinds(li, a.loops)
        }
        site = choose([a.by_path[p] for p in infos], rng)
        if site is None:
            return None
        kind = rng.choice(allowed_kinds(infos[site.path], a.loops))
        return replace_site(a, site.path, replace_fields(site.node, kind=kind))


class UnrollPragma(BaseIRMutator):
    """Add or change a loop's pragma annotation (auto-unroll step, explicit unroll, partition hint)."""

    name: ClassVar[str] = "unroll_pragma"
    default_weight: ClassVar[float] = 0.5

    def apply(self, a: Analysis, rng: random.Random) -> Any | None:
        """Annotate a loop chosen by size."""
        site = choose([a.by_path[li.path] for li in a.loops], rng)
        if site is None:
            return None
        key = rng.choice(LOOP_PRAGMAS)
        value = rng.choice([0, 2, 16, 64, 512]) if key.endswith("max_step") else rng.randint(0, 1)
        ann = dict(site.node.annotations)
        if ann.get(key) is not None and int(ann[key]) == value:
            value = 1 - value if value in (0, 1) else 0
        ann[key] = value
        return replace_site(a, site.path, replace_fields(site.node, annotations=ann))


class BufferLoad(BaseIRMutator):
    """Replace a value expression by (or combine it with) an in-bounds load of an input buffer."""

    name: ClassVar[str] = "buffer_load"
    default_weight: ClassVar[float] = 1.0

    def apply(self, a: Analysis, rng: random.Random) -> Any | None:
        """Load one of the function's read-only parameters at a provably in-range position."""
        if not a.inputs:
            return None

        def loadable(s: Site) -> list[Any]:
            return [b for b in a.inputs if exprgen.convertible(b.dtype, s.dtype)]

        site = choose([s for s in a.expr_sites() if (is_float(s.dtype) or is_int(s.dtype)) and loadable(s)], rng)
        if site is None:
            return None
        buf = rng.choice(loadable(site))
        load = exprgen.in_bounds_load(buf, site.scope, rng)
        if load is None:
            return None
        value = load if buf.dtype == site.dtype else tirx.Cast(site.dtype, load)
        span = (-1.0, 1.0) if is_float(buf.dtype) else (0.0, 0.0)  # what the harness stores in inputs
        if rng.random() < 0.4:
            value = tirx.Add(site.node, value)
            span = arith("add", ub.value_range(a.func, site.node), span)
        if is_float(site.dtype) and not fits(a, site, span):
            return None
        return replace_site(a, site.path, value, loaded=[buf])
