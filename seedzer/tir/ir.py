"""Low-level helpers over TVM 0.27 TIR objects: fields, paths, copy-with-replacement, dtypes.

TVM 0.27 has no Python ``StmtExprMutator``; nodes are tvm-ffi objects whose fields are reflected.
A position in a PrimFunc body is a :data:`Path` of ``(field, index)`` steps (``index`` is -1 for a
non-array field). :func:`replace_at` rebuilds the spine from the root with shallow copies, so the
input function is never modified and untouched subtrees stay shared. The value intervals at the
end (dtype limits and interval arithmetic) serve the UB analysis (:mod:`seedzer.tir.ub`).
"""

from __future__ import annotations

import math
import sys
from collections.abc import Iterable
from typing import Any

import tvm
import tvm_ffi
from tvm import tirx
from tvm_ffi import core

Step = tuple[str, int]
Path = tuple[Step, ...]

FLOAT_PREFIXES = ("float", "bfloat")


_COPIERS: dict[Any, Any] = {}


def _shallow_copier(cls: Any) -> Any:
    if cls not in _COPIERS:
        info = cls.__tvm_ffi_type_info__
        fn = core._lookup_type_attr(info.type_index, "__ffi_shallow_copy__")
        if fn is None:
            raise TypeError(f"{cls.__name__} cannot be shallow-copied")
        _COPIERS[cls] = fn
    return _COPIERS[cls]


def replace_fields(obj: Any, **changes: Any) -> Any:
    """Return a shallow copy of ``obj`` with the given reflected fields replaced.

    Used only to swap children of the same kind (a statement for a statement, an expression of
    the same dtype for an expression), so cached types stay valid.
    """
    cls = type(obj)
    copy = _shallow_copier(cls)(obj)
    for name, value in changes.items():
        getattr(cls, name).set(copy, value)
    return copy


def get_at(root: Any, path: Path) -> Any:
    """The node reached by following ``path`` from ``root``."""
    node = root
    for name, index in path:
        node = getattr(node, name)
        if index >= 0:
            node = node[index]
    return node


def replace_at(root: Any, path: Path, new: Any) -> Any:
    """Return ``root`` with the node at ``path`` replaced by ``new`` (copy-on-write spine)."""
    if not path:
        return new
    (name, index), rest = path[0], path[1:]
    child = getattr(root, name)
    if index >= 0:
        items = list(child)
        items[index] = replace_at(items[index], rest, new)
        return replace_fields(root, **{name: items})
    return replace_fields(root, **{name: replace_at(child, rest, new)})


def dtype_of(expr: Any) -> str:
    """The dtype string of a primitive expression (``""`` when it has none, e.g. a handle)."""
    ty = getattr(expr, "ty", None)
    dt = getattr(ty, "dtype", None)
    return str(dt) if dt is not None else ""


def is_float(dtype: str) -> bool:
    """True for floating-point scalar dtypes (no vector lanes)."""
    return dtype.startswith(FLOAT_PREFIXES) and "x" not in dtype


def is_int(dtype: str) -> bool:
    """True for signed or unsigned integer scalar dtypes (not bool, no vector lanes)."""
    return dtype.startswith(("int", "uint")) and "x" not in dtype


def is_bool(dtype: str) -> bool:
    """True for the scalar boolean dtype."""
    return dtype == "bool"


def is_buffer(value: Any) -> bool:
    """True for a buffer variable (a ``Var`` whose type is a ``BufferType``)."""
    return isinstance(value, tvm.ir.Var) and isinstance(value.ty, tirx.BufferType)


def const_shape(buffer: Any) -> list[int] | None:
    """The buffer's shape as Python ints, or None when a dimension is symbolic or not positive."""
    dims: list[int] = []
    for d in buffer.ty.shape:
        if not isinstance(d, tirx.IntImm) or int(d.value) <= 0:
            return None
        dims.append(int(d.value))
    return dims


def shape_index_dtype(buffer: Any) -> str:
    """The dtype used by the buffer's shape (the natural index dtype), ``int32`` if unknown."""
    for d in buffer.ty.shape:
        dt = dtype_of(d)
        if dt:
            return dt
    return "int32"


def substitute(node: Any, var: Any, value: Any) -> Any:
    """``node`` with every use of ``var`` replaced by ``value``."""
    return tvm_ffi.structural_map(node, (tvm.ir.Var, lambda v: value if v.same_as(var) else v))


def free_vars(node: Any) -> list[Any]:
    """Every ``Var`` occurrence under ``node`` (buffers included, duplicates kept)."""
    found: list[Any] = []
    tvm_ffi.structural_walk(node, (tvm.ir.Var, found.append))
    return found


def const(value: Any, dtype: str) -> Any:
    """A scalar constant of ``dtype``."""
    return tirx.const(value, dtype)


def cast_to(expr: Any, dtype: str) -> Any:
    """``expr`` converted to ``dtype`` (no node when the dtype already matches)."""
    return expr if dtype_of(expr) == dtype else tirx.Cast(dtype, expr)


