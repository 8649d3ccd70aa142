"""The worker's mutant bounds on real TVM: an out-of-bounds mutant is not run (invalid at mutate,
one coverage feature per bound kind, counted), the rest run, and the perf oracle skips big scripts."""

from __future__ import annotations

import dataclasses
import multiprocessing
import random
from pathlib import Path

import pytest

pytest.importorskip("tvm")

from seedzer.config import BoundsConfig
from seedzer.execute.fuzzing import SlotProgress
from seedzer.execute.progress import ProgressSlot
from seedzer.execute.records import FuzzTask
from seedzer.execute.settings import ExecSettings, WorkerSettings
from seedzer.kernel.common import Observation, Stage, Symptom
from seedzer.levels.tir.fuzzer import TirFuzzer, error_feature
from seedzer.seed import PassSpec, passes_to_json

RELU = (Path(__file__).parent.parent.parent.parent / "fixtures" / "seeds" / "relu.py").read_text()


def _fuzzing(**bounds: int | float) -> TirFuzzer:
    settings = WorkerSettings(exec=ExecSettings(perf_rate=1.0), bounds=BoundsConfig(**bounds))  # type: ignore[arg-type]
    return TirFuzzer(settings, SlotProgress(ProgressSlot(multiprocessing.get_context("fork"))), None)


def test_an_out_of_bounds_mutant_is_not_run_and_is_invalid_at_mutate_with_a_coarse_feature() -> None:
    fuzzing = _fuzzing()
    passes = passes_to_json([PassSpec("tirx.UnrollLoop", (("auto_max_step", 1024),))])
    task = FuzzTask(1, "tir", RELU, passes, failures=0, other_passes=None, rng_seed=7)
    script, mutant_passes, _ = fuzzing.mutate(task, random.Random(7))
    result = fuzzing.execute(fuzzing.case(script, mutant_passes), mutant_passes)
    got = result.observation
    assert (got.symptom, got.stage) == (Symptom.INVALID, Stage.MUTATE)
    assert got.message.startswith("bounds: UnrollLoop auto_max_step=1024")
    assert result.features == ["err/mutate/bounds/unroll-step"]
    assert result.timings == {}  # nothing ran
    assert fuzzing.stats.out_of_bounds["unroll-step"] == 1
    # the same test case given as is (not the mutant just made) runs
    again = fuzzing.execute(fuzzing.case(script, mutant_passes), mutant_passes)
    assert again.observation.symptom is not Symptom.INVALID and again.timings


def test_a_mutant_within_bounds_runs() -> None:
    fuzzing = _fuzzing()
    task = FuzzTask(1, "tir", RELU, "[]", failures=0, other_passes=None, rng_seed=3)
    script, passes, _ = fuzzing.mutate(task, random.Random(3))
    assert fuzzing.out_of_bounds is None
    result = fuzzing.execute(fuzzing.case(script, passes), passes)
    assert result.observation.stage is not Stage.MUTATE and result.timings


def test_bound_features_are_one_per_kind_and_other_errors_keep_their_message() -> None:
    def feature(message: str, stage: Stage = Stage.MUTATE) -> str | None:
        return error_feature(Observation(Symptom.INVALID, stage, None, message))

    assert feature("bounds: script grew 5.1x written out") == feature("bounds: script grew 9.0x written out")
    assert feature("bounds: script grew 5.1x written out") != feature("bounds: unrolled nest of 128 iterations")
    assert feature("unusable test case: x") == "err/mutate/None/unusable test case: x"


def test_the_perf_oracle_times_only_scripts_up_to_the_bound() -> None:
    small, big = _fuzzing(), _fuzzing(perf_max_script_bytes=len(RELU.encode()) - 1)
    assert small.case(RELU, "[]").checks.perf
    assert not big.case(RELU, "[]").checks.perf
    assert dataclasses.replace(big.case(RELU, "[]").checks, perf=True) == small.case(RELU, "[]").checks


def test_a_test_case_reports_every_pass_it_ran_and_the_ones_that_changed_the_ir() -> None:
    fuzzing = _fuzzing()
    passes = passes_to_json([PassSpec("s_tir.ConvertBlocksToOpaque", ()), PassSpec("tirx.RemoveNoOp", ())])
    result = fuzzing.execute(fuzzing.case(RELU, passes), passes)
    assert result.observation.symptom is Symptom.OK
    ran, triggered = set(result.passes_ran), set(result.passes_triggered)
    assert {"tirx.MakePackedAPI", "s_tir.ConvertBlocksToOpaque", "tirx.RemoveNoOp"} <= ran  # pipeline and fuzzed
    assert "tirx.MakePackedAPI" in triggered and triggered < ran
