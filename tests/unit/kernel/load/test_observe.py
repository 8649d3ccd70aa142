"""The loader kernel's pure parts: comparison with its tolerances, inputs, flattening, the case, matching.

Imports the kernel (and so TVM) but builds nothing.
"""

from __future__ import annotations

import base64
import io
import runpy
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from seedzer.finding.repro import render
from seedzer.kernel.common import MODEL_VS_ONNXRUNTIME, Observation, Stage, Symptom
from seedzer.kernel.comparison import compare
from seedzer.kernel.load.observe import DIFFERENTIAL_STEPS, LoadCase, make_feeds, same_load_failure
from seedzer.kernel.onnx.model import INPUT_SEED, TOLERANCES, flatten, random_inputs

# --- the one comparison with the loader's (NNSmith's) tolerances -------------------------------


def test_tolerances_are_nnsmiths() -> None:
    assert TOLERANCES == {"float16": (1e-2, 1e-2), "bfloat16": (1e-2, 1e-2), "float32": (1e-2, 1e-3),
                          "float64": (1e-5, 1e-7)}


def test_equal_outputs_with_matching_nan_and_inf_agree() -> None:
    e = np.array([1.0, np.nan, np.inf, -np.inf], np.float32)
    assert compare([e], [e.copy()], TOLERANCES) is None


def test_nan_position_mismatch_is_reported() -> None:
    e = np.array([1.0, np.nan, 3.0], np.float32)
    a = np.array([1.0, 2.0, np.nan], np.float32)
    diff = compare([e], [a], TOLERANCES)
    assert diff is not None and diff.reason == "nan positions" and (diff.count, diff.size) == (2, 3)
    assert "2/3 elements differ (nan positions)" in diff.describe()


def test_inf_sign_mismatch_is_reported() -> None:
    e = np.array([np.inf, 1.0], np.float32)
    a = np.array([-np.inf, 1.0], np.float32)
    diff = compare([e], [a], TOLERANCES)
    assert diff is not None and diff.reason == "inf positions"


def test_inf_versus_finite_is_reported() -> None:
    e = np.array([np.inf, 1.0], np.float32)
    a = np.array([3.0e38, 1.0], np.float32)
    diff = compare([e], [a], TOLERANCES)
    assert diff is not None and diff.reason == "inf positions"


def test_float32_tolerance_accepts_rounding_and_rejects_real_errors() -> None:
    e = np.array([100.0, 0.0], np.float32)
    assert compare([e], [np.array([100.5, 0.0005], np.float32)], TOLERANCES) is None
    diff = compare([e], [np.array([102.0, 0.0], np.float32)], TOLERANCES)
    assert diff is not None and diff.reason == "values" and diff.at == (0,)
    assert "1/2 elements differ (values, rtol=0.01, atol=0.001)" in diff.describe()
    assert diff.max_abs_err == pytest.approx(2.0)


def test_float64_is_stricter_than_float32() -> None:
    e = np.array([1.0], np.float64)
    assert compare([e], [e + 1e-4], TOLERANCES) is not None
    assert compare([e.astype(np.float32)], [(e + 1e-4).astype(np.float32)], TOLERANCES) is None


def test_integers_and_bools_must_match_exactly() -> None:
    assert compare([np.array([1, 2], np.int64)], [np.array([1, 3], np.int64)], TOLERANCES) is not None
    diff = compare([np.array([True, False])], [np.array([True, True])], TOLERANCES)
    assert diff is not None and diff.at == (1,) and (diff.count, diff.size) == (1, 2)


def test_shape_dtype_and_count_mismatches() -> None:
    a = np.zeros((2, 3), np.float32)
    for other, needle in ((a.reshape(3, 2), "shape"), (a.astype(np.float64), "dtype")):
        diff = compare([a], [other], TOLERANCES)
        assert diff is not None and needle in diff.reason
    count = compare([a], [a, a], TOLERANCES)
    assert count is not None and "output count" in count.reason


def test_scalar_outputs_compare() -> None:
    assert compare([np.float32(1.0)], [np.array(1.0, np.float32)], TOLERANCES) is None
    assert compare([np.array(1.0, np.float32)], [np.array(5.0, np.float32)], TOLERANCES) is not None


def test_max_abs_error_ignores_non_finite() -> None:
    diff = compare([np.array([1.0, np.inf, 3.0], np.float32)], [np.array([1.5, np.inf, 3.0], np.float32)],
                   {"float32": (0.0, 0.1)})
    assert diff is not None and diff.max_abs_err == 0.5


# --- inputs ----------------------------------------------------------------------------------


def test_the_campaign_side_default_seed_is_the_kernels() -> None:
    from seedzer.load.loader import DEFAULT_INPUT_SEED, STEPS

    assert DEFAULT_INPUT_SEED == INPUT_SEED
    assert set(DIFFERENTIAL_STEPS) < set(STEPS)


def test_random_inputs_are_deterministic_and_typed() -> None:
    specs = [("f", "float32", (2, 3)), ("i", "int64", (4,)), ("b", "bool", ()), ("u", "uint8", (5,))]
    one, two = random_inputs(specs, 7), random_inputs(specs, 7)
    for name, dtype, shape in specs:
        assert one[name].dtype == np.dtype(dtype)
        assert one[name].shape == tuple(shape)
        np.testing.assert_array_equal(one[name], two[name])
    assert not np.array_equal(random_inputs(specs, 8)["f"], one["f"])
    assert np.all(np.abs(one["f"]) <= 2.0) and np.all(np.abs(one["i"]) <= 3)


def _npz(**arrays: Any) -> str:
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    return base64.b64encode(buf.getvalue()).decode()


