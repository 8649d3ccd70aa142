"""Unit tests of the NaN/Inf-aware output comparison and the seeded input generator."""

from __future__ import annotations

import numpy as np

from seedzer.load.compare import TOLERANCES, compare_outputs, max_abs_error, random_inputs


def test_equal_outputs_with_matching_nan_and_inf_agree() -> None:
    e = np.array([1.0, np.nan, np.inf, -np.inf], np.float32)
    assert compare_outputs([e], [e.copy()], TOLERANCES) == []


def test_nan_position_mismatch_is_reported() -> None:
    e = np.array([1.0, np.nan, 3.0], np.float32)
    a = np.array([1.0, 2.0, np.nan], np.float32)
    (problem,) = compare_outputs([e], [a], TOLERANCES)
    assert "NaN positions differ at 2/3" in problem


def test_inf_sign_mismatch_is_reported() -> None:
    e = np.array([np.inf, 1.0], np.float32)
    a = np.array([-np.inf, 1.0], np.float32)
    (problem,) = compare_outputs([e], [a], TOLERANCES)
    assert "infinities differ" in problem


def test_inf_versus_finite_is_reported() -> None:
    e = np.array([np.inf, 1.0], np.float32)
    a = np.array([3.0e38, 1.0], np.float32)
    assert "infinities differ" in compare_outputs([e], [a], TOLERANCES)[0]


def test_float32_tolerance_accepts_rounding_and_rejects_real_errors() -> None:
    e = np.array([100.0, 0.0], np.float32)
    assert compare_outputs([e], [np.array([100.5, 0.0005], np.float32)], TOLERANCES) == []
    (problem,) = compare_outputs([e], [np.array([102.0, 0.0], np.float32)], TOLERANCES)
    assert "1/2 elements out of tolerance" in problem and "at (0,)" in problem


def test_float64_is_stricter_than_float32() -> None:
    e = np.array([1.0], np.float64)
    assert compare_outputs([e], [e + 1e-4], TOLERANCES)
    assert not compare_outputs([e.astype(np.float32)], [(e + 1e-4).astype(np.float32)], TOLERANCES)


def test_integers_and_bools_must_match_exactly() -> None:
    assert compare_outputs([np.array([1, 2], np.int64)], [np.array([1, 3], np.int64)], TOLERANCES)
    (problem,) = compare_outputs([np.array([True, False])], [np.array([True, True])], TOLERANCES)
    assert "1/2 elements differ, first at (1,)" in problem


def test_shape_dtype_and_count_mismatches() -> None:
    a = np.zeros((2, 3), np.float32)
    assert "shape" in compare_outputs([a], [a.reshape(3, 2)], TOLERANCES)[0]
    assert "dtype" in compare_outputs([a], [a.astype(np.float64)], TOLERANCES)[0]
    assert "output count" in compare_outputs([a], [a, a], TOLERANCES)[0]


def test_scalar_outputs_compare() -> None:
    assert compare_outputs([np.float32(1.0)], [np.array(1.0, np.float32)], TOLERANCES) == []
    assert compare_outputs([np.array(1.0, np.float32)], [np.array(5.0, np.float32)], TOLERANCES)


def test_max_abs_error_ignores_non_finite() -> None:
    e = [np.array([1.0, np.inf], np.float32)]
    a = [np.array([1.5, np.inf], np.float32)]
    assert max_abs_error(e, a) == 0.5


def test_random_inputs_are_deterministic_and_typed() -> None:
    specs = [("f", "float32", [2, 3]), ("i", "int64", [4]), ("b", "bool", []), ("u", "uint8", [5])]
    one, two = random_inputs(specs, 7), random_inputs(specs, 7)
    for name, dtype, shape in specs:
        assert one[name].dtype == np.dtype(dtype)
        assert one[name].shape == tuple(shape)
        np.testing.assert_array_equal(one[name], two[name])
    assert not np.array_equal(random_inputs(specs, 8)["f"], one["f"])
    assert np.all(np.abs(one["f"]) <= 2.0) and np.all(np.abs(one["i"]) <= 3)
