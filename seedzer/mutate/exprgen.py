"""Small, well-typed expression builders the IR mutators share.

Everything built here is safe to evaluate: integer constants are small (no overflow in practice),
conditions use only variables in scope, and buffer loads index each dimension with a value proven
to lie in ``[0, extent)`` (a constant, a variable whose range is known to fit, or ``floormod``).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from tvm import tirx

from seedzer.mutate.ir import cast_to, const, const_shape, is_bool, is_float, is_int, shape_index_dtype
from seedzer.mutate.nodes import ScopeVar

FLOAT_CONSTS = (0.0, 1.0, -1.0, 0.5, 2.0, -2.5, 3.0, 1e-3, 1e3, 65504.0, -3.4028234663852886e38)
INT_CONSTS = (0, 1, -1, 2, 3, 7, 8, -4)
UINT_CONSTS = (0, 1, 2, 3, 7, 8)


def random_const(dtype: str, rng: random.Random, nonzero: bool = False) -> Any:
    """A constant of ``dtype`` drawn from a small set of interesting values (never 0 if ``nonzero``)."""
    if is_bool(dtype):
        return const(nonzero or rng.random() < 0.5, dtype)
    if is_float(dtype):
        pool: tuple[Any, ...] = FLOAT_CONSTS
    elif dtype.startswith("uint"):
        pool = UINT_CONSTS
    else:
        pool = INT_CONSTS
    return const(rng.choice([v for v in pool if v != 0] if nonzero else pool), dtype)


def other_const(old: Any, rng: random.Random, nonzero: bool = False) -> Any:
    """A constant of the same dtype as ``old`` but with a different value (None if impossible)."""
    dtype = str(old.ty.dtype)
    for _ in range(8):
        new = random_const(dtype, rng, nonzero=nonzero)
        if float(new.value) != float(old.value):
            return new
    return None


def neutral(dtype: str, role: str, parent: Any) -> Any:
    """The value that makes ``parent`` (an arithmetic node) ignore the operand at ``role``."""
    if isinstance(parent, (tirx.Mul, tirx.Div)) and role == "b":
        return const(1, dtype)
    if is_bool(dtype):
        return const(isinstance(parent, tirx.And), dtype)
    return const(0, dtype)


def int_vars(scope: Sequence[ScopeVar]) -> list[ScopeVar]:
    """Integer variables of a scope."""
    return [v for v in scope if is_int(v.dtype)]


def ranged_vars(scope: Sequence[ScopeVar]) -> list[ScopeVar]:
    """Integer variables of a scope whose range is known."""
    return [v for v in int_vars(scope) if v.lo is not None and v.hi is not None]


def tautology(scope: Sequence[ScopeVar], rng: random.Random) -> Any:
    """A condition that always holds but that the compiler has to prove (or keep)."""
    known = ranged_vars(scope)
    if known and rng.random() < 0.8:
        v = rng.choice(known)
        assert v.lo is not None and v.hi is not None
        forms = [
            lambda: tirx.GE(v.var, const(v.lo, v.dtype)),
            lambda: tirx.LT(v.var, const(v.hi, v.dtype)),
            lambda: tirx.LE(v.var + const(1, v.dtype), const(v.hi, v.dtype)),
            lambda: tirx.LT(tirx.floormod(v.var, const(3, v.dtype)), const(3, v.dtype)),
        ]
        return rng.choice(forms)()
    ints = int_vars(scope)
    if ints:
        v = rng.choice(ints)
        return tirx.EQ(v.var, v.var)
    return const(True, "bool")


def random_cond(scope: Sequence[ScopeVar], rng: random.Random) -> Any:
    """A condition over in-scope integer variables that is sometimes true and sometimes false."""
    known = ranged_vars(scope)
    if known:
        v = rng.choice(known)
        assert v.lo is not None and v.hi is not None
        c = const(rng.randint(v.lo, v.hi), v.dtype)
        forms = [
            lambda: tirx.LT(v.var, c),
            lambda: tirx.GE(v.var, c),
            lambda: tirx.NE(v.var, c),
            lambda: tirx.EQ(tirx.floormod(v.var, const(2, v.dtype)), const(0, v.dtype)),
        ]
        return rng.choice(forms)()
    ints = int_vars(scope)
    if ints:
        v = rng.choice(ints)
        return tirx.GT(v.var, const(rng.choice(INT_CONSTS), v.dtype))
    return const(rng.random() < 0.5, "bool")


def in_bounds_index(extent: int, dtype: str, scope: Sequence[ScopeVar], rng: random.Random) -> Any:
    """An index expression whose value is guaranteed to lie in ``[0, extent)``."""
    fits = [v for v in ranged_vars(scope) if v.lo is not None and v.hi is not None and v.lo >= 0 and v.hi <= extent]
    ints = int_vars(scope)
    r = rng.random()
    if fits and r < 0.5:
        return cast_to(rng.choice(fits).var, dtype)
    if ints and r < 0.85 and extent > 1:
        v = rng.choice(ints)
        expr = cast_to(v.var, dtype)
        if rng.random() < 0.5:
            expr = expr + const(rng.randint(1, extent), dtype)
        return tirx.floormod(expr, const(extent, dtype))
    return const(rng.randrange(extent), dtype)


def in_bounds_load(buffer: Any, scope: Sequence[ScopeVar], rng: random.Random) -> Any | None:
    """A load of ``buffer`` at an in-bounds position (None if its shape is not static)."""
    shape = const_shape(buffer)
    if shape is None:
        return None
    idt = shape_index_dtype(buffer)
    return tirx.BufferLoad(buffer, [in_bounds_index(n, idt, scope, rng) for n in shape])


def convertible(src: str, dst: str) -> bool:
    """Whether a value of ``src`` may be cast to ``dst`` without undefined behaviour."""
    if src == dst:
        return True
    if is_float(src):
        return is_float(dst)  # float -> int casts overflow (UB); never generate them
    return is_float(dst) or (is_int(dst) and (is_int(src) or is_bool(src)))
