"""The inputs of an inserted operator besides its data, by role: operands, shapes, axes and indices
(TVM-free). Layer-specific roles (convolution, normalization, resampling, regions, quantization) are
:mod:`seedzer.mutate.graph.insert_layers`; :data:`ROLES` holds both.

A role is a function of the :class:`~seedzer.mutate.graph.schema_draw.Draw` and the formal input: it
returns the input's reference as :mod:`seedzer.kernel.graph.insertion` reads it (``""`` absent, a
constant, ``"=name"`` another tensor of the model, ``"%k"`` a node it adds before the operator,
``{"input": k}`` a graph input it adds). Values keep to what the specification defines, ends
included: indices within their dimension (negative ones too), ``Slice`` bounds past the ends,
shapes with ``-1`` and ``0``; an index input becomes a graph input (:data:`INDEX_INPUT_SHARE` of the
time) whose valid range the record keeps, so special-value inputs can probe it.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from seedzer.mutate.graph.insert_values import (
    INT64_MAX,
    INT64_MIN,
    MAX_OPERAND,
    Role,
    add_node,
    broadcast_shape,
    const,
    fill,
    index_tensor,
    values_like,
)
from seedzer.mutate.graph.op_schema import OPTIONAL, Formal
from seedzer.mutate.graph.schema_draw import Draw, elements, factor_shape


def operand(d: Draw, formal: Formal) -> Any:
    """An operand of the data's type: another tensor of the model that broadcasts with the data
    (sometimes), else a constant of a broadcasting shape; optional ones absent half of the time."""
    if formal.option == OPTIONAL and d.rng.random() < 0.5:
        return ""
    fitting = [n for n, (dt, s) in d.operands.items() if dt == d.dtype and s == d.shape]
    if fitting and d.rng.random() < 0.3:
        return "=" + d.rng.choice(fitting)
    return values_like(d, broadcast_shape(d))


def divisor(d: Draw, formal: Formal) -> Any:
    """A divisor without zeros (integer division by zero is undefined); float ``Mod`` needs ``fmod=1``."""
    shape = broadcast_shape(d)
    if np.dtype(d.dtype).kind == "f":
        if d.schema.name == "Mod":
            d.attrs["fmod"] = 1
        return fill(shape, d.dtype, 0.5, 2.0)
    signs = [1] if np.dtype(d.dtype).kind == "u" else [1, -1]
    values = np.array([d.rng.choice(signs) * d.rng.randint(1, 3) for _ in range(max(1, elements(shape)))])
    return const(values.reshape(shape), d.dtype) if values.size <= 64 else fill(shape, d.dtype, 1, 3)


def exponent(d: Draw, formal: Formal) -> Any:
    """A ``Pow`` exponent: small non-negative integers for integer bases, else -2..3 (halves too)."""
    shape = broadcast_shape(d)
    if np.dtype(d.dtype).kind in "iu":
        return fill(shape, d.dtype, 0, 3)
    return const(d.rng.choice([0.0, 1.0, 2.0, 3.0, -1.0, 0.5, -2.0]), d.dtype) if not shape else \
        fill(shape, d.dtype, -2.0, 3.0)


def shift(d: Draw, formal: Formal) -> Any:
    """``BitShift`` amounts within the type's width (``direction`` comes from the schema's enum)."""
    return fill(broadcast_shape(d), d.dtype, 0, 8 * np.dtype(d.dtype).itemsize - 1)


def condition(d: Draw, formal: Formal) -> Any:
    """A boolean condition that broadcasts with the data: a comparison of the data, or constants."""
    if np.dtype(d.dtype).kind != "b" and d.rng.random() < 0.5:
        return add_node(d, d.rng.choice(["Less", "Greater"]), [d.data, const(0, d.dtype)])
    return fill(broadcast_shape(d), "bool")


def clip_bounds(d: Draw, formal: Formal) -> Any:
    """``Clip``'s bounds: scalars with min <= max (ends included: equal, infinite), or absent."""
    if "clip" not in d.scratch:
        kind = np.dtype(d.dtype).kind
        if kind == "f":
            low, high = sorted(d.rng.choice([(-1.0, 1.0), (0.0, 0.0), (-np.inf, np.inf), (0.5, 0.5), (-0.5, 2.0)]))
        else:
            info = np.iinfo(d.dtype)
            low, high = sorted(d.rng.choice([(-1, 1), (0, 0), (int(info.min), int(info.max)), (0, 2)]))
        d.scratch["clip"] = {"min": low, "max": high}
    if d.rng.random() < 0.25:
        return ""
    return const(d.scratch["clip"][formal.name], d.dtype)


