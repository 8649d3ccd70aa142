"""Pools that carry the operators NNSmith alone cannot make (seedzer.generate.reach, TVM-free)."""

from __future__ import annotations

import random

from seedzer.generate.insert_options import InsertOptions
from seedzer.generate.reach import insert_operators, old_opset_pool_model, wants_old_opset
from seedzer.kernel.graph.model_mutations import opset_version
from seedzer.kernel.onnx.validity import model_validity
from seedzer.mutate.graph.model_mutators import random_feeds
from tests.unit.mutate.graph.test_model_mutators import conv_model


def test_a_generated_model_gets_valid_insertions_and_keeps_its_inputs() -> None:
    model = conv_model()
    feeds = random_feeds(model, 0)
    grown = insert_operators(model, feeds, 4, random.Random(1))
    assert [i.name for i in grown.graph.input] == [i.name for i in model.graph.input]
    assert len(grown.graph.node) > len(model.graph.node) and len(grown.graph.output) > len(model.graph.output)
    assert model_validity(grown, feeds).valid


def test_old_opset_models_reach_operators_the_specification_removed() -> None:
    made = set()
    for seed in range(12):
        model, feeds = old_opset_pool_model(InsertOptions(3, 1.0), random.Random(seed))
        assert opset_version(model) <= 13 and model_validity(model, feeds).valid
        made |= {n.op_type for n in model.graph.node}
    assert made & {"Scatter", "Upsample"}


def test_the_old_opset_draw_is_the_seeds_alone() -> None:
    assert wants_old_opset(InsertOptions(2, 0.5), 7)[0] == wants_old_opset(InsertOptions(2, 0.5), 7)[0]
    assert not any(wants_old_opset(InsertOptions(0, 0.0), s)[0] for s in range(20))
    assert all(wants_old_opset(InsertOptions(2, 1.0), s)[0] for s in range(20))


def test_the_insertions_are_the_seeds_alone_whatever_was_made_before() -> None:
    model = conv_model()
    feeds = random_feeds(model, 0)
    first = insert_operators(model, feeds, 2, random.Random(3))
    insert_operators(model, feeds, 3, random.Random(4))  # another attempt in the same worker
    assert insert_operators(model, feeds, 2, random.Random(3)).SerializeToString() == first.SerializeToString()


def test_learned_weights_scale_the_insertion_draw() -> None:
    from seedzer.generate.reach import PRESENT_WEIGHT, _weights

    model = conv_model()
    present = model.graph.node[0].op_type
    weights = _weights(model, [present, "Gelu", "Erf"], {"Gelu": 1.8, present: 0.5})
    assert weights == {present: PRESENT_WEIGHT * 0.5, "Gelu": 1.8, "Erf": 1.0}


def test_insert_weights_stay_out_of_a_pools_identity_while_empty() -> None:
    from seedzer.generate.options import GenerationOptions, generation_from_dict

    plain = GenerationOptions(insert=InsertOptions(2))
    assert "weights" not in plain.to_dict()["insert"]
    learned = GenerationOptions(insert=InsertOptions(2, 0.0, {"Gelu": 1.5}))
    assert generation_from_dict(learned.to_dict()) == learned
