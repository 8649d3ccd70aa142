"""The worker-side halves of the oracles on real TVM: ill-formed IR, perf, caches, dedup."""

from __future__ import annotations

import multiprocessing
from pathlib import Path
from typing import Any

import pytest

tvm = pytest.importorskip("tvm")

from seedzer.execute.perf import PerfProbe  # noqa: E402
from seedzer.execute.progress import ProgressSlot  # noqa: E402
from seedzer.execute.settings import ExecSettings  # noqa: E402
from seedzer.execute.testcase import TestCaseRunner, make_inputs  # noqa: E402
from seedzer.mutate.passes import optional_pass_names  # noqa: E402
from seedzer.oracles import ORACLES, judge, make_oracles  # noqa: E402
from seedzer.outcome import Symptom  # noqa: E402
from seedzer.seed import PassSpec, input_seed  # noqa: E402
from seedzer.store.db import CampaignDB  # noqa: E402
from seedzer.store.findings import FindingStore  # noqa: E402
from seedzer.tvmio import parse_primfunc  # noqa: E402

SEEDS = Path(__file__).parent.parent / "fixtures" / "seeds"
UNROLL_ALL = PassSpec("tirx.UnrollLoop", (("auto_max_extent", 64), ("auto_max_step", 1024)))
ORACLE_SET = make_oracles(list(ORACLES))


@pytest.fixture(scope="module")
def runner() -> TestCaseRunner:
    return TestCaseRunner(ExecSettings(), ProgressSlot(multiprocessing.get_context("fork")))


def test_illformed_fires_on_unroll_of_block_ir_and_stays_quiet_without(runner: TestCaseRunner) -> None:
    relu = (SEEDS / "relu.py").read_text()
    bad = runner.execute(relu, [UNROLL_ALL])
    assert bad["illformed"]["pass"] == "tirx.UnrollLoop"
    assert "multiple definitions" in bad["illformed"]["message"]
    assert judge(ORACLE_SET, bad).symptom is Symptom.ILLFORMED
    clean = runner.execute(relu, [PassSpec("s_tir.LowerInitBlock"), PassSpec("tirx.StmtSimplify")])
    assert "illformed" not in clean and "error" not in clean
    assert judge(ORACLE_SET, clean).symptom is Symptom.OK


def test_noop_passes_are_reported_and_identical_builds_are_reused(runner: TestCaseRunner) -> None:
    relu = (SEEDS / "relu.py").read_text()
    # LowerInitBlock has nothing to lower in an elementwise kernel; running it twice changes nothing.
    seq = [PassSpec("s_tir.LowerOpaqueBlock"), PassSpec("s_tir.LowerInitBlock"), PassSpec("s_tir.LowerInitBlock")]
    runner.timings = {}
    first = runner.execute(relu, seq)
    assert first["noop_passes"] and 0 not in first["noop_passes"]
    assert set(first["noop_passes"]) <= {1, 2}
    runner.timings = {}
    again = runner.execute(relu, [*seq, PassSpec("s_tir.LowerInitBlock")])
    assert runner.timings.get("cached_builds") == 1  # same lowered IR: the opt build was not redone
    assert again["features"]


def _renamed(script: str) -> str:
    return script.replace("v_i0", "q_x").replace("v_i1", "q_y").replace("v_i2", "q_z").replace("v_i3", "q_w")


def test_dedup_merges_renamed_variants_of_one_real_failure(runner: TestCaseRunner, tmp_path: Path) -> None:
    relu = (SEEDS / "relu.py").read_text()
    variant = _renamed(relu)
    assert variant != relu and parse_primfunc(variant) is not None
    db = CampaignDB(tmp_path / "campaign.db")
    store = FindingStore(tmp_path / "findings", db, [])
    sigs = []
    for script in (relu, variant):
        rec = runner.execute(script, [UNROLL_ALL])
        outcome = judge(ORACLE_SET, rec)
        assert outcome.symptom is Symptom.ILLFORMED
        sigs.append(store.report(outcome, {"ir.py": script}, {}).signature)
    assert sigs[0] == sigs[1]
    (row,) = db.findings()
    assert row.count == 2


SLOW_ADD = """
@T.prim_func
def main(x0: T.Buffer((T.int64(2), T.int64(3), T.int64(4)), "float32"),
         x1: T.Buffer((T.int64(3), T.int64(1)), "float32"),
         T_add: T.Buffer((T.int64(2), T.int64(3), T.int64(4)), "float32")):
    for rep, i, j, k in T.grid(512, T.int64(2), T.int64(3), T.int64(4)):
        T_add[i, j, k] = x0[i, j, k] + x1[j, T.int64(0)] + T.Cast("float32", rep) * T.float32(0)
"""


class _SlowedProbe(PerfProbe):
    """Builds, as "optimized", the same addition recomputed 512 times (same result, far slower)."""

    def opt_module(self, func: Any, passes: list[PassSpec]) -> Any:
        slow = parse_primfunc(SLOW_ADD).with_attr("global_symbol", "main")
        return tvm.IRModule({"main": slow})


def test_perf_probe_confirms_a_constructed_slowdown_and_not_a_clean_build() -> None:
    script = (SEEDS / "add_broadcast.py").read_text()
    func = parse_primfunc(script)
    inputs = make_inputs(func, input_seed(script), 1 << 22)
    clean = PerfProbe(optional_pass_names(), factor=2.0, repeats=3).measure(script, func, [], inputs)
    assert not clean["slow"]
    slow = _SlowedProbe(optional_pass_names(), factor=2.0, repeats=3).measure(script, func, [], inputs)
    assert slow["slow"] and len(slow["ratios"]) == 3 and min(slow["ratios"]) > 2.0


class _Info:
    def __init__(self, name: str) -> None:
        self.name = name


def test_illformed_names_the_outermost_running_pass() -> None:
    from seedzer.execute.wellformed_watch import WellFormedWatch
    from seedzer.mutate.passes import apply_passes
    from seedzer.tvmio import module_of

    good = module_of(parse_primfunc((SEEDS / "relu.py").read_text()))
    bad = apply_passes(good, [UNROLL_ALL])
    watch = WellFormedWatch()
    watch.run_before_pass(good, _Info("s_tir.HoistIfThenElse"))
    watch.run_before_pass(good, _Info("s_tir.InsertHoistIfThenElseBasic"))
    watch.run_after_pass(good, _Info("s_tir.InsertHoistIfThenElseBasic"))
    assert watch.violation is None
    watch.run_before_pass(good, _Info("s_tir.InsertHoistIfThenElseBasic"))
    watch.run_after_pass(bad, _Info("s_tir.InsertHoistIfThenElseBasic"))
    watch.run_after_pass(bad, _Info("s_tir.HoistIfThenElse"))
    assert watch.violation is not None
    assert watch.violation["pass"] == "s_tir.HoistIfThenElse"
    assert watch.violation["inner"] == "s_tir.InsertHoistIfThenElseBasic"


def test_perf_probe_skips_kernels_too_slow_to_time() -> None:
    script = (SEEDS / "add_broadcast.py").read_text()
    func = parse_primfunc(script)
    inputs = make_inputs(func, input_seed(script), 1 << 22)
    probe = _SlowedProbe(optional_pass_names(), factor=2.0, repeats=3, max_call_seconds=1e-12)
    got = probe.measure(script, func, [], inputs)
    assert not got["slow"] and "skipped" in got
