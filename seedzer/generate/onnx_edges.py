"""Edge features of an ONNX model, and the negative-axes rewrite of the ``edge`` heuristic.

:func:`edge_features` counts what public TVM importer bug reports cluster on: rank-0 and
lower-rank operands of broadcasting ops, unit-dimension broadcasts, negative axes and slice bounds,
rank-0 tensors and unit-size windows. :func:`negate_axes` rewrites non-negative axes to their
negative equivalents (same semantics) where the ONNX specification allows them. Neither imports
NNSmith.
"""

from __future__ import annotations

import random
from collections import Counter

import numpy as np
import onnx
from onnx import numpy_helper

BROADCAST_OPS = frozenset({
    "Add", "Sub", "Mul", "Div", "Pow", "Max", "Min", "Mean", "Sum", "Mod", "PRelu", "Where",
    "Equal", "Greater", "Less", "GreaterOrEqual", "LessOrEqual", "And", "Or", "Xor", "BitShift",
})  # fmt: skip
# Ops whose ``axis`` attribute may be negative (range [-r, r-1] of the first input's rank r).
AXIS_OPS = frozenset({
    "Softmax", "LogSoftmax", "Hardmax", "Concat", "ArgMax", "ArgMin", "Gather", "GatherElements",
    "Split", "Compress", "LpNormalization",
})  # fmt: skip
REDUCE_OPS = frozenset({
    "ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
    "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare",
})  # fmt: skip
# op -> index of its axes input (opset 13+ for ReduceSum/Squeeze/Unsqueeze, 18+ other reductions).
AXES_INPUT = {**dict.fromkeys(REDUCE_OPS, 1), "Squeeze": 1, "Unsqueeze": 1, "Slice": 3}
WINDOW_OPS = frozenset({"Conv", "MaxPool", "AveragePool", "LpPool", "ConvTranspose"})
FEATURES = (
    "rank0_operands", "lower_rank_operands", "unit_dim_broadcasts", "negative_axes",
    "negative_slice_bounds", "scalar_tensors", "unit_windows",
)  # fmt: skip


def _vi_shape(vi: onnx.ValueInfoProto) -> list[int | None] | None:
    t = vi.type.tensor_type
    if not t.HasField("shape"):
        return None
    return [d.dim_value if d.HasField("dim_value") else None for d in t.shape.dim]


def _constants(model: onnx.ModelProto) -> dict[str, np.ndarray]:
    values = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
    for node in model.graph.node:
        if node.op_type == "Constant":
            for a in node.attribute:
                if a.name == "value":
                    values[node.output[0]] = numpy_helper.to_array(a.t)
    return values


def tensor_shapes(model: onnx.ModelProto) -> dict[str, list[int | None]]:
    """Known shapes of the model's tensors (ONNX shape inference, initializers, Constant nodes)."""
    try:
        inferred = onnx.shape_inference.infer_shapes(model)
    except Exception:  # shape inference is best effort: an uninferable model has fewer known shapes
        inferred = model
    g = inferred.graph
    shapes: dict[str, list[int | None]] = {}
    for vi in [*g.input, *g.value_info, *g.output]:
        shape = _vi_shape(vi)
        if shape is not None:
            shapes[vi.name] = shape
    for name, value in _constants(model).items():
        shapes[name] = list(value.shape)
    return shapes


def _axis_rank(node: onnx.NodeProto, shapes: dict[str, list[int | None]]) -> int | None:
    """The rank axes of ``node`` refer to (Unsqueeze: its output's; else its first input's)."""
    name = node.output[0] if node.op_type == "Unsqueeze" else (node.input[0] if node.input else "")
    shape = shapes.get(name)
    return None if shape is None else len(shape)


def negate_axes(model: onnx.ModelProto, probability: float, rng: random.Random) -> int:
    """Rewrite non-negative axes to their negative equivalents in place; returns how many changed.

    Covers ``axis`` attributes (Softmax, Concat, ArgMax...), ``axes`` attributes and axes inputs
    (Reduce*, Squeeze, Unsqueeze, Slice). A rewritten axes input gets a fresh initializer.
    """
    if probability <= 0:
        return 0
    shapes = tensor_shapes(model)
    consts = _constants(model)
    changed = 0
    for n, node in enumerate(model.graph.node):
        rank = _axis_rank(node, shapes)
        if not rank:
            continue
        for attr in node.attribute:
            if attr.name == "axis" and node.op_type in AXIS_OPS and attr.type == onnx.AttributeProto.INT:
                if 0 <= attr.i < rank and rng.random() < probability:
                    attr.i -= rank
                    changed += 1
            elif attr.name == "axes" and attr.type == onnx.AttributeProto.INTS and (
                node.op_type in AXES_INPUT and node.op_type != "Slice"
            ):
                new = [a - rank if 0 <= a < rank and rng.random() < probability else a for a in attr.ints]
                changed += sum(1 for a, b in zip(attr.ints, new, strict=True) if a != b)
                attr.ints[:] = new
        idx = AXES_INPUT.get(node.op_type)
        if idx is None or len(node.input) <= idx or node.input[idx] not in consts:
            continue
        axes = consts[node.input[idx]]
        if axes.dtype.kind != "i" or axes.ndim > 1:
            continue
        flat = axes.reshape(-1)
        new_axes = np.array([a - rank if 0 <= a < rank and rng.random() < probability else a for a in flat])
        diff = int(np.sum(new_axes != flat))
        if diff:
            name = f"{node.input[idx]}__neg{n}"
            tensor = numpy_helper.from_array(new_axes.astype(axes.dtype).reshape(axes.shape), name)
            model.graph.initializer.append(tensor)
            node.input[idx] = name
            changed += diff
    return changed


def edge_features(model: onnx.ModelProto) -> dict[str, int]:
    """Counts of edge features in ``model`` (keys: :data:`FEATURES`)."""
    shapes = tensor_shapes(model)
    consts = _constants(model)
    counts: Counter[str] = Counter(dict.fromkeys(FEATURES, 0))
    for node in model.graph.node:
        out = shapes.get(node.output[0]) if node.output else None
        if node.op_type in BROADCAST_OPS and out is not None and len(out) > 0:
            for name in node.input:
                shape = shapes.get(name)
                if shape is None or name in consts:  # exporter constants (x / 2) are not edges
                    continue
                if len(shape) == 0:
                    counts["rank0_operands"] += 1
                elif len(shape) < len(out):
                    counts["lower_rank_operands"] += 1
                elif any(d == 1 and o not in (1, None) for d, o in zip(shape, out, strict=False)):
                    counts["unit_dim_broadcasts"] += 1
        for attr in node.attribute:
            if attr.name == "axis" and attr.type == onnx.AttributeProto.INT and attr.i < 0:
                counts["negative_axes"] += 1
            elif attr.name == "axes" and attr.type == onnx.AttributeProto.INTS:
                counts["negative_axes"] += sum(1 for a in attr.ints if a < 0)
        idx = AXES_INPUT.get(node.op_type)
        if idx is not None and len(node.input) > idx and node.input[idx] in consts:
            counts["negative_axes"] += int(np.sum(consts[node.input[idx]] < 0))
        if node.op_type == "Slice":
            for name in node.input[1:3]:
                if name in consts:
                    counts["negative_slice_bounds"] += int(np.sum(consts[name] < 0))
        if node.op_type in WINDOW_OPS and out is not None and len(out) > 2 and all(d == 1 for d in out[2:]):
            counts["unit_windows"] += 1
    inits = set(consts)
    for name, shape in shapes.items():
        if name not in inits and len(shape) == 0:
            counts["scalar_tensors"] += 1
    return dict(counts)