def like_dtype(d: Draw, formal: Formal) -> Any:
    """``CastLike``'s target: one element of a usable type (a float-to-integer cast sanitizes its data)."""
    dtype = d.rng.choice(["float32", "float64", "float16", "int32", "int64", "int8", "uint8", "bool"])
    if np.dtype(dtype).kind in "iu" and np.dtype(d.dtype).kind == "f":
        d.data = sanitize(d, d.data, dtype)
    return values_like(d, (1,), dtype)


def sanitize(d: Draw, data: str, target: str) -> str:
    """``data`` with NaN made 0 and clipped to a range ``target`` holds (a float-to-integer cast of
    NaN, infinities or values out of range is undefined)."""
    info = np.iinfo(target)
    cleaned = add_node(d, "Where", [add_node(d, "IsNaN", [data]), const(0, d.dtype), data])
    return add_node(d, "Clip", [cleaned, const(max(int(info.min), -100), d.dtype), const(min(int(info.max), 100),
                                                                                        d.dtype)])


def axes(d: Draw, formal: Formal) -> Any:
    """Reduction axes: a subset (negative ones too), empty (with ``noop_with_empty_axes``), or absent."""
    pick = d.rng.random()
    if pick < 0.25 or not d.rank:
        return ""
    if pick < 0.35:
        return const(np.zeros(0, np.int64))
    chosen = sorted(d.rng.sample(range(d.rank), d.rng.randint(1, d.rank)))
    return const([a - d.rank if d.rng.random() < 0.3 else a for a in chosen], np.int64)


def topk_k(d: Draw, formal: Formal) -> Any:
    """``TopK``'s K: 1 to the axis's length (its ends most often)."""
    dim = d.shape[d.axis(default=-1)]
    return const([d.rng.choice([1, dim, d.rng.randint(1, dim)])], np.int64)


def axis_scalar(d: Draw, formal: Formal) -> Any:
    """A scalar axis input (``CumSum``), negative half of the time."""
    axis = d.rng.randrange(d.rank)
    return const(axis - d.rank if d.rng.random() < 0.5 else axis, d.rng.choice([np.int64, np.int32]))


def reshape(d: Draw, formal: Formal) -> Any:
    """A ``Reshape`` target: the data's elements in another rank, with a ``-1`` or a ``0`` (copy) in it."""
    size = elements(d.shape)
    shape = list(factor_shape(size, d.rng.randint(0 if size == 1 else 1, 4), d.rng))
    if shape and d.rng.random() < 0.4:
        shape[d.rng.randrange(len(shape))] = -1
    elif shape and d.rng.random() < 0.3 and not d.attrs.get("allowzero"):
        same = [i for i, s in enumerate(shape) if i < d.rank and d.shape[i] == s]
        if same:
            shape[d.rng.choice(same)] = 0
    return const(shape, np.int64)


def expand(d: Draw, formal: Formal) -> Any:
    """An ``Expand`` shape: each unit dimension grown, others kept or given as 1, sometimes a new leading one."""
    shape = [d.rng.choice([1, 2, 3]) if s == 1 else d.rng.choice([s, s, 1]) for s in d.shape]
    if d.rng.random() < 0.3 and len(shape) < 5:
        shape.insert(0, d.rng.choice([1, 2]))
    grown = math.prod(max(a, b) for a, b in zip(shape[len(shape) - d.rank:], d.shape, strict=True)) * \
        math.prod(shape[: len(shape) - d.rank])
    if grown > MAX_OPERAND:
        shape = [1] * len(shape)
    return const(shape, np.int64)


