"""Tzer's mutation schedule: the tolerance schedule's choice and what :class:`TzerSchedule` mutates."""

from __future__ import annotations

import random
from typing import Any

import pytest

from seedzer.mutate.sequence import Insert
from seedzer.mutate.tir import MutationStats, choose_mutated_part, default_pass_mutators
from seedzer.mutate.tir.schedule import TzerSchedule
from seedzer.mutate.weighted import pick
from seedzer.passes.tir.family import TIR_FAMILY
from seedzer.seed import PassSpec

PASSES = [PassSpec("tirx.StmtSimplify"), PassSpec("tirx.RemoveNoOp")]


class Cache:
    """A script cache that parses on demand and records what the schedule leaves in it."""

    def __init__(self) -> None:
        self.gets: list[str] = []
        self.puts: dict[str, Any] = {}

    def get(self, script: str, parent: bool = False) -> Any:
        from seedzer.tvmio import parse_primfunc

        assert parent
        self.gets.append(script)
        return parse_primfunc(script)

    def put(self, script: str, func: Any) -> None:
        self.puts[script] = func


class Never:
    """An IR mutator that never finds a site."""

    name = "never"
    weight = 1.0

    def mutate(self, func: Any, rng: random.Random) -> Any:
        return None


def _schedule(tolerance: int, ir_mutators: list[Any], max_passes: int = 50) -> TzerSchedule:
    return TzerSchedule(tolerance, max_passes, ir_mutators, default_pass_mutators(), MutationStats())


def test_tolerance_schedule() -> None:
    rng = random.Random(3)
    assert [choose_mutated_part(f, 3, rng, both_probability=0.0) for f in range(8)] == [
        "ir", "ir", "ir", "passes", "ir", "ir", "ir", "passes",
    ]
    parts = {choose_mutated_part(3, 3, rng, both_probability=0.5) for _ in range(100)}
    assert parts == {"passes", "both"}
    assert choose_mutated_part(0, 0, rng) == "passes"


def test_the_pass_phase_mutates_only_the_passes_with_the_same_draws() -> None:
    hits = 0
    for seed in range(20):
        twin = random.Random(seed)
        part = choose_mutated_part(2, 2, twin)
        if part != "passes":
            continue
        mutator = pick(default_pass_mutators(), twin)
        expected = mutator.mutate(PASSES, twin, None)
        cache = Cache()
        out = _schedule(2, [Never()]).mutate("script", PASSES, 2, random.Random(seed), cache)
        assert (out.script, out.passes, out.applied) == ("script", expected, [mutator.name])
        assert cache.gets == [] and cache.puts == {}
        hits += 1
    assert hits > 10


def test_passes_are_cut_to_max_passes() -> None:
    schedule = TzerSchedule(1, 2, [Never()], [Insert(TIR_FAMILY)], MutationStats())
    out = schedule.mutate("script", PASSES, 1, random.Random(0), Cache())
    assert len(out.passes) == 2 and out.applied == ["pass_insert"]


def test_the_ir_phase_mutates_the_ir_with_the_same_draws_as_mutate_ir() -> None:
    pytest.importorskip("tvm")
    from seedzer.mutate.tir import default_ir_mutators, mutate_ir
    from seedzer.tvmio import parse_primfunc, script_of
    from tests.unit.tir.test_fixtures import load_seeds

    script = script_of(load_seeds()["relu"])
    twin = random.Random(7)
    assert choose_mutated_part(0, 4, twin) == "ir"
    found = mutate_ir(parse_primfunc(script), twin, default_ir_mutators())
    assert found is not None
    cache = Cache()
    out = _schedule(4, default_ir_mutators()).mutate(script, PASSES, 0, random.Random(7), cache)
    assert out.applied == [found[1]] and out.passes == PASSES
    assert out.script == script_of(found[0]) != script
    assert cache.gets == [script] and list(cache.puts) == [out.script]


def test_a_failed_ir_mutation_falls_back_to_the_passes() -> None:
    pytest.importorskip("tvm")
    from seedzer.tvmio import script_of
    from tests.unit.tir.test_fixtures import load_seeds

    script = script_of(load_seeds()["relu"])
    schedule = _schedule(4, [Never()])
    out = schedule.mutate(script, PASSES, 0, random.Random(1), Cache())
    assert out.script == script and len(out.applied) == 1
    assert out.applied[0].startswith("pass_") and schedule.stats.gave_up == 1


def test_the_allocations_factors_steer_the_pass_mutator_within_the_pass_phase() -> None:
    names = [m.name for m in default_pass_mutators()]
    only = names[-1]
    factors = {name: 1.0 if name == only else 0.0 for name in names}
    applied = {_schedule(2, [Never()]).mutate("script", PASSES, 2, random.Random(seed), Cache(), factors=factors)
               .applied[-1] for seed in range(30)}
    assert applied == {only}
