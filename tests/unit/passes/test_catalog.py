"""A catalogue's items: required arguments always drawn, optional ones half of the time; the weighted draw."""

from __future__ import annotations

import random
from collections import Counter

from seedzer.passes.catalog import ArgSpec, PassInfo, choice, draw

ITEMS = {
    "x.Light": PassInfo("x.Light", weight=1.0),
    "x.Heavy": PassInfo("x.Heavy", (ArgSpec("level", choice(1, 2), required=True), ArgSpec("flag", choice(True))),
                        weight=3.0),
}


def test_required_arguments_always_and_optional_ones_half_of_the_time() -> None:
    rng = random.Random(0)
    samples = [ITEMS["x.Heavy"].sample(rng) for _ in range(2000)]
    assert all(dict(s.args)["level"] in (1, 2) for s in samples)
    flagged = sum("flag" in dict(s.args) for s in samples) / len(samples)
    assert abs(flagged - 0.5) < 0.05 and ITEMS["x.Heavy"].function == "Heavy"


def test_the_draw_follows_the_weights_among_the_names_given() -> None:
    rng = random.Random(1)
    drawn = Counter(draw(ITEMS, list(ITEMS), rng).name for _ in range(4000))
    assert 2.6 < drawn["x.Heavy"] / drawn["x.Light"] < 3.4
    assert {draw(ITEMS, ["x.Light"], rng).name for _ in range(20)} == {"x.Light"}
