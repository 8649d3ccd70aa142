"""Small, well-typed expression builders the IR mutators share, and the ranges expressions take.

Everything built here is safe to evaluate: integer constants are small (no overflow in practice),
conditions use only variables in scope, and buffer loads index each dimension with a value proven
to lie in ``[0, extent)`` (a constant, a variable whose range is known to fit, or ``floormod``).

The second half is the one place that knows which arithmetic and which math intrinsics stay defined
and finite on which operand ranges (:func:`math_range`, :func:`safe_math`, :func:`safe_binops`),
and :class:`ExprRanges`, the interval evaluation of expressions the UB analysis
(:mod:`seedzer.tir.ub`) builds on. Mutators that wrap or flip math calls ask it first.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from typing import Any

import tvm
from tvm import tirx
from tvm.ir.prim import expr as pe

from seedzer.tir import ir
from seedzer.tir.ir import Interval, cast_to, const, const_shape, is_bool, is_float, is_int, shape_index_dtype
from seedzer.tir.nodes import ScopeVar
from seedzer.tir.walker import MATH_BINARY, MATH_UNARY

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


# -- which math stays finite on which operand ranges --------------------------------------------

_INF = math.inf
_DOMAIN: dict[str, tuple[float, float, bool]] = {  # name -> (low, high, open interval?)
    **dict.fromkeys(("log", "log2", "log10", "rsqrt"), (0.0, _INF, True)),
    "log1p": (-1.0, _INF, True),
    "sqrt": (0.0, _INF, False),
    **dict.fromkeys(("asin", "acos"), (-1.0, 1.0, False)),
    "acosh": (1.0, _INF, False),
    "atanh": (-1.0, 1.0, True),
    "tan": (-1.5, 1.5, False),  # well inside (-pi/2, pi/2), where tan stays small
    **dict.fromkeys(("sin", "cos"), (-_INF, _INF, True)),  # sin(inf) is NaN
}
_INCREASING: dict[str, Callable[[float], float]] = {
    **{"exp": math.exp, "exp2": lambda v: 2.0**v, "exp10": lambda v: 10.0**v, "sinh": math.sinh, "asinh": math.asinh},
    **{"tanh": math.tanh, "erf": math.erf, "atan": math.atan, "tan": math.tan, "asin": math.asin},
    **{"floor": math.floor, "ceil": math.ceil, "round": round, "nearbyint": round, "trunc": math.trunc},
    **{"log": math.log, "log2": math.log2, "log10": math.log10, "log1p": math.log1p, "sqrt": math.sqrt},
    **{"acosh": math.acosh, "atanh": math.atanh, "sigmoid": lambda v: 1.0 / (1.0 + math.exp(-v)) if v > -700 else 0.0},
    **{"rsqrt": lambda v: -1.0 / math.sqrt(v), "acos": lambda v: -math.acos(v)},  # negated: these decrease
}


def _mono(fn: Callable[[float], float], iv: Interval) -> Interval:
    """Range of a non-decreasing function (overflow gives inf)."""

    def at(x: float) -> float:
        try:
            return float(fn(x))
        except (OverflowError, ValueError) as exc:
            return math.nan if isinstance(exc, ValueError) else math.copysign(math.inf, x)

    return ir.hull((at(iv[0]), at(iv[1])))


def _unary(name: str, x: Interval) -> tuple[Interval, str | None]:
    lo, hi = x
    if name in _DOMAIN:
        a, b, strict = _DOMAIN[name]
        if not ((a < lo and hi < b) if strict else (a <= lo and hi <= b)):
            return ir.TOP, f"{name} of a value possibly outside {'(' if strict else '['}{a}, {b}{')]'[not strict]}"
    if name in ("rsqrt", "acos"):
        r = _mono(_INCREASING[name], x)
        return (-r[1], -r[0]), None
    if name in _INCREASING:
        return _mono(_INCREASING[name], x), None
    if name in ("abs", "fabs", "cosh"):  # even: increasing in |x|
        mag = (0.0 if ir.has_zero(x) else min(abs(lo), abs(hi)), max(-lo, hi))
        return _mono(math.cosh if name == "cosh" else abs, mag), None
    if name in ("sin", "cos"):
        return (-1.0, 1.0), None
    return ir.TOP, f"{name}: no known range"


def _binary(name: str, a: Interval, b: Interval) -> tuple[Interval, str | None]:
    big_a = max(abs(a[0]), abs(a[1]))
    if name == "atan2":
        return (-math.pi, math.pi), None
    if name == "copysign":
        return (-big_a, big_a), None
    if name == "hypot":
        return (0.0, math.hypot(big_a, max(abs(b[0]), abs(b[1])))), None
    if name == "nextafter":
        return (a[0] - abs(a[0]) * 1e-6 - 1e-38, a[1] + abs(a[1]) * 1e-6 + 1e-38), None
    if name == "pow":
        if a[0] <= 0:
            return ir.TOP, "pow of a possibly non-positive base"
        logs = _mono(math.log, a)
        return _mono(math.exp, ir.arith("mul", logs, b)), None
    return ir.TOP, f"{name}: no known range"


def math_range(name: str, args: Sequence[Interval], dtype: str) -> tuple[Interval, str | None]:
    """Range of math intrinsic ``name`` (``exp``, ``tirx.exp``, ``prim.log2`` ...) on ``args``,
    and why it may produce NaN or Inf in ``dtype`` (None when it cannot)."""
    short = name.split(".", 1)[-1]
    result, why = _unary(short, args[0]) if len(args) == 1 else _binary(short, args[0], args[1])
    if why is None and not ir.within(result, dtype):
        why = f"{short} may overflow {dtype}"
    return ir.flush(result, dtype), why


def safe_math(names: Sequence[str], args: Sequence[Interval], dtype: str) -> list[str]:
    """The intrinsics of ``names`` that are total and finite on operands in ``args``."""
    return [n for n in names if math_range(n, args, dtype)[1] is None]


def safe_binops(ops: Sequence[Any], a: Interval, b: Interval, dtype: str) -> list[Any]:
    """The arithmetic node classes of ``ops`` whose result on ``a``, ``b`` is defined and finite."""
    names = {"Add": "add", "Sub": "sub", "Mul": "mul", "Div": "div", "Min": "min", "Max": "max"}
    keys = {op: names.get(op.__name__, "") for op in ops}
    ok = [op for op, k in keys.items() if k and not (k == "div" and ir.has_zero(b))]
    return [op for op in ok if ir.within(ir.arith(keys[op], a, b), dtype)]


_ARITH = {pe.Add: "add", pe.Sub: "sub", pe.Mul: "mul", pe.Min: "min", pe.Max: "max"}
_TRUE, _FALSE = (1.0, 1.0), (0.0, 0.0)
_MATH = frozenset((*MATH_UNARY, *MATH_BINARY, "fabs"))


def _compare(e: Any, a: Interval, b: Interval) -> Interval:
    t = type(e)
    if t in (pe.EQ, pe.NE):
        same = e.a.same_as(e.b) or a[0] == a[1] == b[0] == b[1]
        eq = _TRUE if same else _FALSE if a[1] < b[0] or b[1] < a[0] else ir.BOOL
        return eq if t is pe.EQ else (1.0 - eq[1], 1.0 - eq[0])
    if t in (pe.GT, pe.GE):
        a, b = b, a
    if t in (pe.LT, pe.GT):
        return _TRUE if a[1] < b[0] else _FALSE if a[0] >= b[1] else ir.BOOL
    return _TRUE if a[1] <= b[0] else _FALSE if a[0] > b[1] else ir.BOOL


class ExprRanges:
    """Interval evaluation of expressions: :meth:`ev` gives the range of an expression from the
    ranges of its variables (:attr:`env`) and of the buffers it loads (:meth:`load`), and reports
    what may be undefined or non-finite through :meth:`hazard` and :meth:`int_div`. While
    :attr:`flags` is set, every evaluated node's range is joined into :attr:`ranges` (by handle)."""

    def __init__(self) -> None:
        self.env: dict[int, Interval] = {}
        self.vars: dict[int, Any] = {}
        self.ranges: dict[int, Interval] = {}
        self.flags = True

    def bind(self, var: Any, iv: Interval) -> None:
        """Give a scalar variable its range."""
        self.env[var.__chandle__()] = iv
        self.vars[var.__chandle__()] = var

    def hazard(self, category: str, node: Any, why: str) -> None:
        """Called when ``node`` may be undefined (``div``) or produce NaN/Inf (``nan``)."""

    def int_div(self, divisor: Any, iv: Interval) -> None:
        """Called for every integer division or modulo, with its divisor's range."""

    def load(self, e: Any) -> Interval:
        """The range of a buffer load (TOP unless a subclass tracks buffers)."""
        return ir.TOP

    def ev(self, e: Any) -> Interval:
        """The range of expression ``e``."""
        fn = _EV.get(type(e))
        iv = fn(self, e) if fn is not None else self._opaque(e)
        if self.flags:
            k = e.__chandle__()
            self.ranges[k] = ir.join(self.ranges.get(k), iv) or iv
        return iv

    def _opaque(self, e: Any) -> Interval:
        for name in ("value", "base", "stride", "a", "b"):
            child = getattr(e, name, None)
            if isinstance(child, tvm.ir.PrimExpr):
                self.ev(child)
        return ir.TOP

    def _finite(self, e: Any, iv: Interval, dt: str, what: str, *operands: Interval) -> Interval:
        """``iv`` (flushed); an overflow hazard only where bounded operands give an unbounded result:
        an operand already unbounded (unknown, or its own hazard) is blamed where it arose."""
        iv = ir.flush(iv, dt)
        if not ir.within(iv, dt) and all(map(ir.bounded, operands)):
            self.hazard("nan", e, f"{what} may overflow {dt}")
        return iv

    def _arith(self, e: Any) -> Interval:
        op, a, b = _ARITH[type(e)], self.ev(e.a), self.ev(e.b)
        r, dt = ir.arith(op, a, b), ir.dtype_of(e)
        if is_float(dt):
            return r if op in ("min", "max") else self._finite(e, r, dt, type(e).__name__, a, b)
        return r if ir.within(r, dt) else ir.TOP

    def _div(self, e: Any) -> Interval:
        a, b, dt, t = self.ev(e.a), self.ev(e.b), ir.dtype_of(e), type(e)
        if is_float(dt):
            if ir.has_zero(b):
                self.hazard("div", e.b, "division by a possibly-zero value")
                return ir.TOP
            r = ir.arith("div", a, b) if t in (pe.Div, pe.FloorDiv) else (min(b[0], -b[1]), max(-b[0], b[1]))
            return self._finite(e, r, dt, "division", a, b)
        self.int_div(e.b, b)
        if ir.has_zero(b) or not math.isfinite(a[1] - a[0] + b[1] - b[0]):
            return ir.TOP
        if t in (pe.Div, pe.FloorDiv):
            rnd = math.floor if t is pe.FloorDiv else math.trunc
            return ir.hull(float(rnd(x / y)) for x in a for y in b)
        m = max(abs(b[0]), abs(b[1])) - 1
        return (0.0, m) if t is pe.FloorMod and b[0] > 0 else (-m, m)

    def _select(self, e: Any) -> Interval:
        c, t, f = self.ev(e.condition), self.ev(e.true_value), self.ev(e.false_value)
        return t if c[0] > 0 else f if c[1] <= 0 else (min(t[0], f[0]), max(t[1], f[1]))

    def _cast(self, e: Any) -> Interval:
        v, dt = self.ev(e.value), ir.dtype_of(e)
        if dt == "bool":
            return _FALSE if v == _FALSE else ir.BOOL
        if is_float(dt):
            return self._finite(e, v, dt, "cast", v)
        if is_float(ir.dtype_of(e.value)):
            if not ir.within(v, dt):
                self.hazard("nan", e, f"float-to-{dt} cast of a value possibly out of range")
                return ir.TOP
            return float(math.trunc(v[0])), float(math.trunc(v[1]))
        return v if ir.within(v, dt) else ir.TOP

    def _let(self, e: Any) -> Interval:
        self.bind(e.var, self.ev(e.value))
        return self.ev(e.body)

    def _call(self, e: Any) -> Interval:
        short = str(getattr(e.op, "name", "")).split(".", 1)[-1]
        if short == "if_then_else":  # lazy: an untaken branch is not evaluated
            c = self.ev(e.args[0])
            if c[0] > 0 or c[1] <= 0:
                return self.ev(e.args[1 if c[0] > 0 else 2])
            t, f = self.ev(e.args[1]), self.ev(e.args[2])
            return min(t[0], f[0]), max(t[1], f[1])
        args = [self.ev(a) for a in e.args]
        if short not in _MATH or not args:
            return ir.TOP
        r, why = math_range(short, args, ir.dtype_of(e))
        if why is not None and (all(map(ir.bounded, args)) or "may overflow" not in why):
            self.hazard("nan", e, why)
        return r

    def _logic(self, e: Any) -> Interval:
        a, b = self.ev(e.a), self.ev(e.b)
        return (min(a[0], b[0]), min(a[1], b[1])) if type(e) is pe.And else (max(a[0], b[0]), max(a[1], b[1]))


_EV: dict[type, Callable[[ExprRanges, Any], Interval]] = {
    pe.IntImm: lambda r, e: (float(e.value), float(e.value)),
    pe.FloatImm: lambda r, e: (float(e.value), float(e.value)),
    tvm.ir.Var: lambda r, e: r.env.get(e.__chandle__(), ir.TOP),
    tvm.ir.TensorLoad: lambda r, e: r.load(e),
    **{t: ExprRanges._arith for t in _ARITH},
    **{t: ExprRanges._div for t in (pe.Div, pe.Mod, pe.FloorDiv, pe.FloorMod)},
    **{t: lambda r, e: _compare(e, r.ev(e.a), r.ev(e.b)) for t in (pe.EQ, pe.NE, pe.LT, pe.LE, pe.GT, pe.GE)},
    pe.And: ExprRanges._logic,
    pe.Or: ExprRanges._logic,
    pe.Not: lambda r, e: (lambda a: (1.0 - a[1], 1.0 - a[0]))(r.ev(e.a)),
    pe.Select: ExprRanges._select,
    pe.Cast: ExprRanges._cast,
    pe.Let: ExprRanges._let,
    tvm.ir.Call: ExprRanges._call,
    pe.Broadcast: lambda r, e: r.ev(e.value),
}