def repeats(d: Draw, formal: Formal) -> Any:
    """``Tile`` repeats: 1 to 3 per dimension (1 where the result would grow too large)."""
    counts = [d.rng.choice([1, 1, 2, 3]) for _ in d.shape]
    if elements(d.shape) * math.prod(counts) > MAX_OPERAND:
        counts = [1] * d.rank
    return const(counts, np.int64)


def unit_axes(d: Draw, formal: Formal) -> Any:
    """``Squeeze`` axes: some of the unit dimensions (negative ones too), or absent (all of them)."""
    units = [i for i, s in enumerate(d.shape) if s == 1]
    if not units or d.rng.random() < 0.3:
        return ""
    chosen = d.rng.sample(units, d.rng.randint(1, len(units)))
    return const([a - d.rank if d.rng.random() < 0.4 else a for a in sorted(chosen)], np.int64)


def new_axes(d: Draw, formal: Formal) -> Any:
    """``Unsqueeze`` axes: one or two positions of the output, negative ones too."""
    count = d.rng.choice([1, 1, 2]) if d.rank < 5 else 1
    out_rank = d.rank + count
    chosen = d.rng.sample(range(out_rank), count)
    return const([a - out_rank if d.rng.random() < 0.4 else a for a in chosen], np.int64)


def slice_bounds(d: Draw, formal: Formal) -> Any:
    """``Slice``'s starts, ends, axes and steps, drawn together: bounds inside, negative, past both
    ends and at the int64 limits; steps of +-1, +-2; axes negative or left out."""
    if "slice" not in d.scratch:
        rng, picked = d.rng, sorted(d.rng.sample(range(d.rank), d.rng.randint(1, d.rank)))
        starts, ends, steps = [], [], []
        for axis in picked:
            dim = d.shape[axis]
            step = rng.choice([1, 1, 2, -1, -2])
            start = rng.choice([0, rng.randint(0, dim), -1, -dim, dim + 3, INT64_MIN if step < 0 else 0])
            end = rng.choice([dim, rng.randint(-dim, dim), INT64_MAX, INT64_MIN, -dim - 5] if step < 0 else
                             [dim, rng.randint(0, dim), INT64_MAX, -1, dim + 5])
            starts.append(start)
            ends.append(end)
            steps.append(step)
        axes_out = [a - d.rank if rng.random() < 0.3 else a for a in picked]
        default = axes_out == list(range(len(picked)))
        d.scratch["slice"] = {"starts": const(starts, np.int64), "ends": const(ends, np.int64),
                              "axes": "" if default and rng.random() < 0.5 else const(axes_out, np.int64),
                              "steps": "" if set(steps) == {1} and rng.random() < 0.5 else const(steps, np.int64)}
    chosen = d.scratch["slice"]
    if formal.name == "steps" and chosen["axes"] == "" and chosen["steps"] != "":
        chosen["axes"] = const(list(range(len(chosen["steps"]["value"]))), np.int64)
    return chosen[formal.name]


def split(d: Draw, formal: Formal) -> Any:
    """``Split``'s sizes along the axis (they sum to its length), or absent (even parts, or
    ``num_outputs`` from opset 18)."""
    axis = d.axis()
    dim = d.shape[axis]
    if d.schema.name == "SplitToSequence":
        return d.rng.choice(["", const(d.rng.randint(1, dim), np.int64)])
    if "num_outputs" in d.attrs or (d.rng.random() < 0.3 and d.opset < 18):
        d.scratch["outputs"] = int(d.attrs.get("num_outputs", 1)) if "num_outputs" in d.attrs else \
            (d.rng.choice([n for n in (1, 2) if dim % n == 0]))
        if d.opset < 18 and "num_outputs" not in d.attrs and d.scratch["outputs"] > 1 and dim % 2:
            d.scratch["outputs"] = 1
        return ""
    cuts = sorted(d.rng.sample(range(1, dim), min(dim - 1, d.rng.randint(0, 2)))) if dim > 1 else []
    sizes = [b - a for a, b in zip([0, *cuts], [*cuts, dim], strict=True)]
    d.scratch["outputs"] = len(sizes)
    return const(sizes, np.int64)


