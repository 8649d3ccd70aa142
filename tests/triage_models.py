"""Hand-built ONNX models for the loader triage tests (onnx.helper only)."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17


def _model(nodes: list[onnx.NodeProto], inputs: list[onnx.ValueInfoProto], outputs: list[onnx.ValueInfoProto],
           inits: list[onnx.TensorProto] | None = None) -> onnx.ModelProto:
    model = helper.make_model(helper.make_graph(nodes, "g", inputs, outputs, inits or []),
                              opset_imports=[helper.make_opsetid("", OPSET)])
    model.ir_version = 8
    onnx.checker.check_model(model, full_check=True)
    return model


def prelu_scalar_model() -> onnx.ModelProto:
    """Nine nodes, two outputs; one PRelu reads a rank-0 tensor (a ReduceMean over all axes).

    TVM 0.27's importer rejects that PRelu ("the input axis -1 is out of range"): the minimal
    trigger is the PRelu alone.
    """
    f = TensorProto.FLOAT
    x = helper.make_tensor_value_info("x", f, [2, 3, 4])
    y = helper.make_tensor_value_info("y", f, [2, 3, 4])
    z = helper.make_tensor_value_info("z", f, [2, 3, 4])
    inits = [numpy_helper.from_array(np.array(0.25, "float32"), "slope"),
             numpy_helper.from_array(np.array(1.5, "float32"), "k"),
             numpy_helper.from_array(np.arange(24, dtype="float32").reshape(2, 3, 4) / 24, "w"),
             numpy_helper.from_array(np.ones(3, "float32"), "unused")]
    nodes = [
        helper.make_node("Relu", ["x"], ["a"], name="relu"),
        helper.make_node("Sigmoid", ["a"], ["b"], name="sigmoid"),
        helper.make_node("ReduceMean", ["b"], ["s"], name="mean", keepdims=0),
        helper.make_node("PRelu", ["s", "slope"], ["p"], name="prelu"),
        helper.make_node("Mul", ["p", "k"], ["q"], name="mul"),
        helper.make_node("Tanh", ["x"], ["t"], name="tanh"),
        helper.make_node("Add", ["t", "q"], ["u"], name="add"),
        helper.make_node("Exp", ["u"], ["y"], name="exp"),
        helper.make_node("Mul", ["a", "w"], ["z"], name="scale"),
    ]
    return _model(nodes, [x], [y, z], inits)


def prelu_rank0_model() -> onnx.ModelProto:
    """Two nodes: ReduceMean over every axis of ``x`` (a rank-0 result), then PRelu on it.

    TVM 0.27's importer rejects the PRelu ("the input axis -1 is out of range"): a real importer bug.
    """
    f = TensorProto.FLOAT
    nodes = [helper.make_node("ReduceMean", ["x"], ["s"], name="mean", keepdims=0),
             helper.make_node("PRelu", ["s", "slope"], ["y"], name="prelu")]
    return _model(nodes, [helper.make_tensor_value_info("x", f, [2, 3])], [helper.make_tensor_value_info("y", f, [])],
                  [numpy_helper.from_array(np.array(0.25, "float32"), "slope")])


def chain_model() -> onnx.ModelProto:
    """x -> Relu -> Neg -> Abs -> y on [2, 3]; every node keeps type and shape."""
    f = TensorProto.FLOAT
    x = helper.make_tensor_value_info("x", f, [2, 3])
    y = helper.make_tensor_value_info("y", f, [2, 3])
    nodes = [helper.make_node("Relu", ["x"], ["a"]), helper.make_node("Neg", ["a"], ["b"]),
             helper.make_node("Abs", ["b"], ["y"])]
    return _model(nodes, [x], [y])


def foldable_model() -> onnx.ModelProto:
    """y = x + (2 * 3) on [2, 3] with the product computed by nodes from Constants (folding removes three)."""
    f = TensorProto.FLOAT
    nodes = [helper.make_node("Constant", [], ["a"], value=numpy_helper.from_array(np.array(2.0, "float32"), "av")),
             helper.make_node("Constant", [], ["b"], value=numpy_helper.from_array(np.array(3.0, "float32"), "bv")),
             helper.make_node("Mul", ["a", "b"], ["c"]), helper.make_node("Add", ["x", "c"], ["y"])]
    x, y = helper.make_tensor_value_info("x", f, [2, 3]), helper.make_tensor_value_info("y", f, [2, 3])
    return _model(nodes, [x], [y])


def diamond_model() -> onnx.ModelProto:
    """x -> Exp -> (Relu, Sigmoid -> Neg) -> Add -> y: a branch that only Sigmoid feeds."""
    f = TensorProto.FLOAT
    x = helper.make_tensor_value_info("x", f, [4])
    y = helper.make_tensor_value_info("y", f, [4])
    nodes = [helper.make_node("Exp", ["x"], ["e"]), helper.make_node("Relu", ["e"], ["r"]),
             helper.make_node("Sigmoid", ["e"], ["s"]), helper.make_node("Neg", ["s"], ["n"]),
             helper.make_node("Add", ["r", "n"], ["y"])]
    return _model(nodes, [x], [y])


def has_scalar_prelu(model: onnx.ModelProto) -> bool:
    """A TVM-free stand-in for the loader predicate: a PRelu whose data input has rank 0."""
    inferred = onnx.shape_inference.infer_shapes(model)
    g = inferred.graph
    ranks = {v.name: len(v.type.tensor_type.shape.dim) for v in list(g.value_info) + list(g.input)}
    ranks.update({t.name: len(t.dims) for t in g.initializer})
    return any(n.op_type == "PRelu" and ranks.get(n.input[0], -1) == 0 for n in g.node)
