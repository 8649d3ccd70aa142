"""Facts about an ONNX model for the manifest, a structural hash for deduplication, and checks.

Weights count floating-point parameter elements: initializers, plus tensors produced by
``ConstantOfShape`` from a constant shape (how the onnx package's "light" zoo models stand in for
their real weights), not the integer shape tensors themselves.
"""

from __future__ import annotations

import hashlib
import math
from collections import Counter
from typing import Any

import numpy as np
import onnx
from onnx import numpy_helper

from seedzer.generate.options import GenerationOptions

_INT_TYPES = {
    onnx.TensorProto.INT8, onnx.TensorProto.INT16, onnx.TensorProto.INT32, onnx.TensorProto.INT64,
    onnx.TensorProto.UINT8, onnx.TensorProto.UINT16, onnx.TensorProto.UINT32, onnx.TensorProto.UINT64,
    onnx.TensorProto.BOOL,
}  # fmt: skip
_FLOAT_TYPES = {
    onnx.TensorProto.FLOAT, onnx.TensorProto.DOUBLE, onnx.TensorProto.FLOAT16, onnx.TensorProto.BFLOAT16,
}  # fmt: skip


def dtype_name(elem_type: int) -> str:
    """numpy-style name of an ONNX element type (``float32``, ``int64``...)."""
    try:
        return str(np.dtype(onnx.helper.tensor_dtype_to_np_dtype(elem_type)))
    except (KeyError, TypeError, ValueError):
        return onnx.TensorProto.DataType.Name(elem_type).lower()


def _shape(vi: onnx.ValueInfoProto) -> list[int | str]:
    return [d.dim_value if d.HasField("dim_value") else d.dim_param for d in vi.type.tensor_type.shape.dim]


def _graph_inputs(model: onnx.ModelProto) -> list[onnx.ValueInfoProto]:
    inits = {i.name for i in model.graph.initializer}
    return [i for i in model.graph.input if i.name not in inits]


def _tensor_shapes(model: onnx.ModelProto) -> dict[str, tuple[list[int], bool]]:
    """Known constant tensor shapes: name -> (shape, is_float) for initializers and ConstantOfShape."""
    graph = model.graph
    shapes: dict[str, tuple[list[int], bool]] = {
        i.name: (list(i.dims), i.data_type in _FLOAT_TYPES) for i in graph.initializer
    }
    values = {i.name: i for i in graph.initializer}
    for node in graph.node:
        if node.op_type == "ConstantOfShape" and node.input and node.input[0] in values:
            dims = [int(v) for v in numpy_helper.to_array(values[node.input[0]]).reshape(-1)]
            elem = onnx.TensorProto.FLOAT
            for attr in node.attribute:
                if attr.name == "value":
                    elem = attr.t.data_type
            shapes[node.output[0]] = (dims, elem in _FLOAT_TYPES)
    return shapes


def count_weights(model: onnx.ModelProto) -> int:
    """Total floating-point parameter elements (see the module docstring)."""
    graph = model.graph
    shape_inputs = {n.input[0] for n in graph.node if n.op_type == "ConstantOfShape" and n.input}
    total = 0
    for name, (dims, is_float) in _tensor_shapes(model).items():
        if is_float and name not in shape_inputs:
            total += math.prod(dims)
    return total


def conv_kernels(model: onnx.ModelProto) -> list[tuple[list[int], int]]:
    """For every Conv node: (kernel shape, weight elements or -1 when unknown)."""
    shapes = _tensor_shapes(model)
    out = []
    for node in model.graph.node:
        if node.op_type not in ("Conv", "ConvTranspose"):
            continue
        weight = shapes.get(node.input[1]) if len(node.input) > 1 else None
        kernel: list[int] | None = None
        for attr in node.attribute:
            if attr.name == "kernel_shape":
                kernel = list(attr.ints)
        if kernel is None and weight is not None:
            kernel = weight[0][2:]
        out.append((kernel or [], math.prod(weight[0]) if weight is not None else -1))
    return out


def structural_hash(model: onnx.ModelProto) -> str:
    """sha256 of the graph's structure: ops, attributes, wiring, types and shapes; not float values.

    Tensor names are canonicalized by first appearance, so renaming does not change the hash;
    integer constants (shapes, axes) are structure and are included, float weights are not.
    """
    names: dict[str, str] = {}

    def canon(name: str) -> str:
        if not name:
            return ""
        return names.setdefault(name, f"t{len(names)}")

    def tensor_sig(t: onnx.TensorProto) -> tuple[Any, ...]:
        values: Any = None
        if t.data_type in _INT_TYPES and math.prod(t.dims) <= 4096:
            values = numpy_helper.to_array(t).reshape(-1).tolist()
        return (t.data_type, tuple(t.dims), values)

    parts: list[Any] = []
    for vi in _graph_inputs(model):
        parts.append(("in", canon(vi.name), vi.type.tensor_type.elem_type, tuple(_shape(vi))))
    inits = {i.name: i for i in model.graph.initializer}
    for node in model.graph.node:
        for name in node.input:
            if name in inits and name not in names:
                parts.append(("init", canon(name), tensor_sig(inits[name])))
        attrs: list[tuple[Any, ...]] = []
        for a in sorted(node.attribute, key=lambda a: a.name):
            if a.type == onnx.AttributeProto.TENSOR:
                attrs.append((a.name, tensor_sig(a.t)))
            elif a.type == onnx.AttributeProto.GRAPH:
                attrs.append((a.name, "graph", len(a.g.node)))
            else:
                attrs.append((a.name, str(onnx.helper.get_attribute_value(a))))
        parts.append(
            (node.domain, node.op_type, [canon(i) for i in node.input], [canon(o) for o in node.output], attrs)
        )
    for vi in model.graph.output:
        parts.append(("out", canon(vi.name), vi.type.tensor_type.elem_type, tuple(_shape(vi))))
    return hashlib.sha256(repr(parts).encode()).hexdigest()


def model_facts(model: onnx.ModelProto) -> dict[str, Any]:
    """Manifest facts: ops, op counts, node count, weights, conv kernels, dtypes, I/O shapes, edge
    features (:func:`seedzer.generate.onnx_edges.edge_features`), hash."""
    from seedzer.generate.onnx_edges import edge_features

    counts = Counter(n.op_type for n in model.graph.node)
    kernels = conv_kernels(model)
    inputs = _graph_inputs(model)
    dtypes = sorted({dtype_name(v.type.tensor_type.elem_type) for v in [*inputs, *model.graph.output]})
    return {
        "ops": sorted(counts),
        "op_counts": dict(sorted(counts.items())),
        "nodes": len(model.graph.node),
        "weights": count_weights(model),
        "conv_kernels": [k for k, _ in kernels],
        "max_conv_weight": max((w for _, w in kernels), default=0),
        "dtypes": dtypes,
        "input_shapes": {v.name: _shape(v) for v in inputs},
        "output_shapes": {v.name: _shape(v) for v in model.graph.output},
        "edge_features": edge_features(model),
        "graph_hash": structural_hash(model),
    }


def constraint_violation(facts: dict[str, Any], opts: GenerationOptions) -> str | None:
    """Why a generated model breaks the heuristic's conv constraints, or None when it complies."""
    for kernel in facts["conv_kernels"]:
        if not opts.conv.allows(list(kernel)):
            return "constraint violated: conv kernel"
    if facts["max_conv_weight"] > opts.max_weight_elements:
        return "constraint violated: conv weight budget"
    return None
