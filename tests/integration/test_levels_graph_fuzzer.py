"""The graph level's fuzzer in a worker (real TVM, onnx, onnxruntime): insertions of the importer's
operators, special input values, and the operators each imported model exercised as features."""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import onnx
import pytest
import tvm

from seedzer.execute.records import FuzzTask
from seedzer.kernel.common import Symptom
from seedzer.levels.graph.entry import SPECIAL_MUTATION, GraphSeed
from seedzer.levels.graph.fuzzer import GraphFuzzer
from seedzer.levels.graph.settings import GraphSettings
from seedzer.load.importer_ops import OPERATOR_FEATURE
from seedzer.seed import PassSpec, passes_to_json
from tests.integration.conftest import conv_model

pytestmark = pytest.mark.integration
FOLD = passes_to_json([PassSpec("relax.FoldConstant", ())])


def _fuzzer(**weights: float) -> GraphFuzzer:
    config = GraphSettings(**{"passes": 0.0, "uoc": 0.0, "pioc": 0.0, "edge": 0.0, "insert": 0.0, "special": 0.0,
                            **weights})
    return GraphFuzzer(lambda stage, step, program: None, None, config)


def _task(tmp_path: Path) -> FuzzTask:
    path = tmp_path / "conv.onnx"
    model = conv_model()
    model.ir_version = 8
    onnx.save(model, path)
    seed = GraphSeed(str(path), (("x", "float32", (1, 3, 8, 8)),))
    return FuzzTask(1, "graph", seed.to_text(), "[]", 0, None, 5)


def test_an_insertion_is_recorded_run_and_its_operator_reported_as_exercised(tmp_path: Path) -> None:
    fuzzer = _fuzzer(insert=1.0)
    task = _task(tmp_path)
    script, passes, names = fuzzer.mutate(task, random.Random(3))
    assert names == ["model_insert"]
    grown = GraphSeed.from_text(script)
    inserted = grown.mutations[-1].params["op"]
    case = fuzzer.case(script, passes)
    assert case.model_mutations == grown.mutations and case.differential
    result = fuzzer.execute(case, passes)
    assert result.observation.pass_name != "validate"  # the sampler kept only what the specification accepts
    assert OPERATOR_FEATURE + inserted in result.features and OPERATOR_FEATURE + "Conv" in result.features
    assert fuzzer.exercised[inserted] == 1


def test_special_inputs_switch_the_entry_and_its_case(tmp_path: Path) -> None:
    fuzzer = _fuzzer(special=1.0)
    script, passes, names = fuzzer.mutate(_task(tmp_path), random.Random(1))
    assert names == [SPECIAL_MUTATION]
    case = fuzzer.case(script, passes)
    assert case.input_mode == "special" and case.input_seed == GraphSeed.from_text(script).input_seed
    got = fuzzer.execute(case, passes).observation  # judged by the specification, whatever it says
    assert got.symptom is Symptom.OK or got.comparison == "special-values" or got.message.startswith("special values:")


def test_a_graph_case_reports_the_passes_it_ran_and_triggered_without_the_default_build(tmp_path: Path) -> None:
    fuzzer = _fuzzer(passes=1.0)
    task = _task(tmp_path)
    result = fuzzer.execute(fuzzer.case(task.script, FOLD), FOLD)
    assert result.observation.symptom is Symptom.OK
    ran, triggered = set(result.passes_ran), set(result.passes_triggered)
    assert {"FoldConstant", "LegalizeOps", "tirx.MakePackedAPI"} <= ran  # the fuzzed pass and tvm.compile's
    assert "LegalizeOps" in triggered and triggered < ran and "_pipeline" not in ran


def test_a_case_run_again_reuses_its_build_and_reports_the_same(tmp_path: Path) -> None:
    """The second run of a case builds nothing (its module equals the first's) and reports the same
    observation, features, passes ran and triggered (the build's replayed)."""
    fuzzer = _fuzzer(passes=1.0)
    task = _task(tmp_path)
    case = fuzzer.case(task.script, FOLD)
    first, second = fuzzer.execute(case, FOLD), fuzzer.execute(case, FOLD)
    assert "reused_builds" not in first.timings and second.timings["reused_builds"] == 1.0
    assert second.observation == first.observation and second.observation.symptom is Symptom.OK
    assert (second.features, second.passes_ran, second.passes_triggered) == (
        first.features, first.passes_ran, first.passes_triggered)
    assert "tirx.MakePackedAPI" in second.passes_ran  # a pass of tvm.compile's, which did not run again


