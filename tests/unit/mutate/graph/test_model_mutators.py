"""Unit tests of the model-mutation samplers (seedzer.mutate.graph.model_mutators) and records (TVM-free)."""

from __future__ import annotations

import json
import random

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from seedzer.kernel.graph.case import ModelMutation
from seedzer.mutate.graph.model_mutators import (
    GARBAGE_OPS,
    MODEL_MUTATION_KINDS,
    edge_candidates,
    random_feeds,
    sample_model_mutation,
    tensor_types,
)


def _init(name: str, value: object, dtype: object = np.float32) -> onnx.TensorProto:
    return numpy_helper.from_array(np.asarray(value, dtype=dtype), name)


def conv_model() -> onnx.ModelProto:
    """x[1,3,4,4] -> Conv -> LeakyRelu -> Add(bias[4]) -> y; ReduceSum(axes=[1]) -> z; Slice -> s."""
    rng = np.random.default_rng(0)
    nodes = [
        helper.make_node("Conv", ["x", "w"], ["c"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("LeakyRelu", ["c"], ["l"], alpha=0.1),
        helper.make_node("Add", ["l", "b"], ["y"]),
        helper.make_node("ReduceSum", ["l", "axes"], ["z"], keepdims=0),
        helper.make_node("Slice", ["x", "starts", "ends", "saxes"], ["s"]),
        helper.make_node("Clip", ["s", "lo", "hi"], ["t"]),
    ]
    graph = helper.make_graph(
        nodes, "conv", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 4, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 3, 4, 4]),
         helper.make_tensor_value_info("z", TensorProto.FLOAT, [1, 4, 4]),
         helper.make_tensor_value_info("t", TensorProto.FLOAT, [1, 3, 2, 4])],
        [_init("w", rng.uniform(-1, 1, (3, 3, 3, 3))), _init("b", rng.uniform(-1, 1, (4,))),
         _init("axes", [1], np.int64), _init("starts", [1], np.int64), _init("ends", [3], np.int64),
         _init("saxes", [2], np.int64), _init("lo", -0.5), _init("hi", 0.5)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
    model.ir_version = 8
    return model


def dense_model() -> onnx.ModelProto:
    """a[2,5] -> MatMul(w[5,3]) -> Softmax -> Mul(a2) -> out; Gemm branch; integer Gather branch."""
    rng = np.random.default_rng(1)
    nodes = [
        helper.make_node("MatMul", ["a", "w"], ["m"]),
        helper.make_node("Softmax", ["m"], ["sm"], axis=1),
        helper.make_node("Mul", ["sm", "k"], ["out"]),
        helper.make_node("Gemm", ["a", "g", "gb"], ["gm"], transB=1),
        helper.make_node("Gather", ["gm", "idx"], ["ga"], axis=1),
        helper.make_node("ReduceMax", ["ga"], ["rm"], axes=[0], keepdims=1),
    ]
    graph = helper.make_graph(
        nodes, "dense", [helper.make_tensor_value_info("a", TensorProto.FLOAT, [2, 5])],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, [2, 3]),
         helper.make_tensor_value_info("rm", TensorProto.FLOAT, [1, 2])],
        [_init("w", rng.uniform(-1, 1, (5, 3))), _init("k", rng.uniform(-1, 1, (1, 3))),
         _init("g", rng.uniform(-1, 1, (4, 5))), _init("gb", rng.uniform(-1, 1, (4,))),
         _init("idx", [0, 3], np.int64)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
    model.ir_version = 8
    return model


SMALL_MODELS = (conv_model, dense_model)


def test_record_json_round_trip_and_label() -> None:
    record = ModelMutation("uoc", "l", ("x", "b"), ("Conv", "Add"), {"k": [1, 2]}, 7)
    data = json.loads(json.dumps(record.to_json()))
    assert ModelMutation.from_json(data) == ModelMutation("uoc", "l", ("x", "b"), ("Conv", "Add"), {"k": [1, 2]}, 7)
    assert record.label().startswith("uoc@l(x,b)[Conv+Add]")
    edge = ModelMutation("edge", "c", params={"op": "LeakyRelu", "changes": [{"attr": "alpha", "value": 0.0}]})
    assert edge.label() == "edge@c[LeakyRelu: alpha=0.0]"
    assert MODEL_MUTATION_KINDS == ("uoc", "pioc", "edge", "insert")


@pytest.mark.parametrize("make", SMALL_MODELS)
@pytest.mark.parametrize("strategy", ["uoc", "pioc"])
def test_conditions_fit_the_model(make: object, strategy: str) -> None:
    model = make()  # type: ignore[operator]
    types = tensor_types(model)
    for seed in range(15):
        record = sample_model_mutation(model, strategy, random.Random(seed))
        assert record is not None and record.kind == strategy
        assert types[record.target][0] == TensorProto.FLOAT
        assert 1 <= len(record.garbage) <= 3 and set(record.garbage) <= set(GARBAGE_OPS)
        if "Conv" in record.garbage:
            shapes = [types[n][1] for n in (record.target, *record.operands)]
            assert any(s is not None and len(s) == 4 for s in shapes)
        if strategy == "uoc":
            i, j = record.operands
            assert np.broadcast_shapes(types[i][1], types[j][1]) is not None
            assert record.target not in ("x", "a")
        else:
            assert record.operands == ()


@pytest.mark.parametrize("make", SMALL_MODELS)
def test_sampling_is_deterministic(make: object) -> None:
    model = make()  # type: ignore[operator]
    for strategy in ("uoc", "pioc"):
        first = [sample_model_mutation(model, strategy, random.Random(s)) for s in range(5)]
        assert first == [sample_model_mutation(model, strategy, random.Random(s)) for s in range(5)]
    assert edge_candidates(model, random.Random(3)) == edge_candidates(model, random.Random(3))


def test_uoc_operands_never_depend_on_the_target() -> None:
    model = conv_model()
    for seed in range(40):
        record = sample_model_mutation(model, "uoc", random.Random(seed))
        assert record is not None
        if record.target == "c":
            assert not {"l", "y", "z"} & set(record.operands)


def test_edge_table_covers_the_ops() -> None:
    found = {(m.params["op"], str(c.get("attr", c.get("input"))))
             for model in (conv_model(), dense_model()) for m in edge_candidates(model, random.Random(0))
             for c in m.params["changes"]}
    for expected in [("LeakyRelu", "alpha"), ("ReduceSum", "keepdims"), ("ReduceSum", "1"), ("Slice", "1"),
                     ("Slice", "4"), ("Clip", "1"), ("Softmax", "axis"), ("Gather", "1"), ("Gemm", "alpha"),
                     ("Add", "1"), ("ReduceMax", "axes"), ("Mul", "1")]:
        assert expected in found
    for m in edge_candidates(conv_model(), random.Random(0)):
        json.dumps(m.to_json())  # every record is JSON-able


def test_random_feeds_match_the_inputs() -> None:
    feeds = random_feeds(dense_model(), 5)
    assert feeds["a"].shape == (2, 5) and feeds["a"].dtype == np.float32
    assert np.array_equal(feeds["a"], random_feeds(dense_model(), 5)["a"])


def test_unknown_strategy_raises() -> None:
    with pytest.raises(ValueError, match="unknown model mutation strategy"):
        sample_model_mutation(conv_model(), "bogus", random.Random(0))
