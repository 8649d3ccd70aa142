"""ddmin-style ONNX reduction against TVM-free predicates."""

from __future__ import annotations

import onnx

from seedzer.finding.onnx_graph import op_types
from seedzer.finding.onnx_reduce import OnnxReducer
from tests.triage_models import chain_model, has_scalar_prelu, prelu_scalar_model


def test_reduces_to_the_scalar_prelu_alone() -> None:
    seen: list[int] = []
    reducer = OnnxReducer(has_scalar_prelu, seconds=60, on_progress=lambda m: seen.append(len(m.graph.node)))
    res = reducer.reduce(prelu_scalar_model())
    assert res.reproduced and res.complete
    assert (res.original_nodes, res.nodes) == (9, 1)
    assert op_types(res.model) == ["PRelu"]
    assert has_scalar_prelu(res.model)
    onnx.checker.check_model(res.model, full_check=True)
    assert seen and seen[-1] == 1 and seen == sorted(seen, reverse=True)
    assert res.evaluations < 60


def test_large_initializers_become_inputs() -> None:
    def needs_scale(model: onnx.ModelProto) -> bool:
        return any(n.name == "scale" for n in model.graph.node)

    res = OnnxReducer(needs_scale, seconds=60).reduce(prelu_scalar_model())
    assert op_types(res.model) == ["Mul"]
    assert not res.model.graph.initializer  # w (24 elements) turned into an input
    assert {i.name for i in res.model.graph.input} == {"x", "w"}  # a rewired to x (Relu removed)
    assert res.phases.get("initializers-to-inputs") == 1
    stats = res.stats["initializers-to-inputs"]
    assert (stats.calls, stats.successes, stats.size_removed) == (1, 1, {"nodes": 0, "initializer elements": 24})


def test_passes_are_named_and_counted_in_order() -> None:
    res = OnnxReducer(has_scalar_prelu, seconds=60).reduce(prelu_scalar_model())
    assert list(res.stats) == ["ddmin-nodes", "subgraphs", "initializers-to-inputs"]
    assert all(s.calls == 1 for s in res.stats.values())  # one round: the node passes start from the original graph
    ddmin = res.stats["ddmin-nodes"]
    assert ddmin.successes == res.phases["ddmin-nodes"] and ddmin.size_removed["nodes"] == 8
    assert sum(s.tests for s in res.stats.values()) == res.evaluations - 1  # and the confirming load


def test_a_resumed_reduction_adds_to_the_earlier_stats() -> None:
    first = OnnxReducer(has_scalar_prelu, seconds=60).reduce(prelu_scalar_model())
    again = OnnxReducer(has_scalar_prelu, seconds=60, stats=first.stats).reduce(first.model)
    assert again.stats["ddmin-nodes"].calls == 2 and first.stats["ddmin-nodes"].calls == 1
    assert again.stats["ddmin-nodes"].successes == first.stats["ddmin-nodes"].successes


def test_a_predicate_that_does_not_hold_reduces_nothing() -> None:
    res = OnnxReducer(lambda m: False, seconds=60).reduce(chain_model())
    assert not res.reproduced and not res.complete
    assert res.nodes == 3 and res.evaluations == 1


def test_deadline_stops_with_the_best_so_far() -> None:
    ticks = iter(range(1000))
    res = OnnxReducer(has_scalar_prelu, seconds=6, clock=lambda: float(next(ticks))).reduce(prelu_scalar_model())
    assert not res.complete
    assert has_scalar_prelu(res.model)
    assert res.evaluations <= 6
    assert res.nodes < res.original_nodes  # what the reduction accepted before the deadline is kept


def test_predicate_calls_are_memoized() -> None:
    calls: list[bytes] = []

    def pred(model: onnx.ModelProto) -> bool:
        calls.append(model.SerializeToString(deterministic=True))
        return has_scalar_prelu(model)

    OnnxReducer(pred, seconds=60).reduce(prelu_scalar_model())
    assert len(calls) == len(set(calls))
