"""The spec-edge changes of one ONNX node, by operator: a table of small rules (TVM-free).

A spec-edge change moves an attribute or a constant operand of a node to a value the ONNX
specification allows and generators rarely choose (a negative axis, an empty axes list, ``ends`` at
INT64_MAX, a Resize coordinate mode, a Clip with min above max...). :func:`node_edges` proposes, for a
node, the change lists of the rules every operator gets (:data:`ANY_OPERATOR`) and then of the rules
its operator's entry lists (:data:`EDGE_RULES`), in that order; a rule reads the node's facts
(:class:`Node`: attributes, the shape of its first input, its constant operands) and may draw values
from the rng. :func:`seedzer.mutate.graph.model_mutators.edge_candidates` turns each change list into
a record; the kernel applies it (:mod:`seedzer.kernel.graph.model_mutations`).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import onnx
from onnx import TensorProto, numpy_helper

from seedzer.kernel.graph.model_mutations import TensorType
from seedzer.mutate.graph.insert_values import INT64_MAX

Change = dict[str, Any]
Changes = list[Change]
"""The changes of one spec-edge record, applied together."""

REDUCES = ("ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
           "ReduceLogSumExp", "ReduceSumSquare", "ReduceLogSum")
BROADCASTS = ("Add", "Sub", "Mul", "Div", "Pow", "Min", "Max", "Sum", "Mean", "PRelu", "Equal", "Less", "Greater",
              "LessOrEqual", "GreaterOrEqual", "Where", "And", "Or", "Xor", "Mod", "MatMul")
FREE_AXIS = ("Softmax", "LogSoftmax", "Hardmax", "Flatten", "ArgMax", "ArgMin", "CumSum")
ALPHAS = {"LeakyRelu": [0.0, 1.0, -1.0, 100.0, 1e-30], "Elu": [0.0, -1.0, 5.0], "Celu": [1e-3, 10.0],
          "ThresholdedRelu": [0.0, -1.0, 1e3], "HardSigmoid": [0.0, -1.0, 10.0], "Selu": [0.0, -2.0]}
"""Values at the edges of each activation's ``alpha`` (and HardSigmoid's ``beta``)."""
RESIZE_ATTRS: dict[str, list[Any]] = {"mode": ["nearest", "linear", "cubic"],
                                      "coordinate_transformation_mode": ["half_pixel", "pytorch_half_pixel",
                                                                         "align_corners", "asymmetric",
                                                                         "tf_crop_and_resize"],
                                      "nearest_mode": ["round_prefer_floor", "round_prefer_ceil", "floor", "ceil"],
                                      "cubic_coeff_a": [-0.5, -0.75, 0.0], "exclude_outside": [0, 1]}
CASTS = [TensorProto.FLOAT, TensorProto.DOUBLE, TensorProto.FLOAT16, TensorProto.INT32, TensorProto.INT64,
         TensorProto.INT8, TensorProto.UINT8, TensorProto.BOOL]
RESIZE_SCALES = [0.5, 0.75, 1.5, 2.3, 0.34, 3.0, 1.0]


def attribute_value(attribute: onnx.AttributeProto) -> Any:
    """An attribute's Python value (lists for repeated fields)."""
    value = onnx.helper.get_attribute_value(attribute)
    return list(value) if isinstance(value, (list, tuple)) or type(value).__name__.startswith("Repeated") else value


def constant(graph: onnx.GraphProto, name: str) -> np.ndarray | None:
    """The value of an initializer or Constant-node output ``name``, else None."""
    for init in graph.initializer:
        if init.name == name:
            return numpy_helper.to_array(init)
    for node in graph.node:
        if node.op_type == "Constant" and name in node.output:
            return next((numpy_helper.to_array(a.t) for a in node.attribute if a.name == "value"), None)
    return None


