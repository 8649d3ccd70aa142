"""The values an inserted operator's inputs are made of (TVM-free): constants, bounded random fills,
index tensors (a constant, or a graph input that keeps its valid range), broadcastable shapes, and
the extra nodes a role adds before the operator. :mod:`seedzer.mutate.graph.insert_roles` and
:mod:`seedzer.mutate.graph.insert_layers` build every role from these.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from seedzer.mutate.graph.op_schema import Formal
from seedzer.mutate.graph.schema_draw import Draw, elements

INDEX_INPUT_SHARE = 0.3
"""How often an index input becomes a graph input (fed out-of-range values in special mode)."""
INT64_MAX, INT64_MIN = 2**63 - 1, -(2**63)
MAX_OPERAND = 4096
"""Largest constant operand an insertion makes (elements)."""
Role = Callable[[Draw, Formal], Any]


def const(array: Any, dtype: Any = None) -> dict[str, Any]:
    """A constant reference holding ``array`` (its values are in the record: keep it small)."""
    value = np.asarray(array, dtype=dtype)
    return {"value": value.tolist(), "dtype": str(value.dtype), "shape": list(value.shape)}


def fill(shape: tuple[int, ...], dtype: str, low: float = -2.0, high: float = 2.0) -> dict[str, Any]:
    """A constant reference drawn from the record's seed: ``dtype`` values in ``[low, high]``."""
    method = "bool" if dtype == "bool" else "int" if np.dtype(dtype).kind in "iu" else "uniform"
    if np.dtype(dtype).kind == "u":
        low = max(low, 0)
    return {"fill": method, "dtype": dtype, "shape": list(shape), "low": low if method != "int" else int(low),
            "high": high if method != "int" else int(high)}


def values_like(d: Draw, shape: tuple[int, ...], dtype: str | None = None) -> dict[str, Any]:
    """A constant of ``shape`` and ``dtype`` (the data's by default): floats in [-2, 2], integers in [-3, 3]."""
    dtype = dtype or d.dtype
    kind = np.dtype(dtype).kind
    return fill(shape, dtype, *((-3, 3) if kind in "iu" else (-2.0, 2.0)))


def add_node(d: Draw, op: str, inputs: list[Any], outputs: int = 1, domain: str = "", **attrs: Any) -> str:
    """Append a node the operator needs before it; its first output's reference."""
    d.nodes.append({"op": op, "domain": domain, "inputs": inputs, "outputs": outputs, "attrs": attrs})
    return f"%{len(d.nodes) - 1}"


def index_tensor(d: Draw, values: np.ndarray, low: int, high: int, dtype: str = "int64") -> Any:
    """Index values as a constant, or (sometimes) as a graph input whose valid range is ``[low, high]``."""
    values = np.asarray(values, dtype=dtype)
    if d.index_inputs and d.rng.random() < INDEX_INPUT_SHARE and values.size:
        d.inputs.append({"name": f"insert_index_{d.rng.getrandbits(32):08x}", "dtype": dtype,
                         "shape": list(values.shape), "low": low, "high": high})
        return {"input": len(d.inputs) - 1}
    return const(values) if values.size <= 64 else fill(values.shape, dtype, low, high)


def broadcast_shape(d: Draw, unidirectional: bool = False) -> tuple[int, ...]:
    """A shape that broadcasts with the data's: the same, a scalar, a suffix, ones in some dimensions,
    or (bidirectionally) a longer one."""
    shape, rng = d.shape, d.rng
    options: list[tuple[int, ...]] = [shape, (), shape[-1:] if shape else (), tuple(1 if rng.random() < 0.5 else s
                                                                                  for s in shape)]
    if shape:
        options.append(shape[rng.randrange(len(shape)):])
    if not unidirectional and len(shape) < 5 and elements(shape) * 2 <= MAX_OPERAND:
        options.append((2, *shape))
    return rng.choice(options)
