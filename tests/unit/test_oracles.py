import numpy as np

from seedzer.oracles import ORACLES, judge, make_oracles
from seedzer.oracles.compare import compare_arrays
from seedzer.oracles.exceptions import is_precondition_error
from seedzer.oracles.signature import ir_names, normalize_message, signature
from seedzer.outcome import Outcome, Stage, Symptom

ALL = make_oracles(list(ORACLES))


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


def test_illformed_fires_and_beats_a_later_error() -> None:
    bad = {"stage": "pass", "pass": "tirx.UnrollLoop", "message": "multiple definitions of variable v_i0"}
    out = judge(ALL, {"illformed": bad})
    assert (out.symptom, out.stage, out.pass_name) == (Symptom.ILLFORMED, Stage.PASS, "tirx.UnrollLoop")
    # The IR broke at UnrollLoop; a later pass choking on it is a consequence, not the finding.
    later = judge(ALL, {"illformed": bad, "error": {"stage": "build", "message": "Check failed: x"}})
    assert later.symptom is Symptom.ILLFORMED
    assert judge(ALL, {"illformed": None, "features": []}).symptom is Symptom.OK


def test_perf_fires_only_on_a_confirmed_slowdown() -> None:
    perf = {"ratio": 3.2, "ratios": [3.5, 3.2, 3.4], "factor": 2.0, "repeats": 3, "last_pass": "tirx.UnrollLoop"}
    out = judge(ALL, {"perf": perf})
    assert (out.symptom, out.stage, out.pass_name) == (Symptom.PERF, Stage.RUN, "tirx.UnrollLoop")
    assert "x3.20" in out.message
    # A measured but unconfirmed ratio is no finding.
    assert judge(ALL, {"perf_ratio": 1.1}).symptom is Symptom.OK


def test_oracles_judge_in_registry_order() -> None:
    assert list(ORACLES)[:3] == ["crash", "hang", "illformed"]
    only_mismatch = make_oracles(["mismatch"])
    assert judge(only_mismatch, {"illformed": {"pass": "p", "message": "m"}}).symptom is Symptom.OK


RELU = '''@T.prim_func(s_tir=True)
def main(A: T.Buffer((T.int64(4),), "float32"), compute: T.Buffer((T.int64(4),), "float32")):
    for i0 in range(T.int64(4)):
        with T.sblock("compute"):
            v_i0 = T.axis.spatial(T.int64(4), i0)
            compute[v_i0] = T.max(A[v_i0], T.float32(0.0))
'''


def test_ir_names_finds_parameters_loops_axes_and_blocks() -> None:
    assert {"A", "compute", "i0", "v_i0"} <= ir_names(RELU)
    assert not {"T", "main", "for", "in"} & ir_names(RELU)


def test_signature_merges_variants_whose_names_have_no_digits() -> None:
    renamed = RELU.replace("compute", "out").replace("v_i0", "vx").replace("i0", "k").replace("A", "data")
    m1 = "ValueError: multiple definitions of variable v_i0 in compute, at <root>.body.seq[0].block.iter_vars[0]"
    m2 = "ValueError: multiple definitions of variable vx in out, at <root>.body.block.body.seq[1].block.iter_vars[0]"
    o1 = Outcome(Symptom.ILLFORMED, Stage.PASS, "tirx.UnrollLoop", m1)
    o2 = Outcome(Symptom.ILLFORMED, Stage.PASS, "tirx.UnrollLoop", m2)
    assert signature(o1) != signature(o2)  # the generic rules alone cannot tell "out" is a name
    assert signature(o1, ir_names(RELU)) == signature(o2, ir_names(renamed))
    different = Outcome(Symptom.ILLFORMED, Stage.PASS, "tirx.UnrollLoop", "ValueError: undefined variable vx")
    assert signature(different, ir_names(renamed)) != signature(o2, ir_names(renamed))
