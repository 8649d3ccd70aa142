"""Insert, delete, replace and crossover over trace items: every result is a well-formed trace
(TVM-free)."""

from __future__ import annotations

import random

from seedzer.kernel.sched.trace import Instruction, parse_trace, trace_problem
from seedzer.mutate.sched.sequence import OPERATIONS, applies, crossover, delete, dependents, insert, replace

TRACE = parse_trace([[
    ["GetSBlock", [], ["C", "main"], ["b0"]], ["GetLoops", ["b0"], [], ["l1", "l2", "l3"]],
    ["SamplePerfectTile", ["l1"], [2, 16], ["v4", "v5"]],
    ["Split", ["l1", "v4", "v5"], [True, False], ["l6", "l7"]],
    ["Parallel", ["l6"], [], []],
    ["DecomposeReduction", ["b0", "l3"], [], ["b8"]],
    ["GetLoops", ["b8"], [], ["l9", "l10", "l11"]],
    ["Vectorize", ["l11"], [], []]], [[2, [4, 4]]]])
NEW = [Instruction("GetSBlock", (), ("C", "main"), ("b_x",)),
       Instruction("GetLoops", ("b_x",), (), ("l_x", "l_y", "l_z")), Instruction("Unroll", ("l_z",))]


def test_deleting_a_primitive_deletes_what_uses_its_results() -> None:
    assert dependents(TRACE, {3}) == {3, 4}
    out = delete(TRACE, 5)  # decompose_reduction: its init block's loops and their vectorize go too
    assert [i.kind for i in out] == ["GetSBlock", "GetLoops", "SamplePerfectTile", "Split", "Parallel"]
    assert applies(out) is None


def test_inserted_items_get_fresh_names_and_the_trace_is_renumbered() -> None:
    out = insert(TRACE, 2, NEW)
    assert [i.kind for i in out][2:5] == ["GetSBlock", "GetLoops", "Unroll"]
    assert applies(out) is None
    assert out[2].outputs == ("b4",) and out[4].inputs == ("l7",)
    assert out[-1].kind == "Vectorize" and trace_problem(out) is None


def test_replace_puts_new_items_at_the_place_of_the_old_primitive() -> None:
    out = replace(TRACE, 4, NEW)
    assert "Parallel" not in [i.kind for i in out] and "Unroll" in [i.kind for i in out]
    assert applies(out) is None


def test_a_crossover_tail_takes_along_the_getters_it_needs_and_drops_what_it_cannot_have() -> None:
    out = crossover(TRACE[:2], TRACE, 2, 4)  # second's tail: Parallel(l6) needs Split's l6: dropped
    kinds = [i.kind for i in out]
    assert "Parallel" not in kinds  # its loop came from a split the head does not make
    assert "DecomposeReduction" in kinds and applies(out) is None


def test_every_operation_keeps_every_sequence_well_formed() -> None:
    rng = random.Random(3)

    def source(items: list[Instruction], at: int, r: random.Random) -> list[Instruction]:
        return list(NEW)

    for _ in range(300):
        name = rng.choice(sorted(OPERATIONS))
        out = OPERATIONS[name](TRACE, TRACE[: rng.randrange(len(TRACE))], source, rng)  # type: ignore[arg-type]
        assert out is None or applies(out) is None, (name, out)
