from seedzer.seed import JointSeed, PassSpec, drop_passes, passes_from_json, passes_to_json


def test_passes_round_trip_through_json() -> None:
    seq = [PassSpec("tirx.UnrollLoop", (("auto_max_step", 16),)), PassSpec("tirx.StmtSimplify")]
    assert passes_from_json(passes_to_json(seq)) == seq


def test_drop_passes_keeps_order_and_changes_identity() -> None:
    seq = [PassSpec("a"), PassSpec("b"), PassSpec("c"), PassSpec("d")]
    assert drop_passes(seq, [1, 3]) == [PassSpec("a"), PassSpec("c")]
    assert drop_passes(seq, []) == seq
    assert JointSeed("x", drop_passes(seq, [0])).seed_id != JointSeed("x", seq).seed_id
