"""Tzer's general-purpose IR mutators, ported to TVM 0.27: Insertor, Deletor, Flipper, Nilizer.

All of them act only on the sites of :mod:`seedzer.tir.nodes` (value positions and statements),
so they never touch an index, a bound or a guard. They keep float arithmetic defined and finite on
the harness inputs where they can see it: math intrinsics are chosen among those safe on the
operand's range (:func:`seedzer.tir.exprgen.safe_math`), operators and constants among those
that keep their operation finite (:func:`seedzer.mutate.tir.base.fits`), and no statement that stores
is duplicated (a second write of one location). :func:`seedzer.tir.ub.check` catches the rest.
"""

from __future__ import annotations

import random
from typing import Any, ClassVar

import tvm
import tvm_ffi
from tvm import tirx
from tvm.ir.prim import expr as prim_expr

from seedzer.mutate.tir.base import BaseIRMutator, fits, replace_site, splice
from seedzer.tir import exprgen, ub
from seedzer.tir.ir import (
    TOP,
    Interval,
    dtype_of,
    free_vars,
    is_bool,
    is_buffer,
    is_float,
    is_int,
    replace_at,
    substitute,
)
from seedzer.tir.nodes import IF_THEN_ELSE, MATH_OPS, Analysis, Site, choose
from seedzer.tir.walker import MATH_BINARY, MATH_UNARY

FLOAT_BINOPS = (tirx.Add, tirx.Sub, tirx.Mul, tirx.Div, tirx.Min, tirx.Max)
INT_BINOPS = (tirx.Add, tirx.Sub, tirx.Mul, tirx.Min, tirx.Max)
INT_DIVOPS = (tirx.FloorDiv, tirx.FloorMod, tirx.Div, tirx.Mod)
BITWISE = (tirx.BitwiseAnd, tirx.BitwiseOr, tirx.BitwiseXor)
COMPARES = (tirx.LT, tirx.LE, tirx.GT, tirx.GE, tirx.EQ, tirx.NE)
LOGIC = (tirx.And, tirx.Or)
UNARY_MATH = (*MATH_UNARY, "abs")
BINARY_MATH = MATH_BINARY
PRAGMA_KEYS = ("pragma_auto_unroll_max_step", "pragma_unroll_explicit")


def op_family(node: Any) -> tuple[type, ...] | None:
    """The interchangeable operator classes ``node`` belongs to (None if it has none)."""
    dt = dtype_of(node.a) if hasattr(node, "a") else ""
    for fam in (COMPARES, LOGIC, BITWISE):
        if isinstance(node, fam):
            return fam
    if is_float(dt) and isinstance(node, FLOAT_BINOPS):
        return FLOAT_BINOPS
    if is_int(dt) and isinstance(node, INT_BINOPS):
        return INT_BINOPS
    if is_int(dt) and isinstance(node, INT_DIVOPS):
        return INT_DIVOPS
    return None


def math_name(node: Any) -> str | None:
    """Short name (``exp``) of a float math intrinsic call, else None."""
    if isinstance(node, tvm.ir.Call) and isinstance(node.op, tvm.ir.Op) and node.op.name in MATH_OPS:
        name = node.op.name.split(".", 1)[1]
        return "abs" if name == "fabs" else name
    return None


def wrap_binop(e: Any, dtype: str, scope: Any, rng: random.Random, e_range: Interval = TOP) -> Any | None:
    """``e`` combined with a fresh constant (or an in-scope integer) by a dtype-preserving operator;
    for floats, one that stays defined and finite given ``e``'s range (None if there is none)."""
    if is_bool(dtype):
        other = exprgen.random_cond(scope, rng)
        return rng.choice(LOGIC)(e, other)
    if is_int(dtype):
        op: Any = rng.choice(INT_BINOPS)
        operand = exprgen.random_const(dtype, rng)
        return op(e, operand) if rng.random() < 0.5 else op(operand, e)
    if not is_float(dtype):
        return None
    ints = exprgen.ranged_vars(scope)
    if ints and rng.random() < 0.3:
        v = rng.choice(ints)
        assert v.lo is not None and v.hi is not None
        operand, o_range = tirx.Cast(dtype, v.var), (float(v.lo), float(v.hi - 1))
    else:
        operand = exprgen.random_const(dtype, rng)
        o_range = (float(operand.value), float(operand.value))
    first = rng.random() < 0.5
    lhs, rhs = (o_range, e_range) if first else (e_range, o_range)
    ops = exprgen.safe_binops(FLOAT_BINOPS, lhs, rhs, dtype)
    if not ops:
        return None
    op = rng.choice(ops)
    return op(operand, e) if first else op(e, operand)


def _is_zero(e: Any) -> bool:
    return isinstance(e, (tirx.IntImm, tirx.FloatImm)) and float(e.value) == 0.0


