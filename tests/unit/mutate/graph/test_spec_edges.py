"""The spec-edge table (TVM-free): for every operator it lists, the changes it proposes for a node are
those the per-operator ladder it replaced proposed, draw for draw.

``tests/fixtures/spec_edges.json`` was recorded once by running the ladder
(``seedzer/mutate/graph/model_mutators.py:_node_edges`` before the table) on :func:`cases` with
``random.Random(<case index>)``: each case's changes and the rng's next draw after them.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from seedzer.kernel.graph.model_mutations import TensorType
from seedzer.mutate.graph.spec_edges import ANY_OPERATOR, EDGE_RULES, node_edges

EXPECTED = Path(__file__).resolve().parents[3] / "fixtures" / "spec_edges.json"
F, H, I64 = TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.INT64

Input = tuple[tuple[int, ...] | None, Any, int]
"""A node input: its shape (None: unknown), its constant value (None: not a constant), its element type."""


def case(op: str, inputs: list[Input], out_shape: tuple[int, ...] | None = None, constant_node: bool = False,
         **attrs: Any) -> tuple[onnx.GraphProto, onnx.NodeProto, dict[str, TensorType]]:
    """One ``op`` node with ``inputs`` (constants as initializers, or Constant nodes), its graph and types."""
    names = [f"in{k}" if spec is not None else "" for k, spec in enumerate(inputs)]
    node = helper.make_node(op, names, ["out"], **attrs)
    inits, nodes, types = [], [node], {}
    for name, (shape, value, dtype) in zip(names, inputs, strict=True):
        types[name] = (dtype, shape)
        if value is None:
            continue
        tensor = numpy_helper.from_array(np.asarray(value, dtype=helper.tensor_dtype_to_np_dtype(dtype)), name)
        if constant_node:
            nodes.insert(0, helper.make_node("Constant", [], [name], value=tensor))
        else:
            inits.append(tensor)
    types["out"] = (inputs[0][2] if inputs else F, out_shape)
    return helper.make_graph(nodes, "g", [], [], inits), node, types


def _x(*shape: int, dtype: int = F) -> Input:
    return shape, None, dtype


def _c(value: Any, dtype: int = I64) -> Input:
    return np.asarray(value).shape, value, dtype


def cases() -> list[tuple[onnx.GraphProto, onnx.NodeProto, dict[str, TensorType]]]:
    """Nodes of every operator the table lists, in the forms its rules tell apart."""
    reduces = ["ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
               "ReduceLogSumExp", "ReduceSumSquare", "ReduceLogSum"]
    broadcasts = ["Add", "Sub", "Mul", "Div", "Pow", "Min", "Max", "Sum", "Mean", "PRelu", "Equal", "Less",
                  "Greater", "LessOrEqual", "GreaterOrEqual", "And", "Or", "Xor", "Mod", "MatMul"]
    out = [
        case("Concat", [_x(2, 3), _x(2, 3)], axis=0),
        case("Concat", [_x(2, 3), _x(2, 3)], axis=-1),
        case("Relu", [_x(2, 3)]),
        case("Relu", []),
    ]
    for op in ("Softmax", "LogSoftmax", "Hardmax", "Flatten", "ArgMax", "ArgMin"):
        out += [case(op, [_x(2, 3, 4)], axis=1), case(op, [_x(2, 3)]), case(op, [((), None, F)])]
    out += [case("CumSum", [_x(4, 5), _c(1)]), case("CumSum", [(None, None, F), _c(0)])]
    for op in reduces:
        out += [case(op, [_x(2, 3, 4), _c([1, -1])], keepdims=0), case(op, [_x(2, 3, 4)], axes=[0, 2]),
                case(op, [_x(2, 3, 4)], keepdims=1), case(op, [_x(2, 3), (None, None, I64)])]
    out += [
        case("Slice", [_x(4, 5, 6), _c([1, 0]), _c([3, 4]), _c([0, 1])]),
        case("Slice", [_x(4, 5, 6), _c([-2]), _c([6])]),
        case("Slice", [_x(4, 5, 6), _c([1, 2]), _c([3, 5]), _c([2, 0]), _c([1, 2])], constant_node=True),
        case("Slice", [_x(4, 5), (None, None, I64), _c([3])]),
        case("Resize", [_x(1, 3, 8, 8), _c([], F), _c([1.0, 1.0, 2.0, 2.0], F)], mode="nearest"),
        case("Resize", [_x(1, 3, 8, 8), _c([], F), _c([], F), _c([1, 3, 16, 16])]),
        case("Resize", [_x(1, 3, 8, 8, 8), (None, None, F), _c([1.0, 1.0, 2.0, 0.5, 1.5], F)]),
        case("Resize", [(None, None, F), _c([], F), _c([1.0, 2.0], F)]),
        case("Pad", [_x(1, 3, 4, 4), _c([0, 0, 1, 1, 0, 0, 1, 1])], mode="constant"),
        case("Pad", [_x(2, 3), (None, None, I64)]),
        case("Clip", [_x(3, 4), _c(-1.0, F), _c(1.0, F)]),
        case("Clip", [_x(3, 4, dtype=H), _c(-1.0, H), _c(1.0, H)]),
        case("Clip", [_x(3, 4)], constant_node=True),
        case("Gather", [_x(5, 6), _c([1, -3])], axis=1),
        case("Gather", [_x(5, 6), _c([2])]),
        case("Gather", [_x(5, 6), (None, None, I64)]),
        case("Where", [_c([True, False], TensorProto.BOOL), _x(2, 2), _c([[1.0, 2.0], [3.0, 4.0]], F)]),
        case("Trilu", [_x(4, 4), _c(1)], upper=0),
        case("Trilu", [_x(4, 4)]),
        case("Transpose", [_x(2, 3, 4)], perm=[2, 0, 1]),
        case("Transpose", [(None, None, F)]),
        case("Cast", [_x(2, 3)], to=TensorProto.INT32),
        case("Squeeze", [_x(1, 3, 1)], axes=[0, 2]),
        case("Squeeze", [_x(1, 3, 1), _c([0, -1])]),
        case("Squeeze", [_x(1, 3, 1)]),
        case("Unsqueeze", [_x(3, 4)], (1, 3, 4, 1), axes=[0, 3]),
        case("Unsqueeze", [_x(3, 4), _c([0])], (1, 3, 4)),
        case("AveragePool", [_x(1, 3, 8, 8)], kernel_shape=[2, 2], pads=[0, 0, 1, 1], count_include_pad=1),
        case("MaxPool", [_x(1, 3, 8, 8)], kernel_shape=[3, 3], ceil_mode=1),
        case("Conv", [_x(1, 3, 8, 8), _c(np.ones((4, 3, 3, 3)), F)], kernel_shape=[3, 3]),
        case("Gemm", [_x(2, 5), _c(np.ones((5, 3)), F), _c(np.ones(3), F)], transA=0),
        case("Reshape", [_x(2, 3, 4), _c([2, 12])]),
        case("Reshape", [_x(2, 3, 4), _c([6, 4])]),
        case("Reshape", [_x(2, 3, 4), _c(np.zeros(0, np.int64))]),
        case("Expand", [_x(3, 1), _c([2, 3, 4])]),
        case("Expand", [_x(3, 1), (None, None, I64)]),
    ]
    for op, alphas in (("LeakyRelu", {"alpha": 0.1}), ("Elu", {}), ("Celu", {"alpha": 2.0}),
                       ("ThresholdedRelu", {}), ("HardSigmoid", {"alpha": 0.3, "beta": 0.6}), ("Selu", {})):
        out.append(case(op, [_x(2, 3)], **alphas))
    for op in broadcasts:
        out += [case(op, [_x(2, 3), _c([1.0, 2.0, 3.0], F)]), case(op, [_x(2, 3), _c([[4.0], [5.0]], F)]),
                case(op, [_x(2, 3), _x(2, 3)])]
    return out


def _recorded(edges: list[list[dict[str, Any]]], rng: random.Random) -> dict[str, Any]:
    return json.loads(json.dumps({"edges": edges, "next_draw": rng.random()}))


def test_the_cases_cover_every_operator_of_the_table() -> None:
    covered = {node.op_type for _, node, _ in cases()}
    assert set(EDGE_RULES) <= covered
    assert ANY_OPERATOR  # and the rules every operator gets (a node of an operator not listed)


def test_every_operator_gets_the_changes_the_ladder_gave_draw_for_draw() -> None:
    expected = json.loads(EXPECTED.read_text())
    found = []
    for k, (graph, node, types) in enumerate(cases()):
        rng = random.Random(k)
        found.append(_recorded(node_edges(graph, node, types, rng), rng))
    assert len(found) == len(expected)
    for k, (got, want) in enumerate(zip(found, expected, strict=True)):
        assert got == want, (k, cases()[k][1].op_type)
