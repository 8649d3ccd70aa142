"""Hostile ONNX models of issue 45 (onnx.helper only): what a campaign must count ``invalid`` or
unsupported, never file as a TVM bug. ``benchmarks/hostile_pool.py`` writes them as a seed pool.

* ``huge_reshape``: ``Shape -> Mul -> Reshape`` of 4 elements to 10**10 at run time (onnxruntime
  refuses the run);
* ``string_input`` and ``complex_input``: a ``string`` / ``complex64`` graph input (TVM's importer
  takes neither);
* ``nested_if``: an ``If`` whose branches hold an ``If`` each, on a float input (a valid model TVM
  imports; the Relax IR mutations must keep it well-formed).
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17
IR_VERSION = 8


def _model(graph: onnx.GraphProto) -> onnx.ModelProto:
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
    model.ir_version = IR_VERSION
    return model


def huge_reshape() -> onnx.ModelProto:
    """x[2, 2] reshaped to its own shape times 50000 per axis (10**10 elements) at run time."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 2])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["rows", "cols"])
    scale = numpy_helper.from_array(np.array([50000, 50000], dtype=np.int64), "scale")
    nodes = [helper.make_node("Shape", ["x"], ["s"]),
             helper.make_node("Mul", ["s", "scale"], ["t"]),
             helper.make_node("Reshape", ["x", "t"], ["y"])]
    return _model(helper.make_graph(nodes, "huge_reshape", [x], [y], [scale]))


def typed_input(dtype: int, name: str) -> onnx.ModelProto:
    """An ``Identity`` of one input of ONNX type ``dtype`` (a string or complex tensor)."""
    x = helper.make_tensor_value_info("x", dtype, [2])
    y = helper.make_tensor_value_info("y", dtype, [2])
    return _model(helper.make_graph([helper.make_node("Identity", ["x"], ["y"])], name, [x], [y]))


def _branch(name: str, body: list[onnx.NodeProto], out: str) -> onnx.GraphProto:
    return helper.make_graph(body, name, [], [helper.make_tensor_value_info(out, TensorProto.FLOAT, [2, 2])])


def _inner_if(tag: str, source: str) -> onnx.NodeProto:
    """``If(ReduceSum(source) > 0): Relu(source) else: Neg(source)``, its output ``<tag>_out``."""
    then = _branch(f"{tag}_then", [helper.make_node("Relu", [source], [f"{tag}_r"])], f"{tag}_r")
    other = _branch(f"{tag}_else", [helper.make_node("Neg", [source], [f"{tag}_n"])], f"{tag}_n")
    return helper.make_node("If", [f"{tag}_cond"], [f"{tag}_out"], then_branch=then, else_branch=other)


def _condition(tag: str, source: str) -> list[onnx.NodeProto]:
    return [helper.make_node("ReduceSum", [source], [f"{tag}_sum"], keepdims=0),
            helper.make_node("Greater", [f"{tag}_sum", "zero"], [f"{tag}_cond"])]


def nested_if() -> onnx.ModelProto:
    """``If`` on the sum of x, each branch an ``If`` of its own on x + 1 and x * 2, then an Add."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 2])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 2])
    zero = numpy_helper.from_array(np.array(0.0, dtype=np.float32), "zero")
    one = numpy_helper.from_array(np.array(1.0, dtype=np.float32), "one")
    then = helper.make_graph([helper.make_node("Add", ["x", "one"], ["a"]), *_condition("a", "a"),
                              _inner_if("a", "a")], "outer_then", [],
                             [helper.make_tensor_value_info("a_out", TensorProto.FLOAT, [2, 2])])
    other = helper.make_graph([helper.make_node("Mul", ["x", "x"], ["b"]), *_condition("b", "b"),
                               _inner_if("b", "b")], "outer_else", [],
                              [helper.make_tensor_value_info("b_out", TensorProto.FLOAT, [2, 2])])
    nodes = [*_condition("x", "x"),
             helper.make_node("If", ["x_cond"], ["o"], then_branch=then, else_branch=other),
             helper.make_node("Add", ["o", "x"], ["y"])]
    return _model(helper.make_graph(nodes, "nested_if", [x], [y], [zero, one]))


def hostile_models() -> dict[str, onnx.ModelProto]:
    """Every hostile model by name (see the module docstring)."""
    return {"huge_reshape": huge_reshape(), "string_input": typed_input(TensorProto.STRING, "string_input"),
            "complex_input": typed_input(TensorProto.COMPLEX64, "complex_input"), "nested_if": nested_if()}
