import pytest

from seedzer.levels.graph.entry import GraphSeed
from seedzer.seed import JointSeed, PassSpec, drop_passes, passes_from_json, passes_to_json


def test_passes_round_trip_through_json() -> None:
    seq = [PassSpec("tirx.UnrollLoop", (("auto_max_step", 16),)), PassSpec("tirx.StmtSimplify")]
    assert passes_from_json(passes_to_json(seq)) == seq


def test_drop_passes_keeps_order_and_changes_identity() -> None:
    seq = [PassSpec("a"), PassSpec("b"), PassSpec("c"), PassSpec("d")]
    assert drop_passes(seq, [1, 3]) == [PassSpec("a"), PassSpec("c")]
    assert drop_passes(seq, []) == seq
    assert JointSeed("x", drop_passes(seq, [0])).seed_id != JointSeed("x", seq).seed_id


def test_graph_seed_round_trips() -> None:
    seed = GraphSeed("/pool/model_000001.onnx", (("x", "float32", (1, 3, 8, 8)), ("i", "int64", (4,))))
    text = seed.to_text()
    assert GraphSeed.from_text(text) == seed
    assert text.startswith('{"level": "graph"')  # the document format older campaigns' entries have


@pytest.mark.parametrize("text", ["", "{", '{"level": "graph"}', '{"level": "graph", "model": "m", "specs": 3}'])
def test_a_damaged_graph_seed_is_a_value_error(text: str) -> None:
    with pytest.raises(ValueError, match="not a graph seed document"):
        GraphSeed.from_text(text)


def test_a_graph_seed_carries_its_model_mutations_and_an_unmutated_one_keeps_its_text() -> None:
    from seedzer.kernel.graph.case import ModelMutation

    plain = GraphSeed("/pool/m.onnx", (("x", "float32", (2,)),))
    assert "mutations" not in plain.to_text()  # entries written before model mutations keep their ids
    grown = GraphSeed(plain.model, plain.specs, (ModelMutation("uoc", "t", ("a", "b"), ("Conv", "Add"), seed=4),
                                                 ModelMutation("edge", "y", params={"op": "Clip", "changes": []})))
    assert GraphSeed.from_text(grown.to_text()) == grown


def test_a_graph_seed_carries_its_input_mode_and_a_random_one_keeps_its_text() -> None:
    from seedzer.kernel.graph.case import GRAPH_INPUT_SEED

    plain = GraphSeed("/pool/m.onnx", (("x", "float32", (2,)),))
    assert "inputs" not in plain.to_text() and plain.input_seed == GRAPH_INPUT_SEED
    special = GraphSeed(plain.model, plain.specs, (), "special", 77)
    assert GraphSeed.from_text(special.to_text()) == special
    with pytest.raises(ValueError, match="unknown input mode 'odd'"):
        GraphSeed.from_text(special.to_text().replace('"special"', '"odd"'))
