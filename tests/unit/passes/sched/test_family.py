"""The schedule family: the house's sequence mutators edit trace instructions (insert, delete, replace,
crossover), every result a trace that applies as far as the trace alone tells (TVM-free)."""

from __future__ import annotations

import random
from collections.abc import Sequence

from seedzer.kernel.sched.trace import Instruction, parse_trace, trace_problem
from seedzer.mutate.sequence import mutator_names, sequence_mutators
from seedzer.passes.sched.family import SCHED_FAMILY, SchedFamily
from seedzer.passes.sched.items import apart, instructions_of, item_of
from seedzer.seed import PassSpec

TRACE = [item_of(i) for i in parse_trace([[
    ["GetSBlock", [], ["C", "main"], ["b0"]], ["GetLoops", ["b0"], [], ["l1", "l2", "l3"]],
    ["SamplePerfectTile", ["l1"], [2, 16], ["v4", "v5"]],
    ["Split", ["l1", "v4", "v5"], [True, False], ["l6", "l7"]],
    ["Parallel", ["l6"], [], []],
    ["DecomposeReduction", ["b0", "l3"], [], ["b8"]],
    ["GetLoops", ["b8"], [], ["l9", "l10", "l11"]],
    ["Vectorize", ["l11"], [], []]], [[2, [4, 4]]]])]
NEW = [item_of(i) for i in (Instruction("GetSBlock", (), ("C", "main"), ("b_x",)),
                            Instruction("GetLoops", ("b_x",), (), ("l_x", "l_y", "l_z")),
                            Instruction("Unroll", ("l_z",)))]


class Drawn:
    """A source that draws :data:`NEW` and remembers where it was asked."""

    def __init__(self) -> None:
        self.asked: list[tuple[int, int]] = []

    def __call__(self, items: Sequence[PassSpec], at: int, rng: random.Random) -> list[PassSpec] | None:
        self.asked.append((len(items), at))
        return list(NEW)


def _family(source: Drawn | None = None) -> SchedFamily:
    return SCHED_FAMILY.with_source(source or Drawn())


def _mutator(family: SchedFamily, name: str):  # type: ignore[no-untyped-def]
    return next(m for m in sequence_mutators(family) if m.name == name)


def _kinds(items: Sequence[PassSpec]) -> list[str]:
    return [i.name for i in items]


def test_the_family_names_phase_ones_trace_operations() -> None:
    assert mutator_names(SCHED_FAMILY) == ("trace.insert", "trace.delete", "trace.replace", "trace.crossover")
    assert SCHED_FAMILY.in_contract(TRACE)


def test_deleting_a_primitive_takes_what_uses_its_results_and_never_picks_a_getter() -> None:
    delete = _mutator(_family(), "trace.delete")
    seen = set()
    for seed in range(40):
        out = delete.mutate(TRACE, random.Random(seed))
        kinds = _kinds(out)
        seen.add(tuple(kinds))
        assert trace_problem(instructions_of(out)) is None
        assert len(out) < len(TRACE)
    # decompose_reduction goes with its init block's loops and their vectorize; a split with its parallel
    assert ("GetSBlock", "GetLoops", "SamplePerfectTile", "Split", "Parallel") in seen
    assert ("GetSBlock", "GetLoops", "DecomposeReduction", "GetLoops", "Vectorize") in seen


def test_an_insertion_asks_the_source_for_its_place_and_the_trace_is_renumbered() -> None:
    source = Drawn()
    out = _mutator(_family(source), "trace.insert").mutate(TRACE, random.Random(1))
    assert source.asked and all(size == at for size, at in source.asked)  # drawn for the items before it
    assert trace_problem(instructions_of(out)) is None
    assert "Unroll" in _kinds(out) and instructions_of(out)[0].outputs == ("b0",)


def test_a_replacement_puts_the_new_primitive_at_the_place_of_the_old_one() -> None:
    for seed in range(20):
        out = _mutator(_family(), "trace.replace").mutate(TRACE, random.Random(seed))
        assert "Unroll" in _kinds(out) and trace_problem(instructions_of(out)) is None
        assert len([k for k in _kinds(out) if k in ("Split", "Parallel", "DecomposeReduction", "Vectorize")]) < 4


def test_a_crossover_keeps_of_the_partners_tail_what_it_can_define() -> None:
    partner = apart(TRACE, "p")
    crossover = _mutator(_family(), "trace.crossover")
    for seed in range(50):
        out = crossover.mutate(TRACE[:2], random.Random(seed), partner)
        assert trace_problem(instructions_of(out)) is None
        assert "Parallel" not in _kinds(out) or "Split" in _kinds(out)  # its loop comes from a split


def test_without_a_source_nothing_is_drawn() -> None:
    assert SCHED_FAMILY.draw_at(TRACE, 3, random.Random(0)) is None


def test_every_operation_keeps_every_sequence_a_trace() -> None:
    rng = random.Random(3)
    mutators = sequence_mutators(_family())
    for _ in range(300):
        mutator = rng.choice(mutators)
        items = TRACE[: rng.randrange(len(TRACE) + 1)]
        out = mutator.mutate(items, rng, apart(TRACE, "p"))
        assert trace_problem(instructions_of(out)) is None, (mutator.name, out)
        assert SCHED_FAMILY.in_contract(out)
