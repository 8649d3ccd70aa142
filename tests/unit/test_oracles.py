import numpy as np

from seedzer.oracles import judge, make_oracles
from seedzer.oracles.compare import compare_arrays
from seedzer.oracles.exceptions import is_precondition_error
from seedzer.oracles.signature import normalize_message, signature
from seedzer.outcome import Outcome, Stage, Symptom

ALL = make_oracles(["crash", "hang", "exception", "mismatch"])


def test_clean_record_is_ok() -> None:
    assert judge(ALL, {"features": ["a"]}).symptom is Symptom.OK


def test_crash_and_hang() -> None:
    crash = judge(ALL, {"death": {"kind": "signal", "stage": "build", "pass": "LoopPartition", "signal": 11}})
    assert (crash.symptom, crash.stage, crash.pass_name) == (Symptom.CRASH, Stage.BUILD, "LoopPartition")
    hang = judge(ALL, {"death": {"kind": "timeout", "stage": "run"}})
    assert hang.symptom is Symptom.HANG and hang.stage is Stage.RUN


def test_exception_vs_precondition() -> None:
    bug = judge(ALL, {"error": {"stage": "pass", "pass": "X", "message": "Check failed: a == b"}})
    assert bug.symptom is Symptom.EXCEPTION
    pre = judge(ALL, {"error": {"stage": "pass", "pass": "X",
                                "message": "LowerIntrin must be called after BindTarget"}})
    assert pre.symptom is Symptom.INVALID


def test_disabled_exception_oracle_does_not_count_errors_as_ok() -> None:
    only_crash = make_oracles(["crash"])
    assert judge(only_crash, {"error": {"stage": "build", "message": "boom"}}).symptom is Symptom.INVALID


def test_mismatch_needs_determinism() -> None:
    rec = {"compare": {"mismatch": True, "deterministic": True, "detail": {"reason": "values", "buffer": 1}}}
    assert judge(ALL, rec).symptom is Symptom.MISMATCH
    rec["compare"]["deterministic"] = False
    assert judge(ALL, rec).symptom is Symptom.INVALID


def test_compare_nan_inf_aware() -> None:
    a = np.array([1.0, np.nan, np.inf, -np.inf], dtype="float32")
    assert compare_arrays([a], [a.copy()], 1e-5, 1e-6) is None
    b = a.copy()
    b[1] = 0.0
    assert compare_arrays([a], [b], 1e-5, 1e-6)["reason"] == "nan positions"
    c = a.copy()
    c[2] = -np.inf
    assert compare_arrays([a], [c], 1e-5, 1e-6)["reason"] == "inf positions"
    d = a.copy()
    d[0] = 1.1
    assert compare_arrays([a], [d], 1e-5, 1e-6)["reason"] == "values"
    assert compare_arrays([np.arange(3)], [np.arange(3) + 1], 0, 0)["count"] == 3


def test_signature_merges_renamed_variables() -> None:
    m1 = 'InternalError: Check failed: (v_i0 < 16) is false: index "ax1_3" out of /src/a.cc:123'
    m2 = 'InternalError: Check failed: (v_k7 < 32) is false: index "ax2_0" out of /src/a.cc:456'
    o1 = Outcome(Symptom.EXCEPTION, Stage.PASS, "StorageRewrite", m1)
    o2 = Outcome(Symptom.EXCEPTION, Stage.PASS, "StorageRewrite", m2)
    assert normalize_message(m1) == normalize_message(m2)
    assert signature(o1) == signature(o2)
    other_pass = Outcome(Symptom.EXCEPTION, Stage.PASS, "LoopPartition", m1)
    assert signature(other_pass) != signature(o1)


def test_precondition_patterns() -> None:
    assert is_precondition_error("Pass X must be called after Y")
    assert not is_precondition_error("Check failed: (n > 0) is false")