@dataclass(frozen=True)
class Node:
    """What the rules read of a node: its operator and attributes, the shape (and rank) of its first
    input (None: unknown), the value of each constant operand (None for the others) and the tensor
    types of the model."""

    node: onnx.NodeProto
    op: str
    attrs: dict[str, Any]
    shape: tuple[int, ...] | None
    rank: int | None
    consts: list[np.ndarray | None]
    types: dict[str, TensorType]

    @staticmethod
    def of(graph: onnx.GraphProto, node: onnx.NodeProto, types: dict[str, TensorType]) -> Node:
        """The facts of ``node`` in ``graph``."""
        shape = types.get(node.input[0], (0, None))[1] if node.input else None
        return Node(node, node.op_type, {a.name: attribute_value(a) for a in node.attribute}, shape,
                    len(shape) if shape is not None else None,
                    [constant(graph, i) if i else None for i in node.input], types)

    def const(self, index: int) -> np.ndarray | None:
        """The constant operand ``index`` (None: not a constant, or no such input)."""
        return self.consts[index] if len(self.consts) > index else None


def _set(index: int, value: Any, dtype: Any = np.int64) -> Change:
    """A change replacing input ``index`` by a fresh constant (or dropping it when ``value`` is None)."""
    if value is None:
        return {"input": index, "value": None}
    array = np.asarray(value, dtype=dtype)
    return {"input": index, "value": array.tolist(), "dtype": str(array.dtype), "shape": list(array.shape)}


def _attr(name: str, value: Any) -> Change:
    return {"attr": name, "value": value}


def _negative(axes: list[int], rank: int) -> list[int]:
    return [a - rank if a >= 0 else a for a in axes]


EdgeRule = Callable[[Node, random.Random], list[Changes]]
"""A rule: the change lists it proposes for a node (none where the node lacks what it needs)."""


def _axis_sign(n: Node, rng: random.Random) -> list[Changes]:
    """An integer ``axis`` written from the other end (1 -> 1 - rank)."""
    axis = n.attrs.get("axis")
    if not n.rank or not isinstance(axis, int):
        return []
    return [[_attr("axis", axis - n.rank if axis >= 0 else axis + n.rank)]]


def _free_axis(n: Node, rng: random.Random) -> list[Changes]:
    """Any axis of the input, either sign."""
    return [[_attr("axis", rng.randrange(-n.rank, n.rank))]] if n.rank else []


def _reduce(n: Node, rng: random.Random) -> list[Changes]:
    """``keepdims`` flipped; the axes negative, or none (every axis), or empty with ``noop_with_empty_axes``."""
    out = [[_attr("keepdims", 1 - int(n.attrs.get("keepdims", 1)))]]
    if n.rank and isinstance(n.attrs.get("axes"), list):
        out += [[_attr("axes", _negative(n.attrs["axes"], n.rank))], [_attr("axes", None)]]
    axes = n.const(1)
    if n.rank and axes is not None:
        out += [[_set(1, _negative(axes.tolist(), n.rank))], [_set(1, None)],
                [_set(1, np.zeros(0, np.int64)), _attr("noop_with_empty_axes", 1)]]
    return out


def _slice(n: Node, rng: random.Random) -> list[Changes]:
    """Starts from the end, ends at INT64_MAX or at the starts, starts past the end, negative axes, a
    backward slice over everything, steps other than 1."""
    starts, ends = n.const(1), n.const(2)
    if not n.shape or starts is None or ends is None:
        return []
    first, count = starts.astype(np.int64), len(starts)
    given = n.const(3)
    axes = given.astype(np.int64) if given is not None else np.arange(count, dtype=np.int64)
    dims = np.array([n.shape[a] for a in axes], np.int64)
    return [[_set(1, np.where(first >= 0, first - dims, first))], [_set(2, [INT64_MAX] * count)],
            [_set(2, first)], [_set(1, dims + 5)], [_set(3, axes - len(n.shape))],
            [_set(1, [-1] * count), _set(2, [-INT64_MAX - 1] * count), _set(3, axes), _set(4, [-1] * count)],
            [_set(4, [rng.choice([2, 3, -2]) for _ in range(count)]), _set(3, axes)]]


