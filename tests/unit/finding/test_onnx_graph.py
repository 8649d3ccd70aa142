"""Graph surgery for ONNX reduction on small hand-built graphs (no TVM)."""

from __future__ import annotations

import numpy as np
import onnx
from onnx.reference import ReferenceEvaluator

from seedzer.finding.onnx_graph import (
    Cut,
    GraphIndex,
    export,
    initializer_to_input,
    node_count,
    op_types,
)
from tests.triage_models import chain_model, diamond_model, prelu_scalar_model


def _inputs(model: onnx.ModelProto) -> dict[str, list[int]]:
    return {i.name: [d.dim_value for d in i.type.tensor_type.shape.dim] for i in model.graph.input}


def test_removing_a_unary_node_rewires_its_reader_to_its_input() -> None:
    idx = GraphIndex(chain_model())
    cand = idx.candidate({0, 2})  # drop Neg
    assert cand is not None
    assert op_types(cand.model) == ["Relu", "Abs"]
    assert list(cand.model.graph.node[1].input) == ["a"]
    assert cand.rewired == 1 and cand.cut == 0
    assert [i.name for i in cand.model.graph.input] == ["x"]


def test_cut_policy_turns_the_removed_value_into_a_graph_input() -> None:
    idx = GraphIndex(chain_model())
    cand = idx.candidate({2}, Cut.INPUT)  # only Abs, reading the cut value b
    assert cand is not None
    assert _inputs(cand.model) == {"b": [2, 3]}
    assert cand.cut == 1
    onnx.checker.check_model(cand.model, full_check=True)


def test_a_value_of_another_shape_is_cut_not_rewired() -> None:
    model = prelu_scalar_model()
    idx = GraphIndex(model)
    prelu = [n.name for n in model.graph.node].index("prelu")
    cand = idx.candidate({prelu})
    assert cand is not None
    assert op_types(cand.model) == ["PRelu"]
    assert _inputs(cand.model) == {"s": []}  # the rank-0 mean becomes an input of the same type
    assert [o.name for o in cand.model.graph.output] == ["p"]  # exposed: nothing reads it any more
    assert cand.exposed == 1
    assert sorted(t.name for t in cand.model.graph.initializer) == ["slope"]  # unused ones dropped


def test_orphaned_producers_are_exposed_as_outputs_and_run() -> None:
    model = prelu_scalar_model()
    idx = GraphIndex(model)
    names = [n.name for n in model.graph.node]
    keep = {names.index(n) for n in ("relu", "sigmoid")}
    cand = idx.candidate(keep)
    assert cand is not None
    # z's producer (scale: a * w) is gone: z is rewired to a, its input of the same type; b is exposed
    assert [o.name for o in cand.model.graph.output] == ["a", "b"]
    assert cand.rewired == 1 and cand.exposed == 1

    out = ReferenceEvaluator(cand.model).run(None, {"x": np.ones((2, 3, 4), "float32")})
    assert [np.asarray(o).shape for o in out] == [(2, 3, 4), (2, 3, 4)]


def test_original_outputs_survive_through_a_rewire() -> None:
    idx = GraphIndex(chain_model())
    cand = idx.candidate({0, 1})  # drop Abs, the producer of y
    assert cand is not None
    assert [o.name for o in cand.model.graph.output] == ["b"]


def test_empty_or_output_less_candidates_are_refused() -> None:
    idx = GraphIndex(chain_model())
    assert idx.candidate(set()) is None


def test_sub_graph_cones() -> None:
    idx = GraphIndex(diamond_model())  # 0 Exp, 1 Relu, 2 Sigmoid, 3 Neg, 4 Add
    everything = idx.all_nodes()
    assert idx.exclusive_ancestors(everything, 3) == {2, 3}  # Sigmoid feeds only Neg
    assert idx.exclusive_ancestors(everything, 4) == everything
    assert idx.dominated(everything, 2) == {2, 3}
    assert idx.dominated(everything, 0) == everything


def test_initializer_to_input_and_export() -> None:
    model = prelu_scalar_model()
    smaller = initializer_to_input(model, "w")
    assert smaller is not None
    assert "w" in _inputs(smaller) and "w" not in {t.name for t in smaller.graph.initializer}
    assert initializer_to_input(model, "nope") is None
    model.ir_version = 13
    assert onnx.load_model_from_string(export(model)).ir_version == 10
    assert node_count(model) == 9
