"""The kernel's one comparison of outputs: NaN and infinity positions, per-dtype tolerances, differences."""

import json

import numpy as np

from seedzer.kernel.comparison import Difference, compare, uniform_tolerances

TOL = uniform_tolerances(1e-5, 1e-6)


def test_compare_is_nan_and_inf_aware() -> None:
    a = np.array([1.0, np.nan, np.inf, -np.inf], dtype="float32")
    assert compare([a], [a.copy()], TOL) is None
    b = a.copy()
    b[1] = 0.0
    assert compare([a], [b], TOL).reason == "nan positions"  # type: ignore[union-attr]
    c = a.copy()
    c[2] = -np.inf
    assert compare([a], [c], TOL).reason == "inf positions"  # type: ignore[union-attr]
    d = a.copy()
    d[0] = 1.1
    diff = compare([a], [d], TOL)
    assert diff is not None and diff.reason == "values" and diff.at == (0,) and not diff.nonfinite_reference
    assert compare([np.arange(3)], [np.arange(3) + 1], TOL).count == 3  # type: ignore[union-attr]


def test_a_difference_only_where_the_reference_is_nonfinite_is_flagged_and_reported_last() -> None:
    ref = np.array([np.nan, 1.0], dtype="float32")
    got = np.array([0.0, 1.0], dtype="float32")  # simplification may legally drop a NaN
    diff = compare([ref], [got], TOL)
    assert diff is not None and diff.nonfinite_reference
    real = compare([ref, np.ones(2, "float32")], [got, np.zeros(2, "float32")], TOL)
    assert real is not None and real.output == 1 and not real.nonfinite_reference
    finite_ref_nan_out = compare([np.ones(2, "float32")], [np.array([np.nan, 1], "float32")], TOL)
    assert finite_ref_nan_out is not None and not finite_ref_nan_out.nonfinite_reference


def test_an_infinity_of_the_wrong_sign_is_flagged_apart_from_overflow_noise() -> None:
    # campF's filtered 1a2216f33dd-13841: x * 0.0 folded to +0.0, so 1/x gave +inf where both engines give -inf
    ref = np.array([-np.inf, 2.0], dtype="float32")
    flipped = compare([ref], [np.array([np.inf, 2.0], "float32")], TOL)
    assert flipped is not None and flipped.reason == "inf positions" and flipped.flipped_infinities
    assert flipped.nonfinite_reference  # between two TVM builds (no signed zeros kept) still excusable
    overflow = compare([ref], [np.array([-3.4e38, 2.0], "float32")], TOL)  # a finite value where -inf: noise
    assert overflow is not None and overflow.nonfinite_reference and not overflow.flipped_infinities
    assert "flipped_infinities" in flipped.to_json() and "flipped_infinities" not in overflow.to_json()


def test_a_difference_names_its_operator_only_when_known() -> None:
    diff = compare([np.zeros(2, "float32")], [np.ones(2, "float32")], TOL)
    assert diff is not None and "operator" not in diff.to_json()
    named = Difference.from_json({**diff.to_json(), "operator": "Relu"})
    assert named.operator == "Relu" and named.to_json()["operator"] == "Relu"


def test_tolerances_are_per_dtype_and_integers_are_exact() -> None:
    loose = {"float32": (1e-2, 1e-3)}
    assert compare([np.float32([1.0])], [np.float32([1.005])], loose) is None
    assert compare([np.float32([1.0])], [np.float32([1.005])], TOL) is not None
    assert compare([np.int32([1])], [np.int32([2])], loose) is not None
    assert compare([np.zeros(2)], [np.zeros(3)], TOL).reason.startswith("shape/dtype")  # type: ignore[union-attr]
    assert compare([np.zeros(2)], [], TOL).reason.startswith("output count")  # type: ignore[union-attr]


def test_difference_describe_and_round_trip() -> None:
    diff = compare([np.float32([1.0, 2.0])], [np.float32([1.0, 3.0])], TOL)
    assert diff is not None
    assert diff.describe().startswith("output 0: 1/2 elements differ (values")
    assert Difference.from_json(json.loads(json.dumps(diff.to_json()))) == diff


def test_every_output_is_compared_and_named() -> None:
    """Issue 53: the first difference is described and the other differing outputs listed with it; a
    caller that knows the model names each output (an index shifts with the outputs a mutation adds)."""
    from seedzer.kernel.comparison import named

    expected = [np.zeros(3, np.float32), np.ones(2, np.float32), np.zeros((2, 1), np.float32)]
    actual = [np.zeros(3, np.float32), np.full(2, 5.0, np.float32), np.array(0.0, np.float32)]
    diff = compare(expected, actual, {"float32": (1e-4, 1e-5)})
    assert diff is not None and diff.output == 1 and diff.also == ("2",)
    labelled = named(diff, ["y", "mean", "inv_std"])
    text = labelled.describe()
    assert text.startswith("output 1 'mean': 2/2 elements differ")
    assert text.endswith("also differing: output 2 'inv_std'")
    assert Difference.from_json(labelled.to_json()) == labelled
    assert "also" not in compare(expected[:2], actual[:2], {"float32": (1e-4, 1e-5)}).to_json()  # as recorded before