def _resize(n: Node, rng: random.Random) -> list[Changes]:
    """Every mode attribute at another value; a crop-and-resize over the whole input; other scales, or
    the same output given as sizes."""
    out = [[_attr(name, rng.choice(values))] for name, values in RESIZE_ATTRS.items()]
    if n.rank:
        out.append([_attr("coordinate_transformation_mode", "tf_crop_and_resize"),
                    _set(1, [0.0] * n.rank + [1.0] * n.rank, np.float32)])
    scales = n.const(2)
    if n.rank and scales is not None and scales.size == n.rank:
        spatial = [rng.choice(RESIZE_SCALES) for _ in range(n.rank - 2)]
        out.append([_set(2, [1.0, 1.0, *spatial], np.float32)])
        full = list(n.shape or ())
        sizes = full[:2] + [max(1, int(d * s)) for d, s in zip(full[2:], spatial, strict=True)]
        out.append([_set(2, None), _set(3, sizes)] if len(n.node.input) == 3 else [_set(3, sizes)])
    return out


def _pad(n: Node, rng: random.Random) -> list[Changes]:
    """Another mode; no padding at all, or negative pads (a crop)."""
    out = [[_attr("mode", rng.choice(["constant", "reflect", "edge"]))]]
    if n.rank and n.const(1) is not None:
        rank = n.rank
        out += [[_set(1, [0] * (2 * rank))], [_set(1, [0, 0] + [-1] * (rank - 2) + [0, 0] + [-1] * (rank - 2))]]
    return out


def _clip(n: Node, rng: random.Random) -> list[Changes]:
    """Min above max, min equal to max, infinite bounds, either bound left out."""
    if not n.node.input:
        return []
    dtype = np.float16 if n.types.get(n.node.input[0], (0,))[0] == TensorProto.FLOAT16 else np.float32
    return [[_set(1, 1.0, dtype), _set(2, -1.0, dtype)], [_set(1, 0.5, dtype), _set(2, 0.5, dtype)],
            [_set(1, -np.inf, dtype), _set(2, np.inf, dtype)], [_set(1, None)], [_set(2, None)]]


def _alphas(n: Node, rng: random.Random) -> list[Changes]:
    """``alpha`` (and HardSigmoid's ``beta``) at an edge value, twice."""
    values = ALPHAS[n.op]
    return [[_attr("alpha", rng.choice(values))], [_attr("beta" if n.op == "HardSigmoid" else "alpha",
                                                         rng.choice(values))]]


def _gather(n: Node, rng: random.Random) -> list[Changes]:
    """Negative indices; a one-element index as a scalar."""
    indices = n.const(1)
    if not n.shape or indices is None:
        return []
    dim = n.shape[int(n.attrs.get("axis", 0)) % len(n.shape)]
    out = [[_set(1, np.where(indices >= 0, indices - dim, indices), indices.dtype)]]
    if indices.size == 1:
        out.append([_set(1, indices.reshape(()), indices.dtype)])
    return out


def _scalar_operands(n: Node, rng: random.Random) -> list[Changes]:
    """A constant operand as one scalar, or its first row (more broadcasting)."""
    out = []
    for k, value in enumerate(n.consts):
        if value is not None and value.ndim >= 1 and value.size:
            out += [[_set(k, value.reshape(-1)[0], value.dtype)], [_set(k, value[0], value.dtype)]]
    return out


def _trilu(n: Node, rng: random.Random) -> list[Changes]:
    """The other triangle; a diagonal offset far out or near."""
    return [[_attr("upper", 1 - int(n.attrs.get("upper", 1)))], [_set(1, rng.choice([-1000, 1000, -1, 0, 2]))]]


def _transpose(n: Node, rng: random.Random) -> list[Changes]:
    """The identity permutation, and the reversal."""
    return [[_attr("perm", list(range(n.rank)))], [_attr("perm", list(range(n.rank))[::-1])]] if n.rank else []


def _cast(n: Node, rng: random.Random) -> list[Changes]:
    """Another target type."""
    return [[_attr("to", rng.choice(CASTS))]]


def _negative_axes(of_output: bool) -> EdgeRule:
    """The listed axes (attribute or constant operand) written negative, counted on the output's rank
    (Unsqueeze) or the input's (Squeeze)."""

    def rule(n: Node, rng: random.Random) -> list[Changes]:
        axes = n.const(1)
        listed = n.attrs.get("axes") or (axes.tolist() if axes is not None else None)
        rank = len(n.types.get(n.node.output[0], (0, ()))[1] or ()) if of_output else n.rank or 0
        if listed is None or not rank:
            return []
        negative = _negative(listed, rank)
        return [[_attr("axes", negative)] if "axes" in n.attrs else [_set(1, negative)]]

    return rule


