"""Operator reach by schema-driven insertion (seedzer.mutate.graph.insertion, TVM-free)."""

from __future__ import annotations

import json
import random

import pytest

from seedzer.kernel.graph.case import ModelMutation
from seedzer.kernel.graph.inputs import bounded_inputs
from seedzer.kernel.graph.model_mutations import opset_version
from seedzer.kernel.graph.mutant import apply_model_mutations
from seedzer.kernel.onnx.validity import changed_nodes, model_validity
from seedzer.mutate.graph.insertion import InsertionStats, choose_version, draw_insertion, sample_insertion
from seedzer.mutate.graph.model_mutators import random_feeds
from tests.unit.mutate.graph.test_model_mutators import conv_model, dense_model

REACH = ("TopK", "Gather", "ScatterND", "Conv", "LayerNormalization", "GroupNormalization", "Resize", "Einsum",
         "SequenceAt", "OptionalHasElement", "FastGelu", "Attention", "Range", "NonZero", "QuantizeLinear",
         "CumSum", "Unique", "RoiAlign", "GridSample", "Mod", "BitShift", "Hardmax", "LRN", "OneHot")
"""Operators NNSmith 0.1.0 cannot make (the issue's list), each of a different kind."""


@pytest.mark.parametrize("op", REACH)
def test_an_insertion_of_each_kind_of_operator_is_valid_and_replays(op: str) -> None:
    stats = InsertionStats()
    for seed in range(6):
        model = (conv_model, dense_model)[seed % 2]()
        feeds = random_feeds(model, seed)
        record = sample_insertion(model, [op], random.Random(seed), feeds=feeds, stats=stats)
        if record is None:
            continue
        assert record.kind == "insert" and record.params["op"] == op
        full = {**feeds, **bounded_inputs(record.params["inputs"], 20240601, "random")}
        again = ModelMutation.from_json(json.loads(json.dumps(record.to_json())))
        mutated = apply_model_mutations(model, [again], full)
        assert mutated.SerializeToString() == apply_model_mutations(model, [record], full).SerializeToString()
        assert any(n.op_type == op for n in mutated.graph.node)
        assert model_validity(mutated, full, changed_nodes(model, mutated)).valid
        assert len(mutated.graph.output) > len(model.graph.output)  # the outputs depend on it
        return
    pytest.fail(f"no valid insertion of {op} in 6 tries: {stats.refused.most_common(3)} {dict(stats.undrawable)}")


def test_sampling_is_deterministic_and_weighted() -> None:
    model, feeds = dense_model(), random_feeds(dense_model(), 0)
    one = sample_insertion(model, ["Relu", "TopK", "Gather"], random.Random(5), feeds=feeds)
    two = sample_insertion(model, ["Relu", "TopK", "Gather"], random.Random(5), feeds=feeds)
    assert one is not None and one == two
    only = sample_insertion(model, ["Relu", "TopK", "Gather"], random.Random(6), {"Relu": 0, "TopK": 1, "Gather": 0},
                            feeds)
    assert only is not None and only.params["op"] == "TopK"


def test_operators_no_engine_can_validate_or_that_the_opset_removed_are_not_drawn() -> None:
    model = conv_model()
    rng = random.Random(0)
    assert draw_insertion(model, "AllClassNMS", rng, 24) is None  # no schema in onnx nor onnxruntime
    assert draw_insertion(model, "Constant", rng, 24) is None  # every exported model has it
    assert draw_insertion(model, "Scatter", rng, 24) is None  # removed at opset 11: the pool side's
    assert sample_insertion(model, ["AllClassNMS"], rng) is None


def test_each_version_the_operator_changed_in_is_reachable_upward() -> None:
    picked = {choose_version("TopK", 14, 24, random.Random(seed)) for seed in range(50)}
    assert picked == {14, 24}  # TopK-11 (in force at 14) and TopK-24; older versions would lower the opset
    assert choose_version("LayerNormalization", 14, 24, random.Random(0)) == 17
    assert choose_version("NoSuchOp", 14, 24, random.Random(0)) is None
    for seed in range(20):
        record = draw_insertion(conv_model(), "LayerNormalization", random.Random(seed), 24)
        assert record is not None and record.params.get("opset") == 17
        assert opset_version(apply_model_mutations(conv_model(), [record], random_feeds(conv_model(), 0))) == 17
