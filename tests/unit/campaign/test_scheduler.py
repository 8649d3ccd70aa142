"""The seed schedulers: uniform (Tzer's pool) and cost (AFL++'s speed score, LibAFL's minimizer)."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from seedzer.campaign.scheduler import (
    COST_SMOOTHING,
    FASTEST_FACTOR,
    RARITY_BOOST,
    SLOWEST_FACTOR,
    CostScheduler,
    RarityScheduler,
    UniformScheduler,
    make_scheduler,
    record_cost,
)
from seedzer.errors import ConfigError
from seedzer.store.corpus import CorpusEntry


def entry(name: str, cost: float | None = None, script: str = "x" * 100, chosen: int = 1) -> CorpusEntry:
    return CorpusEntry(name, script, "[]", "m", cost=cost, chosen=chosen, level="tir")


def draws(scheduler: CostScheduler | UniformScheduler, entries: list[CorpusEntry], n: int = 4000) -> Counter[str]:
    rng = random.Random(7)
    return Counter(scheduler.choose(entries, rng).seed_id for _ in range(n))


def test_record_cost_starts_at_the_first_run_then_smooths() -> None:
    e = entry("a")
    record_cost(e, 2.0)
    assert e.cost == 2.0
    record_cost(e, 6.0)
    assert e.cost == pytest.approx(2.0 + COST_SMOOTHING * 4.0)
    record_cost(e, 0.0)  # no measurement
    assert e.cost == pytest.approx(3.0)


def test_a_slow_entry_is_chosen_far_less_than_a_fast_one() -> None:
    fast, slow = entry("fast", 0.1), entry("slow", 5.0)
    counts = draws(CostScheduler(), [fast, slow])
    # mean 2.55: fast weighs 3 (capped), slow 0.51
    assert counts["fast"] > 4 * counts["slow"] > 0


def test_speed_factor_is_bounded() -> None:
    s = CostScheduler()
    assert s.weight(entry("a", 0.001), 1.0, set()) == FASTEST_FACTOR
    assert s.weight(entry("b", 1000.0), 1.0, set()) == SLOWEST_FACTOR
    assert s.weight(entry("c", None), 1.0, set()) == 1.0


def test_the_cheapest_holder_of_a_feature_is_favored_and_replaced_by_a_cheaper_one() -> None:
    s = CostScheduler()
    big, small = entry("big", 1.0, "x" * 1000), entry("small", 1.0, "x" * 10)
    s.learn(big, ["f1", "f2"])
    assert s.favored() == {"big"}
    s.learn(small, ["f2"])
    assert s.favored() == {"big", "small"}  # big still holds f1 alone
    s.learn(entry("tiny", 0.5, "x"), ["f1", "f2"])
    assert s.favored() == {"tiny"}


def test_an_unmeasured_entry_is_not_learned() -> None:
    s = CostScheduler()
    s.learn(entry("a", None), ["f"])
    assert s.favored() == set()


def test_favored_and_fresh_entries_weigh_more() -> None:
    s = CostScheduler()
    a, b = entry("a", 1.0), entry("b", 1.0)
    s.learn(a, ["f"])
    counts = draws(s, [a, b])
    assert counts["a"] > 3 * counts["b"]
    fresh = entry("fresh", 1.0, chosen=0)
    counts = draws(CostScheduler(), [entry("old", 1.0), fresh])
    assert counts["fresh"] > 1.5 * counts["old"]


def test_weights_follow_a_growing_corpus() -> None:
    s = CostScheduler()
    entries = [entry("a", 1.0)]
    rng = random.Random(1)
    assert s.choose(entries, rng).seed_id == "a"
    entries.append(entry("b", 0.01))
    assert "b" in {s.choose(entries, rng).seed_id for _ in range(50)}


def test_uniform_ignores_cost() -> None:
    counts = draws(UniformScheduler(), [entry("fast", 0.1), entry("slow", 5.0)])
    assert abs(counts["fast"] - counts["slow"]) < 400


def test_registry() -> None:
    assert make_scheduler("cost").name == "cost" and make_scheduler("uniform").name == "uniform"
    with pytest.raises(ConfigError, match="unknown scheduler 'afl'"):
        make_scheduler("afl")


def test_every_scheduler_and_energy_the_configuration_names_is_implemented() -> None:
    """The names are the configuration's (written once); the registries are keyed by them."""
    from seedzer.config import COST, ENERGY_NAMES, SCHEDULER_NAMES

    for energy in ENERGY_NAMES:
        assert make_scheduler(COST, energy).name == COST  # every energy is one of the cost scheduler
    for name in SCHEDULER_NAMES:
        assert make_scheduler(name).name == name


def triggering(name: str, *passes: str) -> CorpusEntry:
    made = entry(name, cost=1.0)
    made.triggered = passes
    return made


def test_rarity_energy_favors_the_entry_that_alone_triggers_a_pass() -> None:
    scheduler = make_scheduler("cost", "rarity")
    assert isinstance(scheduler, RarityScheduler)
    common = [triggering(f"c{i}", "tirx.Simplify") for i in range(3)]
    rare = triggering("rare", "tirx.Simplify", "s_tir.LoopPartition")
    plain = triggering("plain")
    for e in [*common, rare, plain]:
        scheduler.learn(e, [f"f-{e.seed_id}"])  # each holds a feature of its own: all favored alike
    assert scheduler.rarity(rare) == RARITY_BOOST and scheduler.rarity(plain) == 1.0
    assert scheduler.rarity(common[0]) == pytest.approx(1.0 + (RARITY_BOOST - 1.0) / 4)
    seen = draws(scheduler, [*common, rare, plain])
    assert seen["rare"] > 2.5 * seen["plain"] and seen["rare"] > 1.8 * seen["c0"]


def test_an_entry_learned_again_is_counted_once_and_today_s_energy_ignores_triggers() -> None:
    scheduler = RarityScheduler()
    e = triggering("a", "tirx.Simplify")
    scheduler.learn(e, [])
    scheduler.learn(e, [])
    assert scheduler.holders["tirx.Simplify"] == 1
    e.triggered = ("tirx.RemoveNoOp",)
    scheduler.learn(e, [])
    assert scheduler.holders["tirx.Simplify"] == 0 and scheduler.holders["tirx.RemoveNoOp"] == 1
    today = make_scheduler("cost", "coverage")
    assert type(today) is CostScheduler
    rare, plain = triggering("rare", "s_tir.LoopPartition"), triggering("plain")
    for x in (rare, plain):
        today.learn(x, [f"f-{x.seed_id}"])
    seen = draws(today, [rare, plain])
    assert abs(seen["rare"] - seen["plain"]) < 300  # the same weight


def test_rarity_energy_needs_the_cost_scheduler_and_an_unknown_energy_is_named() -> None:
    with pytest.raises(ConfigError, match="unknown scheduler 'uniform' for energy 'rarity'"):
        make_scheduler("uniform", "rarity")
    with pytest.raises(ConfigError, match="unknown energy 'fast'"):
        make_scheduler("cost", "fast")