def pads(d: Draw, formal: Formal) -> Any:
    """``Pad``'s pads (and axes from opset 18): 0 to 2 per side, within the dimension for ``reflect``."""
    if "pads" not in d.scratch:
        chosen = list(range(d.rank))
        if d.opset >= 18 and d.rng.random() < 0.4:
            chosen = sorted(d.rng.sample(range(d.rank), d.rng.randint(1, d.rank)))
        limit = {a: (d.shape[a] - 1 if d.attrs.get("mode") in ("reflect", "wrap") else 2) for a in chosen}
        before = [d.rng.randint(0, max(0, min(2, limit[a]))) for a in chosen]
        after = [d.rng.randint(0, max(0, min(2, limit[a]))) for a in chosen]
        d.scratch["pads"] = {"pads": const(before + after, np.int64),
                             "axes": "" if chosen == list(range(d.rank)) else const(chosen, np.int64)}
    if formal.name == "constant_value":
        return "" if d.rng.random() < 0.5 else const(d.rng.choice([0, 1, -1]), d.dtype)
    return d.scratch["pads"][formal.name]


def scalar(d: Draw, formal: Formal) -> Any:
    """A rank-0 constant of the data's type (optional ones absent half of the time)."""
    if formal.option == OPTIONAL and d.rng.random() < 0.5:
        return ""
    return const(d.rng.choice([0, 1, -1, 2]), d.dtype)


def concat(d: Draw, formal: Formal) -> Any:
    """Further ``Concat`` operands: the data again, or constants equal to it but along the axis."""
    axis = d.axis()
    refs: list[Any] = []
    for _ in range(d.rng.randint(1, 2)):
        if d.rng.random() < 0.3:
            refs.append(d.data)
            continue
        shape = list(d.shape)
        shape[axis] = d.rng.randint(1, 3)
        refs.append(values_like(d, tuple(shape)))
    return refs


def trilu_k(d: Draw, formal: Formal) -> Any:
    """``Trilu``'s k: small, past the matrix, at the int64 limits, or absent."""
    return d.rng.choice(["", const(d.rng.choice([0, 1, -1, 2, -3, 100, -100, INT64_MAX, INT64_MIN]), np.int64)])


def shape_of(d: Draw, formal: Formal) -> Any:
    """A shape input: the data's own (a ``Shape`` node), or a small constant one."""
    if d.rng.random() < 0.6:
        return add_node(d, "Shape", [d.data])
    return const([d.rng.randint(1, 4) for _ in range(d.rng.randint(0, 3))], np.int64)


def gather(d: Draw, formal: Formal) -> Any:
    """``Gather`` indices into the axis: rank 0 to 2, negative ones too."""
    dim = d.shape[d.axis()]
    shape = tuple(d.rng.randint(1, 3) for _ in range(d.rng.randint(0, 2)))
    values = np.array([d.rng.randint(-dim, dim - 1) for _ in range(max(1, elements(shape)))]).reshape(shape)
    return index_tensor(d, values, -dim, dim - 1, d.rng.choice(["int64", "int32"]))


def elements_indices(d: Draw, formal: Formal) -> Any:
    """``GatherElements``/``ScatterElements`` indices: the data's rank, no larger, values in the axis;
    a scatter's are distinct along the axis (duplicate positions make its result undefined)."""
    axis = d.axis()
    dim = d.shape[axis]
    scatter = d.schema.name.startswith("Scatter")
    shape = tuple(d.rng.randint(1, s + (2 if i == axis and not scatter else 0)) for i, s in enumerate(d.shape))
    moved = np.moveaxis(np.zeros(shape, np.int64), axis, -1)
    flat = moved.reshape(-1, moved.shape[-1])
    for row in flat:
        picks = d.rng.sample(range(dim), len(row)) if scatter else [d.rng.randrange(dim) for _ in row]
        row[:] = [p - dim if d.rng.random() < 0.3 else p for p in picks]
    values = np.moveaxis(flat.reshape(moved.shape), -1, axis)
    d.scratch["updates"] = values.shape
    return const(values) if scatter else index_tensor(d, values, -dim, dim - 1)


