"""The kernel's shared parts: the one comparison, steps, cases, observations, failure identity."""

import json

import numpy as np
import pytest

from seedzer.kernel.common import (
    FUZZED,
    PIPELINE,
    REFERENCE_VS_MINIMAL,
    Case,
    Checks,
    Difference,
    Observation,
    Slowdown,
    Stage,
    Step,
    Symptom,
    compare,
    key_line,
    minimal_steps,
    reference_steps,
    same_failure,
    uniform_tolerances,
)

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


def test_program_step_lists() -> None:
    steps = [Step("a"), Step("b", optional=True), Step("v", {"on": True}, optional=True, minimal={"on": False}),
             Step("f", role=FUZZED, optional=True)]
    assert [s.name for s in reference_steps(steps)] == ["a", "b", "v"]
    minimal = minimal_steps(steps)
    assert [s.name for s in minimal] == ["a", "v"] and minimal[1].args == {"on": False}
    assert all(s.role == PIPELINE for s in minimal)


def test_case_and_observation_round_trip_through_json() -> None:
    obs = Observation(Symptom.MISMATCH, Stage.COMPARE, None, "m", comparison=REFERENCE_VS_MINIMAL,
                      difference=Difference(0, "values", 1, 4, 0.5, (1,), 1.0, 2.0),
                      slowdown=Slowdown(3.0, (3.0, 3.5), 0.3, 0.1, 2.0, 2))
    case = Case("script", (Step("tirx.X", {"k": 1}, {"c": {"d": 2}}, FUZZED, True),), 7, checks=Checks(perf=True),
                expected=obs)
    again = Case.from_json(json.loads(json.dumps(case.to_json())))
    assert again == case
    assert Observation.from_json({"symptom": "exception", "stage": "pass", "pass_name": "old", "message": "x"}) \
        .pass_name == "old"


def test_key_line_picks_the_failed_check_without_the_error_type() -> None:
    msg = "Traceback (most recent call last):\n  File \"x\", line 1\nInternalError: Check failed: (a) is false: b"
    assert key_line(msg) == "Check failed: (a) is false: b"
    assert key_line("TVMError: LLVM module verification failed") == "LLVM module verification failed"


@pytest.mark.parametrize(("expected", "observed", "same"), [
    (Observation(Symptom.EXCEPTION, Stage.PASS, "p", "Check failed: x_1"),
     Observation(Symptom.EXCEPTION, Stage.PASS, "p", "InternalError: Check failed: x_2"), True),
    (Observation(Symptom.EXCEPTION, Stage.PASS, "p", "Check failed: x"),
     Observation(Symptom.EXCEPTION, Stage.PASS, "q", "Check failed: x"), False),
    (Observation(Symptom.MISMATCH, comparison=REFERENCE_VS_MINIMAL),
     Observation(Symptom.MISMATCH, comparison="opt-vs-reference"), False),
    (Observation(Symptom.MISMATCH), Observation(Symptom.MISMATCH, comparison="opt-vs-reference"), True),
    (Observation(Symptom.PERF), Observation(Symptom.OK), False),
])
def test_same_failure(expected: Observation, observed: Observation, same: bool) -> None:
    assert same_failure(expected, observed) is same


def test_a_step_label_splits_back_into_program_and_step() -> None:
    from seedzer.kernel.common import MINIMAL, OPT, REFERENCE, label_parts, step_label

    assert label_parts("<reference>:codegen") == (REFERENCE, "codegen")
    assert label_parts("<minimal>:run") == (MINIMAL, "run")
    assert label_parts("codegen") == (OPT, "codegen") and label_parts("tirx.UnrollLoop") == (OPT, "tirx.UnrollLoop")
    for program in (OPT, REFERENCE, MINIMAL):
        assert label_parts(step_label("tirx.VectorizeLoop", program)) == (program, "tirx.VectorizeLoop")