class Insertor(BaseIRMutator):
    """Insert well-typed sub-IR: wrap an expression in a binary op or a math call, bind an
    expression to a fresh ``Bind`` variable before its statement, or duplicate a statement."""

    name: ClassVar[str] = "insert"
    default_weight: ClassVar[float] = 1.0

    def apply(self, a: Analysis, rng: random.Random) -> Any | None:
        """Try the three insertions in random order; the first applicable one wins."""
        insertions = [self._wrap, self._bind, self._duplicate]
        rng.shuffle(insertions)
        for insert in insertions:
            out = insert(a, rng)
            if out is not None:
                return out
        return None

    def _wrap(self, a: Analysis, rng: random.Random) -> Any | None:
        site = choose(a.expr_sites(), rng)
        if site is None:
            return None
        rng_e = ub.value_range(a.func, site.node)
        names = exprgen.safe_math(UNARY_MATH, [rng_e], site.dtype) if is_float(site.dtype) else []
        if names and rng.random() < 0.3:
            new = getattr(tirx, rng.choice(names))(site.node)
        else:
            new = wrap_binop(site.node, site.dtype, site.scope, rng, rng_e)
        return None if new is None else replace_site(a, site.path, new)

    def _bind(self, a: Analysis, rng: random.Random) -> Any | None:
        def ok(s: Site) -> bool:
            if s.stmt_path is None or s.stmt_path not in a.by_path or s.dtype == "":
                return False
            visible = {v.var for v in a.by_path[s.stmt_path].scope}
            return all(v in visible or is_buffer(v) for v in free_vars(s.node))

        site = choose([s for s in a.expr_sites() if not isinstance(s.node, _ATOMS) and not s.guarded and ok(s)], rng)
        if site is None or site.stmt_path is None:
            return None
        var = tirx.Var(f"ins_{rng.randrange(1 << 16)}", site.dtype)
        stmt_site = a.by_path[site.stmt_path]
        rel = site.path[len(site.stmt_path) :]
        return splice(a, stmt_site, [tirx.Bind(var, site.node), replace_at(stmt_site.node, rel, var)])

    def _duplicate(self, a: Analysis, rng: random.Random) -> Any | None:
        site = choose(
            [
                s
                for s in a.stmt_sites()
                if not s.defines and isinstance(s.node, (tirx.IfThenElse, tirx.SeqStmt)) and not _stores(s.node)
            ],
            rng,
        )
        if site is None:
            return None
        return splice(a, site, [site.node, site.node])


_ATOMS = (tvm.ir.Var, tirx.IntImm, tirx.FloatImm)


def _stores(node: Any) -> bool:
    """Whether a statement contains a BufferStore (duplicating it would write a location twice)."""
    found: list[Any] = []
    tvm_ffi.structural_walk(node, (tirx.BufferStore, found.append))
    return bool(found)


class Deletor(BaseIRMutator):
    """Replace a node by a type-compatible child: an operand, a Select/if_then_else branch, a math
    call's argument, a loop's body (run once), an if's branch, an attribute's body, or drop a
    statement from a sequence (never a write to a buffer the function allocates)."""

    name: ClassVar[str] = "delete"
    default_weight: ClassVar[float] = 1.0

    def apply(self, a: Analysis, rng: random.Random) -> Any | None:
        """Pick a deletable site by size and replace it by one of its compatible children."""
        options = {id(s): (s, self._children(a, s)) for s in a.sites}
        for s, kids in options.values():
            if not s.is_stmt and kids:  # the child replacing s must keep s's parent finite
                kids[:] = [k for k in kids if fits(a, s, ub.value_range(a.func, k))]
        site = choose([s for s, kids in options.values() if kids], rng)
        if site is None:
            return None
        if site.is_stmt and site.role == "seq" and rng.random() < 0.5:
            parent_path, index = site.path[:-1], site.path[-1][1]
            rest = [x for i, x in enumerate(site.parent.seq) if i != index]
            return replace_site(a, parent_path, rest[0] if len(rest) == 1 else tirx.SeqStmt(rest))
        return replace_site(a, site.path, rng.choice(options[id(site)][1]))

    @staticmethod
    def _children(a: Analysis, s: Site) -> list[Any]:
        n = s.node
        if not s.is_stmt:
            dt = s.dtype
            if isinstance(n, (prim_expr.BinaryOpExpr, tirx.And, tirx.Or)):
                return [c for c in (n.a, n.b) if dtype_of(c) == dt]
            if isinstance(n, tirx.Select):
                return [n.true_value, n.false_value]
            if math_name(n) is not None:
                return [c for c in n.args if dtype_of(c) == dt]
            if isinstance(n, tvm.ir.Call) and isinstance(n.op, tvm.ir.Op) and n.op.name == IF_THEN_ELSE:
                branches = [a.by_path.get((*s.path, ("args", i))) for i in (1, 2)]
                if any(b is None for b in branches):
                    return []
                if any(b.has_access for b in branches if b is not None):
                    return [b.node for b in branches if b is not None and not b.has_access]
                return [n.args[1], n.args[2]]
            return []
        if not s.removable:
            return []
        if isinstance(n, tirx.For):
            return [substitute(n.body, n.loop_var, n.min)]
        if isinstance(n, tirx.IfThenElse) and not s.has_access:
            return [b for b in (n.then_case, n.else_case) if b is not None]
        if isinstance(n, tirx.AttrStmt) and not isinstance(n.node, tirx.IterVar):
            return [n.body]
        if s.role == "seq" and len(s.parent.seq) > 1:
            return [tirx.Evaluate(tirx.const(0, "int32"))]
        return []


