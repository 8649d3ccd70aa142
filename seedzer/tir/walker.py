"""The single recursive walk over a PrimFunc body that lists its sites (see :mod:`seedzer.tir.nodes`)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import tvm
import tvm_ffi
from tvm import s_tir, tirx
from tvm.ir.prim import expr as prim_expr

from seedzer.tir.ir import Path, dtype_of, is_buffer
from seedzer.tir.sites import LoopInfo, ScopeVar, Site

MATH_UNARY = (
    "exp",
    "exp2",
    "exp10",
    "log",
    "log2",
    "log10",
    "log1p",
    "sqrt",
    "rsqrt",
    "sin",
    "cos",
    "tan",
    "tanh",
    "sigmoid",
    "floor",
    "ceil",
    "round",
    "trunc",
    "nearbyint",
    "erf",
    "asin",
    "acos",
    "atan",
    "sinh",
    "cosh",
    "asinh",
    "acosh",
    "atanh",
)
"""Unary math intrinsics of ``tvm.tirx`` (``tirx.abs`` builds a ``tirx.fabs`` call)."""
MATH_BINARY = ("pow", "atan2", "copysign", "hypot", "nextafter")
"""Binary math intrinsics of ``tvm.tirx``."""

MATH_OPS = frozenset(f"tirx.{n}" for n in (*MATH_UNARY, "fabs", *MATH_BINARY))
IF_THEN_ELSE = "prim.if_then_else"
_INT_DIVISORS = (tirx.Div, tirx.Mod, tirx.FloorDiv, tirx.FloorMod, tirx.LShift, tirx.RShift)
_LEAVES = (tvm.ir.Var, tirx.IntImm, tirx.FloatImm)
_BINARY = (prim_expr.BinaryOpExpr, prim_expr.CmpExpr, tirx.And, tirx.Or)
DATA_PAR = 0


class Walker:
    """The single recursive walk behind :func:`seedzer.tir.nodes.analyze`."""

    def __init__(self, params: set[Any]) -> None:
        self.params = params
        self.sites: list[Site] = []
        self.loops: list[LoopInfo] = []
        self.prot_vars: set[Any] = set()
        self.prot_bufs: set[Any] = set()
        self.def_uses: dict[Any, tuple[set[Any], set[Any]]] = {}
        self.store_uses: dict[Any, tuple[set[Any], set[Any]]] = {}
        self.written: set[Any] = set()
        self.reduce_vars: set[Any] = set()
        self.pending: list[Any] = []
        self.has_blocks = False

    # -- protected positions ------------------------------------------------------------------
    def protect(self, node: Any) -> int:
        """Mark a subtree as protected (its variables and loaded buffers are collected later in one
        walk). Protected nodes do not count towards a site's size, which measures mutable IR."""
        if node is not None:
            self.pending.append(node)
        return 0

    def collect_protected(self) -> None:
        """Gather the variables and loaded buffers of every protected subtree (one walk)."""

        def on_load(load: Any) -> None:
            self.prot_bufs.add(load.source)

        def on_var(v: Any) -> None:
            if not is_buffer(v):
                self.prot_vars.add(v)

        if self.pending:
            tvm_ffi.structural_walk(self.pending, [(tvm.ir.TensorLoad, on_load), (tvm.ir.Var, on_var)])

    # -- expressions ----------------------------------------------------------------------------
    def expr(self, e: Any, path: Path, ctx: dict[str, Any], parent: Any, role: str) -> tuple[int, bool]:
        """Walk a value-position expression; return (size, contains a buffer load)."""
        if isinstance(e, tvm.ir.StringImm) or e is None:
            return 1, False
        dt = dtype_of(e)
        site = Site(
            path,
            e,
            False,
            scope=ctx["scope"],
            block_path=ctx["block"],
            loops=ctx["loops"],
            parent=parent,
            role=role,
            def_var=ctx.get("def"),
            store_buffer=ctx.get("store"),
            stmt_path=ctx.get("stmt"),
            guarded=bool(ctx.get("guarded")),
            in_block=ctx["block"] is not None,
        )
        size, access = 1, False
        if isinstance(e, tvm.ir.TensorLoad):
            size += self.protect_list(e.indices)
            access = True
            self.note_use(ctx, buf=e.source)
        elif isinstance(e, tvm.ir.Var):
            self.note_use(ctx, var=e)
        elif isinstance(e, _BINARY):
            sa, aa = self.expr(e.a, (*path, ("a", -1)), ctx, e, "a")
            if isinstance(e, _INT_DIVISORS) and not dt.startswith("float"):
                sb, ab = self.protect(e.b), False
            else:
                sb, ab = self.expr(e.b, (*path, ("b", -1)), ctx, e, "b")
            size, access = 1 + sa + sb, aa or ab
        elif isinstance(e, tirx.Not):
            sa, access = self.expr(e.a, (*path, ("a", -1)), ctx, e, "a")
            size += sa
        elif isinstance(e, tirx.Cast):
            sa, access = self.expr(e.value, (*path, ("value", -1)), ctx, e, "value")
            size += sa
        elif isinstance(e, tirx.Select):
            for name in ("condition", "true_value", "false_value"):
                s, a = self.expr(getattr(e, name), (*path, (name, -1)), ctx, e, name)
                size, access = size + s, access or a
        elif isinstance(e, tirx.Let):
            sv, av = self.expr(e.value, (*path, ("value", -1)), {**ctx, "def": e.var}, e, "value")
            inner = {**ctx, "scope": (*ctx["scope"], ScopeVar(e.var, dtype_of(e.var)))}
            sb, ab = self.expr(e.body, (*path, ("body", -1)), inner, e, "body")
            size, access = 1 + sv + sb, av or ab
        elif isinstance(e, tvm.ir.Call) and isinstance(e.op, tvm.ir.Op) and e.op.name in MATH_OPS:
            for i, arg in enumerate(e.args):
                s, a = self.expr(arg, (*path, ("args", i)), ctx, e, f"args{i}")
                size, access = size + s, access or a
        elif isinstance(e, tvm.ir.Call) and isinstance(e.op, tvm.ir.Op) and e.op.name == IF_THEN_ELSE:
            guarded = _has_load(e.args[1]) or _has_load(e.args[2])
            inner = {**ctx, "guarded": True} if guarded else ctx
            branches = [self.expr(e.args[i], (*path, ("args", i)), inner, e, f"args{i}") for i in (1, 2)]
            if guarded:
                sc, ac = self.protect(e.args[0]), False
            else:
                sc, ac = self.expr(e.args[0], (*path, ("args", 0)), ctx, e, "args0")
            size += sc + sum(s for s, _ in branches)
            access = ac or guarded
        elif not isinstance(e, _LEAVES):
            # Opaque calls, ramps, broadcasts, shuffles: never mutated.
            return self.protect(e), False
        site.size = size
        site.has_access = access
        if dt and "x" not in dt and dt != "handle":
            self.sites.append(site)
        return size, access

    def protect_list(self, items: Iterable[Any]) -> int:
        """Protect every expression of a list; return their total size."""
        return sum(self.protect(x) for x in items)

    def note_use(self, ctx: dict[str, Any], var: Any = None, buf: Any = None) -> None:
        """Record that the value being defined in ``ctx`` (let var / stored buffer) uses var or buf."""
        for key, table in (("def", self.def_uses), ("store", self.store_uses)):
            owner = ctx.get(key)
            if owner is None:
                continue
            vars_, bufs = table.setdefault(owner, (set(), set()))
            if var is not None:
                vars_.add(var)
            if buf is not None:
                bufs.add(buf)

    # -- statements -----------------------------------------------------------------------------
    def stmt(self, s: Any, path: Path, ctx: dict[str, Any], parent: Any, role: str, site: bool = True) -> Site:
        """Walk a statement; return its site (recorded in ``self.sites`` when ``site``)."""
        info = Site(
            path,
            s,
            True,
            scope=ctx["scope"],
            block_path=ctx["block"],
            loops=ctx["loops"],
            parent=parent,
            role=role,
            in_block=ctx["block"] is not None,
        )
        size = 1
        kids: list[Site] = []

        def sub(node: Any, name: str, index: int = -1, c: dict[str, Any] | None = None) -> None:
            step = (name, index)
            kids.append(self.stmt(node, (*path, step), c or ctx, s, name))

        def value(node: Any, name: str, c: dict[str, Any]) -> None:
            nonlocal size
            sz, acc = self.expr(node, (*path, (name, -1)), {**c, "stmt": path}, s, name)
            size += sz
            info.has_access = info.has_access or acc

        if isinstance(s, tirx.SeqStmt):
            c = ctx
            for i, child in enumerate(s.seq):
                sub(child, "seq", i, c)
                if isinstance(child, tirx.Bind):
                    c = {**c, "scope": (*c["scope"], ScopeVar(child.var, dtype_of(child.var)))}
        elif isinstance(s, tirx.For):
            size += self.protect(s.min) + self.protect(s.extent) + self.protect(s.step)
            lo = int(s.min.value) if isinstance(s.min, tirx.IntImm) else None
            ext = int(s.extent.value) if isinstance(s.extent, tirx.IntImm) else None
            hi = lo + ext if lo is not None and ext is not None else None
            inner = {
                **ctx,
                "scope": (*ctx["scope"], ScopeVar(s.loop_var, dtype_of(s.loop_var), lo, hi)),
                "loops": (*ctx["loops"], path),
            }
            sub(s.body, "body", c=inner)
            info.defines = True
        elif isinstance(s, tirx.While):
            size += self.protect(s.condition)
            sub(s.body, "body")
        elif isinstance(s, tirx.IfThenElse):
            sub(s.then_case, "then_case")
            if s.else_case is not None:
                sub(s.else_case, "else_case")
            if any(k.has_access for k in kids):
                size += self.protect(s.condition)
            else:
                value(s.condition, "condition", ctx)
        elif isinstance(s, tirx.AttrStmt):
            size += self.protect(s.node) + self.protect(s.value)
            c = ctx
            if isinstance(s.node, tirx.IterVar):
                c = {**ctx, "scope": (*ctx["scope"], ScopeVar(s.node.var, dtype_of(s.node.var)))}
                info.defines = True
            sub(s.body, "body", c=c)
        elif isinstance(s, tirx.BufferStore):
            size += self.protect_list(s.indices)
            self.written.add(s.buffer)
            info.has_access = True
            info.writes_alloc = s.buffer not in self.params
            value(s.value, "value", {**ctx, "store": s.buffer, "def": None})
        elif isinstance(s, tirx.Bind):
            info.defines = True
            value(s.value, "value", {**ctx, "def": s.var, "store": None})
        elif isinstance(s, tirx.Evaluate):
            size += self.protect(s.value)
        elif isinstance(s, (tirx.AllocBuffer, tirx.DeclBuffer)):
            info.defines = True
            size += self.protect(s.buffer.ty)
        elif isinstance(s, s_tir.SBlockRealize):
            self.block_realize(s, path, ctx, info, kids)
        else:  # AssertStmt and anything unknown: fully protected
            size += self.protect(s)
        for k in kids:
            size += k.size
            info.writes_alloc |= k.writes_alloc
            info.defines |= k.defines
            info.has_access |= k.has_access
        info.size = size
        if site:
            self.sites.append(info)
        return info

    def block_realize(self, s: Any, path: Path, ctx: dict[str, Any], info: Site, kids: list[Site]) -> None:
        """Walk an SBlockRealize and its SBlock (scope restarts at the block's iterators)."""
        self.has_blocks = True
        info.defines = True
        blk = s.block
        size = self.protect_list(s.iter_values) + self.protect(s.predicate)
        for iv, val in zip(blk.iter_vars, s.iter_values, strict=False):
            if int(iv.iter_type) != DATA_PAR:
                self.reduce_vars.update(_vars_in(val))
        size += self.protect_list(blk.reads) + self.protect_list(blk.writes)
        size += self.protect_list(blk.match_buffers)
        size += self.protect_list([b.ty for b in blk.alloc_buffers])
        is_root = len(blk.iter_vars) == 0 and ctx["block"] is None and not path
        scope = tuple(ScopeVar(iv.var, dtype_of(iv.var), *_range_of(iv.dom)) for iv in blk.iter_vars) + ctx["params"]
        bpath = None if is_root else (*path, ("block", -1))
        inner = {**ctx, "scope": scope, "block": bpath, "loops": ()}
        for name in ("init", "body"):
            node = getattr(blk, name)
            if node is not None:
                kids.append(self.stmt(node, (*path, ("block", -1), (name, -1)), inner, blk, name))
        info.size += size


