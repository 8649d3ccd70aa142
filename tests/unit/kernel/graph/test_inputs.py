"""Special input values and the index inputs insertions add (seedzer.kernel.graph.inputs, TVM-free)."""

from __future__ import annotations

import numpy as np

from seedzer.kernel.graph.inputs import bounded_inputs, float_specials, integer_arithmetic, special_values

FEEDS = {"f": np.random.default_rng(0).uniform(-2, 2, (8, 16)).astype(np.float32),
         "i": np.zeros((64,), np.int32), "b": np.ones((4,), np.bool_)}


def test_special_values_replace_about_half_of_the_elements_deterministically() -> None:
    one, two = special_values(FEEDS, 5), special_values(FEEDS, 5)
    for name in FEEDS:
        np.testing.assert_array_equal(one[name], two[name])
        assert one[name].dtype == FEEDS[name].dtype and one[name].shape == FEEDS[name].shape
    f = one["f"]
    assert np.isnan(f).any() and np.isposinf(f).any() and np.isneginf(f).any()
    assert (np.signbit(f) & (f == 0)).any()  # a negative zero
    assert (np.abs(f[np.isfinite(f) & (f != 0)]) < np.finfo(np.float32).tiny).any()  # a denormal
    assert 0.2 < np.mean(one["f"] != FEEDS["f"]) < 0.8
    np.testing.assert_array_equal(one["b"], FEEDS["b"])  # booleans stay
    assert {int(v) for v in one["i"]} >= {np.iinfo(np.int32).min, np.iinfo(np.int32).max}
    assert np.abs(special_values(FEEDS, 5, extremes=False)["i"]).max() <= 2  # no extremes then


def test_float_specials_cover_the_specifications_values() -> None:
    values = float_specials(np.float64)
    assert np.isnan(values).sum() == 1 and np.isinf(values).sum() == 2 and np.finfo(np.float64).max in values


def test_bounded_inputs_keep_their_range_and_special_ones_favour_its_edges() -> None:
    spec = {"name": "idx", "dtype": "int64", "shape": [200], "low": -3, "high": 2}
    random = bounded_inputs([spec], 1, "random")["idx"]
    assert random.min() >= -3 and random.max() <= 2
    special = bounded_inputs([spec], 1, "special")["idx"]  # an index out of range would leave nothing judged
    assert special.min() == -3 and special.max() == 2
    assert np.isin(special, [-3, -1, 0, 2]).sum() > np.isin(random, [-3, -1, 0, 2]).sum()
    other = {"name": "other", "dtype": "int32", "shape": [3], "low": 0, "high": 0}
    assert np.array_equal(bounded_inputs([other, spec], 1, "random")["idx"], random)  # one input's values alone


def test_integer_arithmetic_decides_extremes() -> None:
    assert integer_arithmetic(["Relu", "Add"]) and not integer_arithmetic(["Relu", "Gather"])
