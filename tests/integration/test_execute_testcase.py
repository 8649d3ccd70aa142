"""TestCaseRunner on real TVM: joint opt/nopt code generation, caches, and how failures are judged."""

from __future__ import annotations

import multiprocessing
from pathlib import Path

import numpy as np
import pytest

tvm = pytest.importorskip("tvm")

from seedzer.execute.progress import ProgressSlot  # noqa: E402
from seedzer.execute.settings import ExecSettings  # noqa: E402
from seedzer.execute.testcase import TestCaseRunner, llvm_target, make_inputs, run_built  # noqa: E402
from seedzer.mutate.passes import apply_passes, optional_pass_names  # noqa: E402
from seedzer.seed import PassSpec, input_seed  # noqa: E402
from seedzer.tvmio import module_of, parse_primfunc  # noqa: E402

SEEDS = Path(__file__).parent.parent / "fixtures" / "seeds"
SEQ = [PassSpec("s_tir.LowerInitBlock"), PassSpec("tirx.StmtSimplify")]


def _runner(**kw: object) -> TestCaseRunner:
    return TestCaseRunner(ExecSettings(**kw), ProgressSlot(multiprocessing.get_context("fork")))  # type: ignore[arg-type]


def test_joint_build_gives_what_separate_tvm_compile_gives() -> None:
    runner = _runner(perf_rate=0.0)
    script = (SEEDS / "softmax.py").read_text()
    runner.timings = {}
    record = runner.execute(script, SEQ)
    assert not {"error", "invalid", "compare", "illformed"} & record.keys()
    assert runner.timings["jit"] > 0 and record["features"]
    # The cached results are those of the stock pipeline, built the usual way.
    func = parse_primfunc(script)
    inputs = make_inputs(func, input_seed(script), 1 << 22)
    with tvm.transform.PassContext(opt_level=3, disabled_pass=optional_pass_names()):
        nopt = run_built(tvm.compile(module_of(func), target=llvm_target()), inputs)
    with tvm.transform.PassContext(opt_level=3):
        opt = run_built(tvm.compile(apply_passes(module_of(func), SEQ), target=llvm_target()), inputs)
    cached_nopt = runner._nopt.get(script)
    assert cached_nopt is not None and cached_nopt.outputs is not None
    for got, want in zip(cached_nopt.outputs, nopt, strict=True):
        np.testing.assert_array_equal(got, want)
    (cached_opt,) = [v for k, v in runner._opt._data.items() if k[0] == script]
    assert cached_opt.outputs is not None
    for got, want in zip(cached_opt.outputs, opt, strict=True):
        np.testing.assert_array_equal(got, want)


def test_only_passes_changed_reuses_the_nopt_build() -> None:
    runner = _runner(perf_rate=0.0)
    script = (SEEDS / "relu.py").read_text()
    runner.execute(script, [])
    runner.timings = {}
    runner.execute(script, SEQ)
    # One lowering (opt) only: the nopt result came from the cache.
    assert len(runner._nopt) == 1 and runner.timings["build"] > 0


def test_a_pass_error_is_an_error_and_the_nopt_result_is_still_cached() -> None:
    runner = _runner(perf_rate=0.0)
    script = (SEEDS / "relu.py").read_text()
    record = runner.execute(script, [PassSpec("tirx.NoSuchPass")])
    assert record["error"]["stage"] == "pass" and record["error"]["pass"] == "tirx.NoSuchPass"
    assert "invalid" not in record
    assert any(f.startswith("err/pass/") for f in record["features"])
    assert runner._nopt.get(script) is not None


def test_unbuildable_ir_is_invalid_even_when_generated_jointly() -> None:
    runner = _runner(perf_rate=0.0)
    relu = (SEEDS / "relu.py").read_text()
    call = 'T.call_extern("float32", "seedzer_no_such_symbol", x0[v_i0, v_i1, v_i2, v_i3])'
    broken = relu.replace("T.max(x0[v_i0, v_i1, v_i2, v_i3], T.float32(0.0))", call)
    assert broken != relu
    record = runner.execute(broken, SEQ)
    # The joint module fails to link; each build is then generated alone, and the unoptimized one
    # failing makes the IR itself the culprit: an invalid input, not a finding.
    assert record["invalid"]["pass"] == "<nopt>"
    assert "error" not in record
