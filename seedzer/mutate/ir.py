"""Low-level helpers over TVM 0.27 TIR objects: fields, paths, copy-with-replacement, dtypes.

TVM 0.27 has no Python ``StmtExprMutator``; nodes are tvm-ffi objects whose fields are reflected.
A position in a PrimFunc body is a :data:`Path` of ``(field, index)`` steps (``index`` is -1 for a
non-array field). :func:`replace_at` rebuilds the spine from the root with shallow copies, so the
input function is never modified and untouched subtrees stay shared.
"""

from __future__ import annotations

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
