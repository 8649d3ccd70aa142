"""The allocation: adaptive weights by reward per worker-second, floors, pins, fatigue and its saved state."""

from __future__ import annotations

import json
import math

import pytest

from seedzer.campaign.allocation import (
    FATIGUE_FLOOR,
    LEVELS,
    MODELS,
    Allocation,
    AllocationSettings,
    Credit,
    Rewards,
    mutation_group,
)

BASE = {LEVELS: {"tir": 3.0, "graph": 1.0}, mutation_group("graph"): {"model_insert": 1.0, "relax_swap": 1.0}}


def _feed(alloc: Allocation, level: str, mutation: str, reward: float, n: int, seconds: float = 1.0) -> None:
    for _ in range(n):
        alloc.observe(Credit(level, (mutation,), "m.onnx"), seconds, reward)


def test_with_no_observation_the_weights_are_the_configured_ones() -> None:
    alloc = Allocation(AllocationSettings(), BASE)
    assert alloc.weights(LEVELS) == pytest.approx({"tir": 0.75, "graph": 0.25})


def test_the_configured_weights_are_a_prior_that_data_overrides() -> None:
    alloc = Allocation(AllocationSettings(prior_seconds=60.0), BASE)
    _feed(alloc, "tir", "pass_insert", 1.0, 6)
    _feed(alloc, "graph", "model_insert", 2.0, 2)
    early = alloc.weights(LEVELS)
    assert early["tir"] > early["graph"]  # 8 seconds of data: the configured 3 : 1 still leads
    _feed(alloc, "tir", "pass_insert", 1.0, 300)
    _feed(alloc, "graph", "model_insert", 2.0, 100)
    late = alloc.weights(LEVELS)
    assert late["graph"] > late["tir"]  # graph yields twice as much per second: it leads despite 3 : 1
    assert late["graph"] < 2 / 3  # its share of the yields (shrunk towards the average), never past it


def test_equal_yields_with_plenty_of_data_draw_the_levels_alike() -> None:
    alloc = Allocation(AllocationSettings(half_life=1e7), BASE)
    _feed(alloc, "tir", "pass_insert", 1.0, 3000)
    _feed(alloc, "graph", "model_insert", 1.0, 1000)
    assert alloc.weights(LEVELS) == pytest.approx({"tir": 0.5, "graph": 0.5}, abs=0.01)


def test_the_level_that_yields_more_per_second_gains_weight_and_the_other_keeps_its_floor() -> None:
    settings = AllocationSettings(floor=0.1)
    alloc = Allocation(settings, BASE)
    _feed(alloc, "tir", "pass_insert", 0.0, 600)
    _feed(alloc, "graph", "model_insert", 5.0, 200)
    weights = alloc.weights(LEVELS)
    assert weights["graph"] > 0.8 > 0.25
    assert settings.floor / 2 <= weights["tir"] < 0.25
    assert math.isclose(sum(weights.values()), 1.0)


def test_the_floor_is_spread_over_the_arms_so_a_large_family_still_adapts() -> None:
    mutations = [f"m{i}" for i in range(12)]
    base = {mutation_group("graph"): dict.fromkeys(mutations, 1.0)}
    alloc = Allocation(AllocationSettings(floor=0.1, half_life=1e7), base)
    for name in mutations:
        alloc.observe(Credit("graph", (name,), ""), 1000.0, 500.0 if name == "m0" else 0.0)
    weights = alloc.weights(mutation_group("graph"))
    assert weights["m0"] > 0.8  # not capped by eleven arms holding a per-arm floor of 5% each
    assert min(weights.values()) >= 0.1 / 12 - 1e-12
    assert math.isclose(sum(weights.values()), 1.0)


def test_a_slow_arm_yields_less_per_second_for_the_same_reward() -> None:
    alloc = Allocation(AllocationSettings(), {LEVELS: {"tir": 1.0, "graph": 1.0}})
    _feed(alloc, "tir", "x", 1.0, 100, seconds=0.1)
    _feed(alloc, "graph", "y", 1.0, 100, seconds=1.0)
    weights = alloc.weights(LEVELS)
    assert weights["tir"] > weights["graph"]


def test_fixed_weights_ignore_yields() -> None:
    alloc = Allocation(AllocationSettings(adaptive=False), BASE)
    _feed(alloc, "graph", "model_insert", 9.0, 100)
    assert alloc.weights(LEVELS) == pytest.approx({"tir": 0.75, "graph": 0.25})


def test_a_pinned_family_keeps_its_weights_while_the_others_adapt() -> None:
    alloc = Allocation(AllocationSettings(pinned=frozenset({"levels"})), BASE)
    _feed(alloc, "graph", "model_insert", 9.0, 100)
    _feed(alloc, "graph", "relax_swap", 0.0, 100)
    assert alloc.weights(LEVELS) == pytest.approx({"tir": 0.75, "graph": 0.25})
    mutations = alloc.weights(mutation_group("graph"))
    assert mutations["model_insert"] > mutations["relax_swap"]