def _has_load(node: Any) -> bool:
    found: list[Any] = []
    tvm_ffi.structural_walk(node, (tvm.ir.TensorLoad, found.append))
    return bool(found)


def _vars_in(node: Any) -> set[Any]:
    found: set[Any] = set()
    tvm_ffi.structural_walk(node, (tvm.ir.Var, found.add))
    return found


def _range_of(dom: Any) -> tuple[int | None, int | None]:
    if isinstance(dom.min, tirx.IntImm) and isinstance(dom.extent, tirx.IntImm):
        lo = int(dom.min.value)
        return lo, lo + int(dom.extent.value)
    return None, None


def closure(w: Walker) -> None:
    """Grow the protected sets through let-bindings and index buffers until nothing changes."""
    changed = True
    while changed:
        changed = False
        for table, keys in ((w.def_uses, w.prot_vars), (w.store_uses, w.prot_bufs)):
            for owner, (vars_, bufs) in table.items():
                if owner in keys and not (vars_ <= w.prot_vars and bufs <= w.prot_bufs):
                    w.prot_vars |= vars_
                    w.prot_bufs |= bufs
                    changed = True


def loop_infos(w: Walker, sites: list[Site]) -> list[LoopInfo]:
    """Facts about every loop site: constant extent, parallel safety, parallel nesting, unrolling."""
    fors = [s for s in sites if isinstance(s.node, tirx.For)]
    parallel = {s.path for s in fors if int(s.node.kind) == int(tirx.ForKind.PARALLEL)}
    infos = []
    for s in fors:
        loop = s.node
        ext = int(loop.extent.value) if isinstance(loop.extent, tirx.IntImm) else None
        nest = _perfect_nest_block(loop)
        safe = (
            nest is not None
            and not s.in_block
            and loop.loop_var not in w.reduce_vars
            and int(loop.kind) != int(tirx.ForKind.THREAD_BINDING)
        )
        unrolled = 1
        for p in s.loops:
            other = next((f.node for f in fors if f.path == p), None)
            if other is not None and int(other.kind) == int(tirx.ForKind.UNROLLED):
                e = other.extent
                unrolled *= int(e.value) if isinstance(e, tirx.IntImm) else 1
        infos.append(
            LoopInfo(
                path=s.path,
                node=loop,
                const_extent=ext,
                parallel_safe=safe,
                inside_parallel=any(p in parallel for p in s.loops),
                contains_parallel=any(q[: len(s.path)] == s.path and q != s.path for q in parallel),
                unrolled_product=unrolled,
            )
        )
    return infos


def _perfect_nest_block(loop: Any) -> Any:
    """The single SBlockRealize at the bottom of a perfect loop nest starting at ``loop``, else None."""
    body = loop.body
    while isinstance(body, tirx.For):
        body = body.body
    return body if isinstance(body, s_tir.SBlockRealize) else None