def _all_axes(n: Node, rng: random.Random) -> list[Changes]:
    """No axes (every dimension of extent 1)."""
    return [[_attr("axes", None)] if "axes" in n.attrs else [_set(1, None)]]


def _auto_pad(n: Node, rng: random.Random) -> list[Changes]:
    """An ``auto_pad`` mode in place of explicit pads."""
    return [[_attr("auto_pad", rng.choice(["SAME_UPPER", "SAME_LOWER", "VALID"])), _attr("pads", None)]]


def _ceil_mode(n: Node, rng: random.Random) -> list[Changes]:
    return [[_attr("ceil_mode", 1 - int(n.attrs.get("ceil_mode", 0)))]]


def _count_include_pad(n: Node, rng: random.Random) -> list[Changes]:
    return [[_attr("count_include_pad", 1 - int(n.attrs.get("count_include_pad", 0)))]]


def _gemm(n: Node, rng: random.Random) -> list[Changes]:
    """``alpha``, ``beta`` at an edge value, ``transA`` flipped, no ``C``."""
    return [[_attr("alpha", rng.choice([0.0, -1.0, 1e-3]))], [_attr("beta", rng.choice([0.0, 2.0]))],
            [_attr("transA", 1 - int(n.attrs.get("transA", 0)))], [_set(2, None)]]


def _reshape(n: Node, rng: random.Random) -> list[Changes]:
    """The target shape with 0 for each dimension it keeps, or with -1 for one of them."""
    target = n.const(1)
    if not n.shape or target is None or not target.size:
        return []
    shape, dims = n.shape, target.astype(np.int64)
    copy = [0 if k < len(shape) and d == shape[k] else d for k, d in enumerate(dims.tolist())]
    minus = dims.copy()
    minus[rng.randrange(dims.size)] = -1
    return [[_set(1, copy)], [_set(1, minus)]]


def _expand(n: Node, rng: random.Random) -> list[Changes]:
    """A shorter target shape, or ones: broadcasting that keeps the input's own extents."""
    target = n.const(1)
    if target is None:
        return []
    return [[_set(1, [1])], [_set(1, target[1:])], [_set(1, np.ones_like(target))]]


ANY_OPERATOR: tuple[EdgeRule, ...] = (_axis_sign,)
"""The rules every operator gets, first."""
EDGE_RULES: dict[str, tuple[EdgeRule, ...]] = {
    **dict.fromkeys(FREE_AXIS, (_free_axis,)),
    **dict.fromkeys(REDUCES, (_reduce,)),
    "Slice": (_slice,),
    "Resize": (_resize,),
    "Pad": (_pad,),
    "Clip": (_clip,),
    **dict.fromkeys(ALPHAS, (_alphas,)),
    "Gather": (_gather,),
    **dict.fromkeys(BROADCASTS, (_scalar_operands,)),
    "Trilu": (_trilu,),
    "Transpose": (_transpose,),
    "Cast": (_cast,),
    "Squeeze": (_negative_axes(of_output=False), _all_axes),
    "Unsqueeze": (_negative_axes(of_output=True),),
    "AveragePool": (_auto_pad, _ceil_mode, _count_include_pad),
    "MaxPool": (_auto_pad, _ceil_mode),
    "Conv": (_auto_pad,),
    "Gemm": (_gemm,),
    "Reshape": (_reshape,),
    "Expand": (_expand,),
}
"""The rules of each operator, in the order they propose (an operator not listed gets :data:`ANY_OPERATOR`'s only)."""


def node_edges(graph: onnx.GraphProto, node: onnx.NodeProto, types: dict[str, TensorType],
               rng: random.Random) -> list[Changes]:
    """Every spec-edge change list the table proposes for ``node`` of ``graph`` (unchecked)."""
    facts = Node.of(graph, node, types)
    return [changes for rule in (*ANY_OPERATOR, *EDGE_RULES.get(node.op_type, ()))
            for changes in rule(facts, rng) if changes]