# -- value intervals (closed ranges ``(lo, hi)``, bounds may be infinite; None is empty) --------

Interval = tuple[float, float]
TOP: Interval = (-math.inf, math.inf)
BOOL: Interval = (0.0, 1.0)
Cells = dict[int, Interval | None]
"""Intervals by key (e.g. of the buffers a loop carries)."""
_FLOAT_MAX = {"float16": 65504.0, "bfloat16": 3.3895313892515355e38, "float32": 3.4028234663852886e38}
_FLOAT_TINY = {"float16": 6.2e-5, "bfloat16": 1.2e-38, "float32": 1.2e-38, "float64": 2.3e-308}


def dtype_limits(dtype: str) -> Interval:
    """The finite range of a scalar (or vector element) dtype; TOP when unknown."""
    base = dtype.split("x", 1)[0]
    if base.startswith(FLOAT_PREFIXES):
        m = _FLOAT_MAX.get(base, sys.float_info.max)
        return -m, m
    if base == "bool":
        return BOOL
    for prefix, signed in (("uint", False), ("int", True)):
        if base.startswith(prefix) and base[len(prefix) :].isdigit():
            bits = int(base[len(prefix) :])
            return (-(2.0 ** (bits - 1)), 2.0 ** (bits - 1) - 1) if signed else (0.0, 2.0**bits - 1)
    return TOP


def hull(values: Iterable[float]) -> Interval:
    """The smallest interval holding ``values`` (TOP if one is NaN, e.g. from ``inf - inf``)."""
    vals = list(values)
    return TOP if any(v != v for v in vals) else (min(vals), max(vals))


def join(a: Interval | None, b: Interval | None) -> Interval | None:
    """Interval union (None is the empty interval)."""
    if a is None or b is None:
        return b if a is None else a
    return min(a[0], b[0]), max(a[1], b[1])


def within(iv: Interval, dtype: str) -> bool:
    """Whether every value of ``iv`` is finite and representable in ``dtype``."""
    lo, hi = dtype_limits(dtype)
    return lo <= iv[0] and iv[1] <= hi


def flush(iv: Interval, dtype: str) -> Interval:
    """``iv`` with bounds nearer 0 than ``dtype``'s smallest normal number moved to 0 (they may round
    to 0: a value the intervals call positive may still be a zero divisor or a log operand)."""
    tiny = _FLOAT_TINY.get(dtype.split("x", 1)[0], 0.0)
    return (0.0 if 0.0 < iv[0] < tiny else iv[0]), (0.0 if -tiny < iv[1] < 0.0 else iv[1])


def bounded(iv: Interval) -> bool:
    """Whether both bounds of ``iv`` are finite."""
    return math.isfinite(iv[0]) and math.isfinite(iv[1])


def has_zero(iv: Interval) -> bool:
    """Whether ``iv`` contains 0."""
    return iv[0] <= 0.0 <= iv[1]


def arith(op: str, a: Interval, b: Interval) -> Interval:
    """Range of ``a op b`` for op in add/sub/mul/div/min/max (a divisor range holding 0 gives TOP)."""
    if op == "add":
        return hull((a[0] + b[0], a[1] + b[1]))
    if op == "sub":
        return hull((a[0] - b[1], a[1] - b[0]))
    if op == "mul":  # 0 * unbounded is 0: bounds are limits of real values, not infinities
        return hull([0.0 if x == 0.0 or y == 0.0 else x * y for x in a for y in b])
    if op == "div":
        return TOP if has_zero(b) else hull([x / y for x in a for y in b])
    return (min(a[0], b[0]), min(a[1], b[1])) if op == "min" else (max(a[0], b[0]), max(a[1], b[1]))


def linear(a: Cells, b: Cells, c: Cells) -> bool:
    """Whether every cell moved by the same amount from ``a`` to ``b`` as from ``b`` to ``c``."""
    for k, iv in c.items():
        pa, pb = a[k], b[k]
        if pa is None or pb is None or iv is None:
            return False
        if not all(math.isclose(pb[i] - pa[i], iv[i] - pb[i], rel_tol=1e-9, abs_tol=1e-12) for i in (0, 1)):
            return False
    return True


def extrapolate(b: Cells, c: Cells, steps: float) -> Cells:
    """Cells ``steps`` more linear steps on from ``c`` (padded outwards against rounding)."""
    out: Cells = {}
    for k, iv in c.items():
        prev = b[k]
        assert iv is not None and prev is not None
        d0, d1 = (iv[0] - prev[0]) * steps, (iv[1] - prev[1]) * steps
        out[k] = hull((iv[0] + d0 - abs(d0) * 1e-6, iv[1] + d1 + abs(d1) * 1e-6))
    return out


def widen(b: Cells, c: Cells) -> Cells:
    """Cells of ``c`` with every bound that still moved away from ``b`` sent to infinity."""
    out: Cells = {}
    for k, iv in c.items():
        old = b[k] or iv
        if iv is not None and old is not None:
            iv = (-math.inf if iv[0] < old[0] else iv[0]), (math.inf if iv[1] > old[1] else iv[1])
        out[k] = iv
    return out
