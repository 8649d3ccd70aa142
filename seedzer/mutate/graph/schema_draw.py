"""Attribute values drawn from an operator's schema, ends of their ranges included (TVM-free).

:func:`draw_attributes` gives every attribute of a :class:`~seedzer.mutate.graph.op_schema.Schema` a value
or leaves it out: a required one always, an optional one half of the time (its default then
applies). A string attribute takes one of the values its description quotes (its enum); an integer
that defaults to 0 or 1 is a flag; a float its default, 0, 1, -1, a half, a tiny and a huge value;
lists and the integers whose meaning is a dimension (``axis``, ``axes``, ``perm``, ``kernel_shape``,
``strides``, ``pads``, ``group``...) are drawn within the data's shape by their ONNX name, the same
in every operator. An operator's :class:`~seedzer.mutate.graph.op_table.OpRule` overrides the draw of an
attribute (``attrs``) or keeps one out (``absent``).
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from onnx import helper

from seedzer.mutate.graph.op_schema import Attr, Schema
from seedzer.mutate.graph.op_table import USABLE_DTYPES, OpRule

FLOAT_VALUES = (0.0, 1.0, -1.0, 0.5, 2.0, 1e-5, 10.0, 1e-30, 1e30)
"""Values a float attribute is drawn from (with its default): ends and points in between."""
POSITIVE_FLOATS = ("epsilon", "spatial_scale", "bias", "gamma", "lambd", "momentum")
"""Float attributes whose meaningful values are positive (a negative one divides by a negative root)."""
PRESENT = 0.5
"""How often an optional attribute is set."""


@dataclass
class Draw:
    """One insertion being drawn: the operator, its schema and rule, the data's shape and dtype, the
    attributes so far, and the nodes and graph inputs the roles add before the operator."""

    rng: random.Random
    schema: Schema
    rule: OpRule
    shape: tuple[int, ...]
    dtype: str
    opset: int
    operands: dict[str, tuple[str, tuple[int, ...]]] = field(default_factory=dict)
    """Other tensors of the model (name -> dtype, shape) an operand may be."""
    attrs: dict[str, Any] = field(default_factory=dict)
    scratch: dict[str, Any] = field(default_factory=dict)
    """What one role drew for the roles after it (a ``Slice``'s bounds, a scatter's updates shape...)."""
    nodes: list[dict[str, Any]] = field(default_factory=list)
    inputs: list[dict[str, Any]] = field(default_factory=list)
    data: str = "$"
    """The reference of the data the operator reads (``$``: the target, ``%k``: an adapter's output)."""
    index_inputs: bool = True
    """Whether an index input may become a graph input (not in a pool model, whose inputs are fixed)."""

    @property
    def rank(self) -> int:
        """The data's rank."""
        return len(self.shape)

    def axis(self, name: str = "axis", default: int = 0) -> int:
        """The drawn ``name`` attribute as a non-negative axis of the data (``default`` when unset)."""
        value = int(self.attrs.get(name, default))
        return value + self.rank if value < 0 and self.rank else value


def dtype_code(name: str) -> int:
    """The ONNX element type of a numpy dtype name."""
    return int(helper.np_dtype_to_tensor_dtype(np.dtype(name)))


def _divisors(n: int) -> list[int]:
    return [d for d in range(1, n + 1) if n % d == 0] or [1]


def _spatial(d: Draw) -> list[int]:
    return list(d.shape[2:])


def _kernel(d: Draw) -> list[int]:
    return [d.rng.randint(1, max(1, min(s, 3))) for s in _spatial(d)]


def _pads(d: Draw) -> list[int]:
    kernel = d.attrs.get("kernel_shape") or [1] * len(_spatial(d))
    begin = [d.rng.randint(0, max(0, k - 1)) for k in kernel]
    end = [d.rng.randint(0, max(0, k - 1)) for k in kernel]
    return begin + end


def _axes(d: Draw) -> list[int]:
    if not d.rank:
        return []
    picked = sorted(d.rng.sample(range(d.rank), d.rng.randint(1, d.rank)))
    return [a - d.rank if d.rng.random() < 0.3 else a for a in picked]


def _perm(d: Draw) -> list[int]:
    order = list(range(d.rank))
    d.rng.shuffle(order)
    return order


def _axis(d: Draw) -> int:
    return d.rng.randrange(-d.rank, d.rank) if d.rank else 0


def _block(d: Draw, depth: bool) -> int:
    if d.rank != 4:
        return 1
    if depth:
        return d.rng.choice([b for b in (1, 2, 3) if d.shape[1] % (b * b) == 0] or [1])
    return d.rng.choice([b for b in (1, 2, 3) if d.shape[2] % b == 0 and d.shape[3] % b == 0] or [1])


def _strides(d: Draw) -> list[int]:
    return [d.rng.choice([1, 1, 2, 3]) for _ in _spatial(d)]


def _dilations(d: Draw) -> list[int]:
    kernel = d.attrs.get("kernel_shape") or [1] * len(_spatial(d))
    return [d.rng.choice([1, 2]) if (k - 1) * 2 + 1 <= s else 1 for k, s in zip(kernel, _spatial(d), strict=False)]


NAMED: dict[str, Callable[[Draw], Any]] = {
    "axis": _axis,
    "axes": _axes,
    "perm": _perm,
    "kernel_shape": _kernel,
    "strides": _strides,
    "dilations": _dilations,
    "pads": _pads,
    "output_padding": lambda d: [d.rng.randint(0, max(0, s - 1)) for s in d.attrs.get("strides") or
                                 [1] * len(_spatial(d))],
    "group": lambda d: d.rng.choice(_divisors(d.shape[1])) if d.rank > 1 else 1,
    "auto_pad": lambda d: d.rng.choice(["NOTSET", "NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"]),
    "flatten_axis": lambda d: d.rng.randint(-d.rank, d.rank),
    "depth_block": lambda d: _block(d, True),
    "space_block": lambda d: _block(d, False),
    "shape_bound": lambda d: d.rng.randint(-d.rank - 1, d.rank + 1),
    "channel_divisor": lambda d: d.rng.choice(_divisors(d.shape[1])) if d.rank > 1 else 1,
    "heads": lambda d: d.rng.choice([h for h in _divisors(d.shape[-1]) if h <= 8]),
    "pooled": lambda d: [d.rng.randint(1, 3), d.rng.randint(1, 3)],
    "p": lambda d: d.rng.choice([1, 2, 3]),
    "blocksize": lambda d: _block(d, True),
    "num_outputs": lambda d: d.rng.choice([n for n in (1, 2, 3) if d.shape and n <= d.shape[d.axis()]] or [1]),
    "k": lambda d: d.rng.choice([-2, -1, 0, 1, 2]),
    "output_height": lambda d: d.rng.randint(1, 4),
    "output_width": lambda d: d.rng.randint(1, 4),
    "sampling_ratio": lambda d: d.rng.choice([0, 1, 2]),
    "size": lambda d: d.rng.choice([1, 3, 5]),
    "seed": lambda d: d.rng.randint(0, 1000),
}
"""Attributes drawn by their ONNX name (or a rule's token), the same in every operator."""
DTYPE_ATTRS = ("to", "dtype")
"""Attributes whose value is an element type (a rule lists numpy dtype names for them)."""


def _resolve(d: Draw, name: str, value: Any) -> Any:
    """A rule's listed value: a token of :data:`NAMED` computed, a dtype name for a type attribute."""
    if isinstance(value, str) and value in NAMED:
        return NAMED[value](d)
    if name in DTYPE_ATTRS and isinstance(value, str):
        return dtype_code(value)
    return value


def draw_value(d: Draw, attr: Attr) -> Any:
    """One value for ``attr`` (see the module docstring); None when it cannot be drawn."""
    name, rng = attr.name, d.rng
    if name in d.rule.attrs:
        return _resolve(d, name, rng.choice(d.rule.attrs[name]))
    if name in NAMED:
        return NAMED[name](d)
    if name in DTYPE_ATTRS:
        return dtype_code(rng.choices(list(USABLE_DTYPES), weights=list(USABLE_DTYPES.values()))[0])
    if attr.type == "STRING":
        return rng.choice(attr.choices) if attr.choices else attr.default
    if attr.type == "INT":
        if attr.default in (0, 1):
            return rng.randint(0, 1)
        return rng.choice([v for v in (attr.default, 0, 1, 2, -1) if v is not None])
    if attr.type == "FLOAT":
        values = [v for v in (attr.default, *FLOAT_VALUES) if v is not None]
        if name in POSITIVE_FLOATS:
            values = [v for v in values if v > 0] or [1.0]
        return rng.choice(values)
    if attr.type == "TENSOR":
        dtype = rng.choice(["float32", "int64", "int32", "bool", "float64"])
        value = rng.choice([0, 1, -1, 7, 0.5]) if dtype != "bool" else rng.random() < 0.5
        return {"tensor": {"value": [np.asarray(value, dtype=dtype).item()], "dtype": dtype, "shape": [1]}}
    if attr.type == "TYPE_PROTO":
        return {"type": {"elem": dtype_code(d.dtype), "shape": list(d.shape)}}
    return None


def draw_attributes(d: Draw) -> None:
    """Draw ``d``'s attributes into ``d.attrs`` (see the module docstring); ``auto_pad`` other than
    NOTSET drops ``pads``, which it replaces."""
    for attr in d.schema.attrs.values():
        if attr.name in d.rule.absent or attr.name in d.attrs:
            continue
        if not attr.required and attr.name not in d.rule.attrs and d.rng.random() >= PRESENT:
            continue
        value = draw_value(d, attr)
        if value is not None and value != []:
            d.attrs[attr.name] = value
    if d.attrs.get("auto_pad", "NOTSET") != "NOTSET":
        d.attrs.pop("pads", None)
    for key in ("kernel_shape", "strides", "dilations", "pads", "output_padding"):
        if key in d.attrs and not d.attrs[key]:
            del d.attrs[key]


def factor_shape(size: int, rank: int, rng: random.Random) -> tuple[int, ...]:
    """A shape of ``rank`` dimensions whose product is ``size`` (its factors spread at random)."""
    dims = [1] * rank
    remaining = size
    for position in range(rank - 1, 0, -1):
        factors = [f for f in _divisors(remaining) if f <= 64]
        pick = rng.choice(factors)
        dims[position] = pick
        remaining //= pick
    if rank:
        dims[0] = remaining
    return tuple(dims) if rank else ()


def elements(shape: tuple[int, ...]) -> int:
    """The element count of ``shape``."""
    return math.prod(shape)
