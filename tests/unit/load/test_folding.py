"""Unit tests of ONNX constant folding (onnx + numpy only, no TVM)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

from seedzer.load.folding import FoldError, fold_constants


def _const(name: str, value: np.ndarray) -> onnx.NodeProto:
    return helper.make_node("Constant", [], [name], value=numpy_helper.from_array(value, name + "_v"))


def _model(nodes: Sequence[onnx.NodeProto], inputs: Sequence[onnx.ValueInfoProto],
           outputs: Sequence[onnx.ValueInfoProto], inits: Sequence[onnx.TensorProto] = (), opset: int = 17
           ) -> onnx.ModelProto:
    graph = helper.make_graph(list(nodes), "g", list(inputs), list(outputs), list(inits))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=8)
    onnx.checker.check_model(model)
    return model


def pad_subgraph_model() -> onnx.ModelProto:
    """Pad amounts computed by a chain of constant nodes, the way torch exports F.pad."""
    nodes = [
        _const("p", np.array([1, 2, 0, 0, 0, 0], np.int64)),
        _const("shape2", np.array([-1, 2], np.int64)),
        helper.make_node("Reshape", ["p", "shape2"], ["p2"]),
        _const("st", np.array([-1], np.int64)),
        _const("en", np.array([-(2**62)], np.int64)),
        _const("ax", np.array([0], np.int64)),
        _const("sp", np.array([-1], np.int64)),
        helper.make_node("Slice", ["p2", "st", "en", "ax", "sp"], ["p3"]),
        helper.make_node("Transpose", ["p3"], ["p4"], perm=[1, 0]),
        _const("flat", np.array([-1], np.int64)),
        helper.make_node("Reshape", ["p4", "flat"], ["p5"]),
        helper.make_node("Cast", ["p5"], ["pads"], to=TensorProto.INT64),
        helper.make_node("Pad", ["x", "pads"], ["y"], mode="constant"),
    ]
    return _model(
        nodes,
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3, 7])],
    )


def _run(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    return [np.asarray(v) for v in ReferenceEvaluator(model).run(None, feeds)]


def test_constant_pad_subgraph_becomes_one_initializer() -> None:
    model = pad_subgraph_model()
    res = fold_constants(model)
    assert res.folded_nodes == 12
    assert [n.op_type for n in res.model.graph.node] == ["Pad"]
    inits = {t.name: numpy_helper.to_array(t) for t in res.model.graph.initializer}
    assert inits["pads"].dtype == np.int64
    onnx.checker.check_model(res.model)
    x = np.random.default_rng(0).standard_normal((2, 3, 4)).astype(np.float32)
    np.testing.assert_array_equal(_run(model, {"x": x})[0], _run(res.model, {"x": x})[0])
    assert len(model.graph.node) == 13  # the input model is not modified


def test_nothing_to_fold_returns_the_model_unchanged() -> None:
    model = _model(
        [helper.make_node("Relu", ["x"], ["y"])],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3])],
    )
    res = fold_constants(model)
    assert res.folded_nodes == 0
    assert res.model is model


def test_node_the_reference_cannot_evaluate_is_kept_with_its_consumers() -> None:
    # onnx.reference's Pad rejects negative pads; the node and its consumer must survive unfolded.
    data = numpy_helper.from_array(np.arange(12, dtype=np.float32).reshape(3, 4), "data")
    pads = numpy_helper.from_array(np.array([0, -1, 0, 0], np.int64), "pads")
    model = _model(
        [
            helper.make_node("Pad", ["data", "pads"], ["cut"], mode="edge"),
            helper.make_node("Neg", ["cut"], ["neg"]),
            helper.make_node("Add", ["x", "neg"], ["y"]),
        ],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 3])],
        [data, pads],
    )
    res = fold_constants(model)
    assert res.folded_nodes == 0
    assert [n.op_type for n in res.model.graph.node] == ["Pad", "Neg", "Add"]


def test_random_ops_are_never_folded() -> None:
    model = _model(
        [
            helper.make_node("RandomUniform", [], ["r"], shape=[3], dtype=TensorProto.FLOAT),
            helper.make_node("Add", ["x", "r"], ["y"]),
        ],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3])],
    )
    assert fold_constants(model).folded_nodes == 0


def test_static_shape_folds_and_constant_if_is_inlined() -> None:
    # torch exports squeeze(dim) of a possibly-1 dimension as If(Equal(Shape(x)[d], 1)).
    then_g = helper.make_graph(
        [helper.make_node("Squeeze", ["x", "axes"], ["t_out"])],
        "then",
        [],
        [helper.make_tensor_value_info("t_out", TensorProto.FLOAT, ["a", "b"])],
    )
    else_g = helper.make_graph(
        [helper.make_node("Identity", ["x"], ["e_out"])],
        "else",
        [],
        [helper.make_tensor_value_info("e_out", TensorProto.FLOAT, ["a", "b", "c"])],
    )
    nodes = [
        helper.make_node("Shape", ["x"], ["shape"]),
        helper.make_node("Gather", ["shape", "idx"], ["dim"], axis=0),
        helper.make_node("Equal", ["dim", "one"], ["cond"]),
        helper.make_node("If", ["cond"], ["sq"], then_branch=then_g, else_branch=else_g),
        helper.make_node("Relu", ["sq"], ["y"]),
    ]
    inits = [
        numpy_helper.from_array(np.array(1, np.int64), "idx"),
        numpy_helper.from_array(np.array(1, np.int64), "one"),
        numpy_helper.from_array(np.array([1], np.int64), "axes"),
    ]
    model = _model(
        nodes,
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 1, 5])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["a", "b"])],
        inits,
    )
    res = fold_constants(model, input_shapes={"x": [2, 1, 5]})
    ops = [n.op_type for n in res.model.graph.node]
    assert "If" not in ops and "Shape" not in ops
    assert ops == ["Squeeze", "Identity", "Relu"]
    x = np.random.default_rng(1).standard_normal((2, 1, 5)).astype(np.float32)
    out = _run(res.model, {"x": x})[0]
    np.testing.assert_array_equal(out, np.maximum(x.reshape(2, 5), 0))
    assert [d.dim_value for d in res.model.graph.input[0].type.tensor_type.shape.dim] == [2, 1, 5]


def test_dead_nodes_are_dropped_after_folding() -> None:
    model = _model(
        [
            helper.make_node("Shape", ["x"], ["s"]),
            helper.make_node("Cast", ["s"], ["sf"], to=TensorProto.FLOAT),
            helper.make_node("Relu", ["x"], ["unused"]),
            helper.make_node("Add", ["x", "sf"], ["y"]),
        ],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])],
    )
    res = fold_constants(model)
    assert [n.op_type for n in res.model.graph.node] == ["Add"]


def test_oversized_fold_raises() -> None:
    model = _model(
        [
            helper.make_node(
                "ConstantOfShape", ["shape"], ["big"], value=numpy_helper.from_array(np.array([1.0], np.float32))
            ),
            helper.make_node("Add", ["x", "big"], ["y"]),
        ],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [64, 64])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [64, 64])],
        [numpy_helper.from_array(np.array([64, 64], np.int64), "shape")],
    )
    with pytest.raises(FoldError, match="limit"):
        fold_constants(model, max_bytes=1024)
    assert fold_constants(model).folded_nodes == 1
