"""An ONNX model as ``onnx.helper`` code: what a plain reproducer builds instead of carrying a binary blob.

One line per node (``helper.make_node`` with its attributes as keyword arguments), the graph's inputs and
outputs as value infos, each initializer as a numpy array written out (a float initializer of more than
:data:`LITERAL_ELEMENTS` elements drawn from a fixed seed instead, when ``exact`` is off: the caller checks
that the bug does not depend on its values), and the model's opsets and IR version. Subgraph attributes
(``If``, ``Loop``, ``Scan`` bodies) have no such form: :class:`NotRepresentable`. Needs onnx and numpy only.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import onnx
from onnx import helper, numpy_helper

LITERAL_ELEMENTS = 64
"""Initializers up to this many elements are written out exactly."""
IMPORTS = ("import numpy as np", "from onnx import TensorProto, helper, numpy_helper")
"""The imports the code needs."""


class NotRepresentable(ValueError):
    """The model has something ``onnx.helper`` code cannot say in a few lines (a subgraph)."""


def _number(value: float) -> str:
    return repr(value) if math.isfinite(value) else f"float({str(value)!r})"


def _value(value: Any) -> str:
    if isinstance(value, bytes):
        return repr(value.decode(errors="replace"))
    if isinstance(value, float):
        return _number(value)
    if isinstance(value, list):
        return "[" + ", ".join(_value(v) for v in value) + "]"
    if isinstance(value, onnx.TensorProto):
        return _array(numpy_helper.to_array(value), value.name, True)
    if isinstance(value, onnx.GraphProto):
        raise NotRepresentable("a subgraph attribute")
    return repr(value)


def array_code(array: np.ndarray) -> str:
    """``array`` written out exactly (NaN, infinities and signed zeros included) as a numpy expression."""
    values = [_number(float(v)) for v in array.ravel()] if array.dtype.kind == "f" else \
        [repr(v) for v in array.ravel().tolist()]
    return f"np.array([{', '.join(values)}], {str(array.dtype)!r}).reshape({tuple(array.shape)!r})"


def _array(array: np.ndarray, name: str, exact: bool) -> str:
    dtype = str(array.dtype)
    if array.dtype.kind == "f" and not np.isfinite(array).all():
        exact = True
    if exact or array.size <= LITERAL_ELEMENTS or array.dtype.kind != "f":
        made = array_code(array)
    else:
        made = f"np.random.default_rng(0).uniform(-1, 1, {tuple(array.shape)!r}).astype({dtype!r})"
    return f"numpy_helper.from_array({made}, {name!r})" if name else f"numpy_helper.from_array({made})"


def _value_info(info: onnx.ValueInfoProto) -> str:
    type_field = info.type.WhichOneof("value")
    if type_field != "tensor_type":
        raise NotRepresentable(f"a graph input or output of type {type_field}")
    tensor = info.type.tensor_type
    elem = onnx.TensorProto.DataType.Name(tensor.elem_type)
    shape = None
    if tensor.HasField("shape"):
        shape = [d.dim_value if d.HasField("dim_value") else (d.dim_param or None) for d in tensor.shape.dim]
    return f"helper.make_tensor_value_info({info.name!r}, TensorProto.{elem}, {shape!r})"


def _node(node: onnx.NodeProto) -> str:
    args = [repr(node.op_type), repr(list(node.input)), repr(list(node.output))]
    if node.domain:
        args.append(f"domain={node.domain!r}")
    for attr in node.attribute:
        args.append(f"{attr.name}={_value(helper.get_attribute_value(attr))}")
    return f"helper.make_node({', '.join(args)}),"


def model_code(model: onnx.ModelProto, exact: bool = False) -> list[str]:
    """Lines that define ``model`` (a variable of that name) with ``onnx.helper``."""
    graph = model.graph
    initialized = {t.name for t in graph.initializer}
    inputs = [_value_info(i) for i in graph.input if i.name not in initialized]
    outputs = [_value_info(o) for o in graph.output]
    inits = [_array(numpy_helper.to_array(t), t.name, exact) for t in graph.initializer]
    opsets = ", ".join(f"helper.make_opsetid({o.domain!r}, {o.version})" for o in model.opset_import)
    return ["graph = helper.make_graph(",
            "    [", *(f"        {n}" for n in map(_node, graph.node)), "    ],",
            '    "minimal",',
            f"    [{', '.join(inputs)}],",
            f"    [{', '.join(outputs)}],",
            f"    [{', '.join(inits)}],",
            ")",
            f"model = helper.make_model(graph, opset_imports=[{opsets}], ir_version={model.ir_version})"]


def rebuilt(model: onnx.ModelProto, exact: bool = False) -> onnx.ModelProto:
    """The model :func:`model_code` builds (to check that it still shows the bug)."""
    scope: dict[str, Any] = {"np": np, "helper": helper, "numpy_helper": numpy_helper, "TensorProto": onnx.TensorProto}
    exec("\n".join(model_code(model, exact)), scope)
    built: onnx.ModelProto = scope["model"]
    return built