def test_a_root_new_to_the_ledger_outweighs_coverage() -> None:
    alloc = Allocation(AllocationSettings(), BASE)
    _feed(alloc, "graph", "model_insert", 0.0, 50)
    _feed(alloc, "graph", "relax_swap", 0.0, 49)
    _feed(alloc, "graph", "relax_swap", Rewards().of(1000, 3), 1)
    alloc.credit_root(Credit("graph", ("model_insert",), "m.onnx"))
    mutations = alloc.weights(mutation_group("graph"))
    assert mutations["model_insert"] > mutations["relax_swap"]


def test_old_observations_fade_with_the_half_life() -> None:
    alloc = Allocation(AllocationSettings(half_life=100.0, prior_seconds=1.0), {LEVELS: {"a": 1.0, "b": 1.0}})
    _feed(alloc, "a", "x", 10.0, 100)
    _feed(alloc, "b", "y", 1.0, 100)
    early = alloc.weights(LEVELS)["a"]
    _feed(alloc, "a", "x", 0.0, 1000)
    _feed(alloc, "b", "y", 1.0, 1000)
    assert early > 0.5 > alloc.weights(LEVELS)["a"]


def test_an_arm_not_configured_weighs_one_and_a_zero_weight_is_never_drawn() -> None:
    alloc = Allocation(AllocationSettings(), {LEVELS: {"tir": 1.0, "graph": 0.0}})
    assert alloc.weights(LEVELS) == {"tir": 1.0}
    assert alloc.weights(LEVELS, ["tir", "sched"]) == pytest.approx({"tir": 0.5, "sched": 0.5})
    assert alloc.weights(LEVELS, ["graph"]) == {}


def test_the_same_observations_give_the_same_weights_and_the_state_survives_a_round_trip() -> None:
    def run() -> Allocation:
        alloc = Allocation(AllocationSettings(), BASE)
        for i in range(200):
            alloc.observe(Credit("graph" if i % 3 else "tir", ("model_insert",), f"m{i % 4}.onnx"), 0.1 + i % 5,
                          float(i % 7))
        alloc.credit_root(Credit("graph", ("model_insert",), "m1.onnx"))
        alloc.fatigue.observe("e1", known_root=True, new_coverage=False)
        return alloc

    first, second = run(), run()
    assert first.view() == second.view()
    restored = Allocation(AllocationSettings(), BASE)
    restored.restore(json.loads(json.dumps(first.to_json())))
    assert restored.view() == first.view()
    assert restored.weights(MODELS) == first.weights(MODELS)
    assert restored.fatigue.energy("e1") == first.fatigue.energy("e1") == 0.5


@pytest.mark.parametrize("state", [None, [], {"version": 2, "groups": {}}, {"version": 1, "groups": {"level": 3}},
                                   {"version": 1, "groups": {"level": {"arms": {"tir": [1, 2]}}}},
                                   {"version": 1, "groups": {"level": {"arms": {"tir": [1, 2, 3, 4, "x", 6, 7]}}}},
                                   {"version": 1, "groups": {"level": {"arms": {"tir": [-1, 2, 3, 4, 5, 6, 7]}}}},
                                   {"version": 1, "groups": {}, "fatigue": {"e": -1}}])
def test_a_corrupt_state_is_refused_and_leaves_the_allocation_as_it_was(state: object) -> None:
    alloc = Allocation(AllocationSettings(), BASE)
    before = alloc.view()
    with pytest.raises(ValueError):
        alloc.restore(state)
    assert alloc.view() == before


def test_fatigue_drops_an_entry_that_keeps_rehitting_known_roots_until_it_finds_coverage() -> None:
    alloc = Allocation(AllocationSettings(), BASE)
    for _ in range(10):
        alloc.fatigue.observe("e", known_root=True, new_coverage=False)
    assert alloc.fatigue.energy("e") == FATIGUE_FLOOR
    alloc.fatigue.observe("e", known_root=True, new_coverage=True)
    assert alloc.fatigue.energy("e") == 1.0
    alloc.fatigue.observe("f", known_root=False, new_coverage=False)
    assert alloc.fatigue.energy("f") == 1.0


def test_the_view_reports_reward_per_worker_minute() -> None:
    alloc = Allocation(AllocationSettings(), BASE)
    _feed(alloc, "graph", "model_insert", 2.0, 30, seconds=2.0)
    row = next(v for v in alloc.view() if v.group == LEVELS and v.arm == "graph")
    assert row.reward_per_minute == pytest.approx(60.0)
    assert row.runs == 30 and row.seconds == pytest.approx(60.0)