def _constant_task(tmp_path: Path) -> FuzzTask:
    """A model ``x + sigmoid(c)`` (``c`` an initializer, which the importer leaves as a call): the
    sigmoid is a call FoldConstant compiles and folds."""
    from onnx import TensorProto, helper, numpy_helper

    c = numpy_helper.from_array(np.full((2, 3), 1.5, dtype="float32"), "c")
    graph = helper.make_graph([helper.make_node("Sigmoid", ["c"], ["cc"]), helper.make_node("Add", ["x", "cc"], ["y"])],
                              "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])], [c])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    path = tmp_path / "const.onnx"
    onnx.save(model, path)
    return FuzzTask(1, "graph", GraphSeed(str(path), (("x", "float32", (2, 3)),)).to_text(), "[]", 0, None, 5)


def test_a_worker_s_fold_builds_are_reused_and_the_case_reports_the_same(tmp_path: Path) -> None:
    """A worker's graph fuzzer answers FoldConstant's ``tirx.build``: the second run of a case folds
    with the first's builds and reports the same observation, features, passes ran and triggered."""
    from seedzer.execute.settings import WorkerSettings
    from seedzer.levels.graph.fold_builds import FoldBuilds
    from seedzer.levels.graph.level import graph_fuzzer

    fuzzer = graph_fuzzer(WorkerSettings(), lambda stage, step, program: None, None)
    try:
        assert isinstance(fuzzer, GraphFuzzer)
        steps = passes_to_json([PassSpec("relax.LegalizeOps", ()), PassSpec("relax.FoldConstant", ())])
        case = fuzzer.case(_constant_task(tmp_path).script, steps)
        first, second = fuzzer.execute(case, steps), fuzzer.execute(case, steps)
        assert first.observation.symptom is Symptom.OK and fuzzer.folds.misses >= 1
        assert "reused_folds" not in first.timings and second.timings["reused_folds"] >= 1.0
        assert second.observation == first.observation
        assert (second.features, second.passes_ran, second.passes_triggered) == (
            first.features, first.passes_ran, first.passes_triggered)
        assert "FoldConstant" in second.passes_triggered and any(p.startswith("s_tir.") for p in second.passes_ran)
    finally:
        FoldBuilds.uninstall()


def test_a_case_builds_at_the_configured_llvm_opt_level_with_the_same_verdict(tmp_path: Path) -> None:
    task = _task(tmp_path)
    default = _fuzzer(passes=1.0).case(task.script, FOLD)
    assert json.loads(default.target) == {"kind": "llvm", "opt-level": 0}  # graph.llvm_opt_level's default
    levels = {0: default, 3: _fuzzer(passes=1.0, llvm_opt_level=3).case(task.script, FOLD)}
    assert tvm.target.Target(levels[3].target).attrs["opt-level"] == 3
    for case in levels.values():
        assert _fuzzer(passes=1.0).execute(case, FOLD).observation.symptom is Symptom.OK


def test_the_allocations_factors_weigh_the_strategies_and_the_step_mutators(tmp_path: Path) -> None:
    fuzzer = _fuzzer(passes=1.0, insert=1.0, special=1.0)
    assert fuzzer.strategy_weights({}) == {"passes": 1.0, "insert": 1.0, "special": 1.0}
    steps = {m.name: 0.25 for m in fuzzer.mutators}
    weighted = fuzzer.strategy_weights({"model_insert": 4.0, "inputs_special": 0.5, **steps})
    assert weighted["insert"] == 4.0 and weighted["special"] == 0.5 and abs(weighted["passes"] - 0.25) < 1e-9
    task = _task(tmp_path)
    only = next(m.name for m in fuzzer.mutators)
    made = {fuzzer.mutate(FuzzTask(1, "graph", task.script, "[]", 0, None, 5, (), (
        ("model_insert", 0.0), ("inputs_special", 0.0), *((m.name, 1.0 if m.name == only else 0.0)
                                                          for m in fuzzer.mutators))), random.Random(i))[2][0]
            for i in range(5)}
    assert made == {only}  # a factor of 0 is never drawn