def nd_indices(d: Draw, formal: Formal) -> Any:
    """``GatherND``/``ScatterND`` indices: tuples into the first k dimensions, distinct for a scatter."""
    k = d.rng.randint(1, d.rank)
    count = d.rng.randint(1, 4)
    space = [list(np.ndindex(*d.shape[:k]))]
    picks = d.rng.sample(space[0], min(count, len(space[0])))
    values = np.array([[c - d.shape[i] if d.rng.random() < 0.3 else c for i, c in enumerate(p)] for p in picks],
                      np.int64)
    d.scratch["updates"] = (len(picks), *d.shape[k:])
    if d.schema.name.startswith("Scatter"):
        return const(values)
    return index_tensor(d, values, -min(d.shape[:k]), min(d.shape[:k]) - 1)


def updates(d: Draw, formal: Formal) -> Any:
    """A scatter's updates, shaped by its indices."""
    return values_like(d, tuple(d.scratch["updates"]))


def position(d: Draw, formal: Formal) -> Any:
    """A sequence position within its length (negative too), or absent where optional."""
    length = int(d.scratch.get("seq_len", 1))
    if formal.option == OPTIONAL and d.rng.random() < 0.4:
        return ""
    top = length if d.schema.name == "SequenceInsert" else length - 1
    return const(d.rng.randint(-length, top), d.rng.choice([np.int64, np.int32]))


def sequence(d: Draw, formal: Formal) -> Any:
    """A sequence input: ``SequenceConstruct`` of the data and tensors like it (1 to 3 elements)."""
    count = d.rng.randint(1, 3)
    d.scratch["seq_len"] = count
    items: list[Any] = [d.data] + [values_like(d, d.shape) for _ in range(count - 1)]
    return add_node(d, "SequenceConstruct", items)


def optional(d: Draw, formal: Formal) -> Any:
    """An optional input: ``Optional`` of the data."""
    return add_node(d, "Optional", [d.data])


def absent(d: Draw, formal: Formal) -> Any:
    """Never given (the operator's behaviour is defined, or supported, only without it)."""
    return ""


def like(d: Draw, formal: Formal) -> Any:
    """A constant of the data's shape and type."""
    return values_like(d, d.shape)


def last_dim(d: Draw, formal: Formal) -> Any:
    """A vector as long as the data's last dimension (optional ones absent half of the time)."""
    if formal.option == OPTIONAL and d.rng.random() < 0.5:
        return ""
    return values_like(d, d.shape[-1:])


def unidirectional(d: Draw, formal: Formal) -> Any:
    """A slope that broadcasts to the data one way (``PRelu``)."""
    return values_like(d, broadcast_shape(d, unidirectional=True))


TENSOR_ROLES: dict[str, Role] = {
    "operand": operand, "divisor": divisor, "exponent": exponent, "shift": shift, "condition": condition,
    "clip_bounds": clip_bounds, "like_dtype": like_dtype, "axes": axes, "topk_k": topk_k,
    "axis_scalar": axis_scalar, "reshape": reshape, "expand": expand, "repeats": repeats, "unit_axes": unit_axes,
    "new_axes": new_axes, "slice": slice_bounds, "split": split, "pads": pads, "scalar": scalar, "concat": concat,
    "trilu_k": trilu_k, "shape_of": shape_of, "gather": gather, "elements": elements_indices, "nd": nd_indices,
    "updates": updates, "position": position, "sequence": sequence, "optional": optional, "absent": absent,
    "like": like, "last_dim": last_dim, "unidirectional": unidirectional,
}
"""The operand, shape and index roles by name."""