class Flipper(BaseIRMutator):
    """Swap an operator for one of its family (arithmetic, comparison, logic, bitwise, integer
    division), change a value constant, swap a math intrinsic for another of the same arity, or
    flip an unroll pragma's key or value."""

    name: ClassVar[str] = "flip"
    default_weight: ClassVar[float] = 1.5

    def apply(self, a: Analysis, rng: random.Random) -> Any | None:
        """Pick a flippable site by size and flip it."""
        cands = [s for s in a.sites if self._flippable(s)]
        site = choose(cands, rng)
        if site is None:
            return None
        new = self._flip(a, site, rng)
        return None if new is None else replace_site(a, site.path, new)

    @staticmethod
    def _flippable(s: Site) -> bool:
        n = s.node
        if s.is_stmt:
            return isinstance(n, tirx.AttrStmt) and n.attr_key in PRAGMA_KEYS
        return (
            isinstance(n, (tirx.IntImm, tirx.FloatImm))
            or (hasattr(n, "a") and hasattr(n, "b") and op_family(n) is not None)
            or math_name(n) is not None
        )

    def _flip(self, a: Analysis, site: Site, rng: random.Random) -> Any | None:
        n = site.node
        if isinstance(n, tirx.AttrStmt):
            key = rng.choice(PRAGMA_KEYS)
            value = rng.choice([0, 1, 4, 16, 64, 512]) if key.endswith("max_step") else rng.randint(0, 1)
            return tirx.AttrStmt(n.node, key, tirx.const(value, "int32"), n.body)
        if isinstance(n, (tirx.IntImm, tirx.FloatImm)):
            # TVM rejects a division by a literal zero at compile time: keep divisors non-zero.
            for _ in range(4):
                new = exprgen.other_const(n, rng, nonzero=isinstance(site.parent, tirx.Div) and site.role == "b")
                if new is None or not is_float(site.dtype) or fits(a, site, (new.value, new.value)):
                    return new
            return None
        name = math_name(n)
        args = [ub.value_range(a.func, x) for x in getattr(n, "args", ())]
        if name is not None:
            pool = UNARY_MATH if name in UNARY_MATH else BINARY_MATH
            names = exprgen.safe_math([x for x in pool if x != name], args, site.dtype)
            return getattr(tirx, rng.choice(names))(*n.args) if names else None
        fam = op_family(n)
        assert fam is not None
        ops = [op for op in fam if not isinstance(n, op) and not (_is_zero(n.b) and op is tirx.Div)]
        if is_float(site.dtype):
            ops = exprgen.safe_binops(ops, ub.value_range(a.func, n.a), ub.value_range(a.func, n.b), site.dtype)
        return rng.choice(ops)(n.a, n.b) if ops else None


class Nilizer(BaseIRMutator):
    """Replace a statement by the no-op ``Evaluate(0)`` or an expression by a neutral value."""

    name: ClassVar[str] = "nilize"
    default_weight: ClassVar[float] = 0.5

    def apply(self, a: Analysis, rng: random.Random) -> Any | None:
        """Nilize a removable statement or a non-constant expression, chosen by size."""
        stmts = [s for s in a.stmt_sites() if s.removable and not _is_nop(s.node)]
        exprs = [s for s in a.expr_sites() if not isinstance(s.node, (tirx.IntImm, tirx.FloatImm))]
        site = choose(stmts + exprs, rng)
        if site is None:
            return None
        if site.is_stmt:
            return replace_site(a, site.path, tirx.Evaluate(tirx.const(0, "int32")))
        value = exprgen.neutral(site.dtype, site.role, site.parent)
        if is_float(site.dtype) and not fits(a, site, (value.value, value.value)):
            return None
        return replace_site(a, site.path, value)


def _is_nop(node: Any) -> bool:
    return isinstance(node, tirx.Evaluate) and isinstance(node.value, tirx.IntImm)
