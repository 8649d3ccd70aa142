"""Mutator registries: names, weights from configuration, weighted choice."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from seedzer.errors import ConfigError
from seedzer.mutate.sequence import Delete
from seedzer.mutate.tir import IR_MUTATOR_NAMES, PASS_MUTATOR_NAMES, build_pass_mutators, validate_weights
from seedzer.mutate.weighted import pick


def test_unknown_names_and_bad_weights_are_config_errors() -> None:
    with pytest.raises(ConfigError, match="unknown ir mutator"):
        validate_weights({"flip": 1.0, "frobnicate": 2.0})
    with pytest.raises(ConfigError, match="unknown pass mutator"):
        build_pass_mutators({"pass_shuffle": 1.0})
    with pytest.raises(ConfigError, match="weight must be"):
        validate_weights({"flip": -1})
    with pytest.raises(ConfigError, match="weight must be"):
        validate_weights({"flip": "high"})


def test_weights_override_defaults() -> None:
    muts = {m.name: m for m in build_pass_mutators({"pass_crossover": 0.0, "pass_insert": 3})}
    assert set(muts) == set(PASS_MUTATOR_NAMES)
    assert muts["pass_crossover"].weight == 0.0 and muts["pass_insert"].weight == 3.0
    assert muts["pass_delete"].weight == Delete.default_weight


def test_pick_follows_weights_and_skips_zero() -> None:
    muts = build_pass_mutators({"pass_insert": 3, "pass_delete": 1, "pass_replace": 0, "pass_crossover": 0})
    counts = Counter(pick(muts, random.Random(i)).name for i in range(4000))
    assert counts["pass_replace"] == counts["pass_crossover"] == 0
    assert 2.5 < counts["pass_insert"] / counts["pass_delete"] < 3.5
    with pytest.raises(ValueError):
        pick(build_pass_mutators({n: 0 for n in PASS_MUTATOR_NAMES}), random.Random(0))


def test_build_ir_mutators_by_name() -> None:
    pytest.importorskip("tvm")
    from seedzer.mutate.tir import build_ir_mutators
    from seedzer.protocols import IRMutator

    muts = build_ir_mutators({"flip": 5.0})
    assert [m.name for m in muts] == list(IR_MUTATOR_NAMES)
    assert all(isinstance(m, IRMutator) for m in muts)
    assert next(m for m in muts if m.name == "flip").weight == 5.0
    with pytest.raises(ConfigError):
        build_ir_mutators({"flipper": 1.0})