def test_reference_inputs_replace_the_random_ones_that_fit() -> None:
    x = np.full((2, 3), 0.5, np.float32)
    case = LoadCase((("x", "float32", (2, 3)), ("k", "float32", (4,))), reference=_npz(**{
        "input:x": x, "input:k": np.zeros(3, np.float32)}))
    from seedzer.kernel.load.observe import reference_arrays

    feeds, notes = make_feeds(case, reference_arrays(case))
    np.testing.assert_array_equal(feeds["x"], x)
    np.testing.assert_array_equal(feeds["k"], random_inputs(case.specs, INPUT_SEED)["k"])
    (note,) = notes
    assert note.symptom is Symptom.INVALID and note.pass_name == "reference" and "'k'" in note.message


# --- VM results ----------------------------------------------------------------------------


class _Tensor:
    def __init__(self, value: Any) -> None:
        self.value = value

    def numpy(self) -> np.ndarray:
        return np.asarray(self.value)


def test_flatten_nested_results_in_order() -> None:
    out = flatten((_Tensor([1.0, 2.0]), (_Tensor(3), [np.float32(4.0), 5]), True))
    assert [o.tolist() for o in out] == [[1.0, 2.0], 3, 4.0, 5, True]
    assert all(isinstance(o, np.ndarray) for o in out)


def test_flatten_a_single_tensor() -> None:
    (only,) = flatten(_Tensor(np.eye(2)))
    np.testing.assert_array_equal(only, np.eye(2))


# --- the case -------------------------------------------------------------------------------


def _expected() -> Observation:
    return Observation(Symptom.EXCEPTION, Stage.LOAD, "import", "ValueError: axis 3 out of range")


def test_case_json_round_trip() -> None:
    case = LoadCase((("x", "float32", (2, 3)), ("n", "int64", ())), model_file="model.onnx", input_seed=5,
                      target={"kind": "llvm", "opt-level": 0}, differential=False, timeout=12.5,
                      reference=_npz(a=np.ones(2)), expected=_expected())
    data = case.to_json()
    assert data["specs"] == [["x", "float32", [2, 3]], ["n", "int64", []]]
    assert data["expected"]["pass"] == "import"
    assert LoadCase.from_json(data) == case
    assert LoadCase.from_json({**data, "unknown": 1}) == case


def test_with_model_embeds_it() -> None:
    case = LoadCase((), model_file="model.onnx").with_model(b"onnx bytes")
    assert case.model_file is None and base64.b64decode(str(case.model)) == b"onnx bytes"


def test_the_rendered_repro_carries_the_kernels_own_code(tmp_path: Path) -> None:
    specs = (("x", "float32", (2, 3)), ("k", "int64", (4,)))
    case = LoadCase(specs, model="AA==", expected=_expected()).to_json()
    text = render("onnx.inputs+onnx.runtime+onnx.conditioning+onnx.model+load.observe", "numpy onnx onnxruntime", case,
                  title="t")
    assert "from seedzer" not in text and "import seedzer" not in text
    (tmp_path / "repro.py").write_text(text)
    ns = runpy.run_path(str(tmp_path / "repro.py"), run_name="repro_under_test")  # up to, not including, main()
    ours, theirs = random_inputs(specs, 11), ns["random_inputs"](specs, 11)
    for name in ours:
        np.testing.assert_array_equal(ours[name], theirs[name])
    assert ns["TOLERANCES"] == TOLERANCES
    e, a = [np.array([1.0, np.nan], np.float32)], [np.array([1.5, np.nan], np.float32)]
    theirs_diff, ours_diff = ns["compare"](e, a, ns["TOLERANCES"]), compare(e, a, TOLERANCES)
    assert ours_diff is not None and theirs_diff.to_json() == ours_diff.to_json()
    assert ns["LoadCase"].from_json(ns["CASE"]).expected.to_json() == _expected().to_json()


# --- which failure is the expected one ------------------------------------------------------


def test_same_failure_needs_the_step_and_the_normalized_message() -> None:
    exp = _expected()
    assert same_load_failure(exp, Observation(Symptom.EXCEPTION, Stage.LOAD, "import", "ValueError: axis 5 out of "
                                                "range"))  # numbers are normalized away
    assert not same_load_failure(exp, Observation(Symptom.EXCEPTION, Stage.LOAD, "import", "ValueError: other"))
    assert not same_load_failure(exp, Observation(Symptom.EXCEPTION, Stage.LOAD, "legalize", exp.message))
    crash = Observation(Symptom.CRASH, Stage.LOAD, "import", "killed by signal SIGSEGV", signal=11)
    assert same_load_failure(crash, Observation(Symptom.CRASH, Stage.LOAD, "import", "killed by signal SIGBUS"))
    assert not same_load_failure(crash, Observation(Symptom.CRASH, Stage.LOAD, "build", crash.message))


def test_a_mismatch_must_differ_the_same_way() -> None:
    values = compare([np.zeros(4, np.float32)], [np.ones(4, np.float32)], TOLERANCES)
    nans = compare([np.zeros(4, np.float32)], [np.full(4, np.nan, np.float32)], TOLERANCES)
    assert values is not None and nans is not None

    def mismatch(diff: Any) -> Observation:
        return Observation(Symptom.MISMATCH, Stage.COMPARE, "compare", diff.describe(),
                           comparison=MODEL_VS_ONNXRUNTIME, difference=diff)

    assert same_load_failure(mismatch(values), mismatch(values))
    assert not same_load_failure(mismatch(values), mismatch(nans))
    legacy = Observation(Symptom.MISMATCH, Stage.COMPARE, "compare", "output 0: 3/4 out of tolerance")
    assert same_load_failure(legacy, mismatch(nans))  # an older finding does not say how
