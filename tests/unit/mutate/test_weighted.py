"""Weighted choices of mutators, and the campaign allocation's factors on them."""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass

from seedzer.mutate.weighted import group_factor, pick, scaled


@dataclass
class M:
    name: str
    weight: float


MUTATORS = [M("a", 1.0), M("b", 3.0), M("off", 0.0)]


def test_without_factors_the_draw_is_the_configured_one_draw_for_draw() -> None:
    first = [pick(MUTATORS, random.Random(i)).name for i in range(200)]
    second = [pick(MUTATORS, random.Random(i), {}).name for i in range(200)]
    assert first == second and "off" not in first


def test_factors_multiply_the_weights_by_name() -> None:
    assert scaled(MUTATORS, {"a": 3.0}) == [3.0, 3.0, 0.0]
    drawn = Counter(pick(MUTATORS, random.Random(i), {"a": 3.0}).name for i in range(4000))
    assert 0.45 < drawn["a"] / 4000 < 0.55
    assert group_factor(MUTATORS, {"a": 3.0}) == (3.0 + 3.0) / 4.0
    assert group_factor(MUTATORS, None) == 1.0
