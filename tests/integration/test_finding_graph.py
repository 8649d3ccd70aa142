"""Graph findings with the real TVM 0.27: a Relax ConvertLayout failure filed, reproduced standalone,
gated (minimal sequence, culprit), triaged, and its reduced ``repro.py`` run in a clean interpreter.

``relax.ConvertLayout`` (asked for NHWC conv2d) fails on a model with no conv2d at all when an
element-wise ``Max`` of two 2-D tensors is in it: ``Invalid SLayout: can't find S in source layout``. The
importer makes ``Max`` a ``stack`` then a ``max``; the pass fails in ``max``'s layout rule, but not once its
input is a fresh parameter: ``stack``'s rule gave it a layout nothing asked for, so ``stack``'s layout rule is
the code at fault (:mod:`seedzer.finding.graph.layout_rule`).
"""

from __future__ import annotations

import dataclasses
import json
import pickle
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from seedzer.finding.graph.check import observe_forked, preload
from seedzer.finding.graph.folder import (
    PASSES_FILE,
    REDUCED_MODEL,
    REDUCED_REPRO,
    FailingCase,
    GraphFinding,
    finding_case,
    graph_log,
    graph_signature,
    read_passes,
)
from seedzer.finding.graph.gate import run_graph_gate_on_folder
from seedzer.finding.graph.layout_rule import locate_forked
from seedzer.finding.kind import TriageOptions
from seedzer.finding.layout import REPORT_FILE, REPRO_FILE
from seedzer.finding.meta import BUG, FindingMeta
from seedzer.finding.registry import kind
from seedzer.finding.repro import run_repro
from seedzer.finding.store import apply_verdict, dump
from seedzer.kernel.common import Stage, Symptom
from seedzer.kernel.graph.case import GraphCase, GraphPass
from seedzer.oracles.signature import component_key

pytestmark = pytest.mark.integration

LAYOUT = GraphPass("relax.ConvertLayout", {"desired_layouts": {"relax.nn.conv2d": ["NHWC", "default"]}})
SEQUENCE = (GraphPass("relax.FoldConstant"), GraphPass("relax.Normalize"), LAYOUT,
            GraphPass("relax.DeadCodeElimination"))
NO_SEEDZER = "import runpy, sys; sys.modules['seedzer'] = None; runpy.run_path('repro.py', run_name='__main__')"


def _model() -> onnx.ModelProto:
    """Relu, Neg, Max, Abs over a 2x3 input: no conv2d anywhere."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])
    nodes = [helper.make_node("Relu", ["x"], ["r"]), helper.make_node("Neg", ["r"], ["n"]),
             helper.make_node("Max", ["n", "x"], ["m"]), helper.make_node("Abs", ["m"], ["y"])]
    model = helper.make_model(helper.make_graph(nodes, "g", [x], [y]), opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model, full_check=True)
    return model


def _run_clean(folder: Path) -> subprocess.CompletedProcess[str]:
    """Run ``folder/repro.py`` in a fresh isolated interpreter where importing seedzer fails."""
    return subprocess.run([sys.executable, "-I", "-c", NO_SEEDZER], cwd=folder, capture_output=True, text=True,
                          timeout=600, env={"PYTHONPATH": str(folder)})


def _file(tmp_path: Path) -> tuple[Path, FindingMeta]:
    """Run the case as a worker would (in a forked child) and file its failure as the campaign does."""
    preload()
    data = _model().SerializeToString()
    case = GraphCase((("x", "float32", (2, 3)),), SEQUENCE, timeout=120.0)
    observed = observe_forked(case.with_model(data), 300.0)
    assert observed.symptom is Symptom.EXCEPTION and observed.stage is Stage.PASS, observed.headline()
    assert observed.pass_name == "relax.ConvertLayout" and "Invalid SLayout" in observed.message
    meta = FindingMeta(signature=graph_signature(observed, case.passes), kind="graph", observation=observed,
                       model="model.onnx", origin="model_000000.onnx")
    folder = tmp_path / "findings" / meta.signature
    return dump(folder, GraphFinding(meta, case, data, graph_log(observed))), meta


def test_a_convert_layout_finding_is_filed_gated_triaged_and_reproduced(tmp_path: Path) -> None:
    folder, meta = _file(tmp_path)
    assert read_passes((folder / PASSES_FILE).read_text()) == SEQUENCE

    clean = _run_clean(folder)  # the filed repro.py: the bug is present
    assert clean.returncode == 1, clean.stdout + clean.stderr
    assert "reproduced: the bug is present" in clean.stdout

    verdict = run_graph_gate_on_folder(str(folder))  # the gate: a bug in stack's layout rule, minimal sequence
    assert verdict.verdict == BUG, verdict.reason
    assert (verdict.rule, verdict.culprit) == ("culprit", ["relax.stack.FRelaxInferLayout"])
    assert verdict.at_fault is not None and "relax.max" in verdict.at_fault.evidence, verdict.at_fault
    assert verdict.root == component_key(verdict.observation, "relax.stack.FRelaxInferLayout",
                                         keyed_on="layout rule").digest()
    assert isinstance(verdict.case, FailingCase) and verdict.case.case.passes == (LAYOUT,)
    assert verdict.case.model == _model().SerializeToString()  # no model mutation: the seed is the failing model
    unpickle = ("import pickle, sys; pickle.loads(sys.stdin.buffer.read()); "
                "print(sorted(m for m in sys.modules if m.split('.')[0] in ('tvm', 'onnx', 'onnxruntime')))")
    got = subprocess.run([sys.executable, "-c", unpickle], input=pickle.dumps(verdict), capture_output=True,
                         timeout=120, check=True)
    assert got.stdout.decode().strip() == "[]", got.stdout.decode()

    apply_verdict(folder, meta, verdict)  # as the store settles it: the folder now starts from the minimal case
    assert meta.extra["gate_rule"] == "culprit" and meta.root_signature == verdict.root
    assert finding_case(folder).passes == (LAYOUT,)
    assert read_passes((folder / PASSES_FILE).read_text()) == (LAYOUT,)
    assert _run_clean(folder).returncode == 1

    result = kind("graph").triage(folder, meta, TriageOptions(minutes=4.0))
    assert result.status == "reduced", (result, (folder / "reduced" / "state.json").read_text())
    assert (result.passes_before, result.passes_after) == (1, 1)
    assert result.size_before == 4 and result.size_after is not None and result.size_after <= 2
    assert "Max" in [n.op_type for n in onnx.load(folder / REDUCED_MODEL).graph.node]
    state = json.loads((folder / "reduced" / "state.json").read_text())
    assert state["verified"] is True and state["repro_exit"] == 1

    run = run_repro(folder / REDUCED_REPRO)  # the reduced repro.py, with python -I in its folder
    assert run.returncode == 1, run.output
    assert "reproduced: the bug is present" in run.output
    report = (folder / REPORT_FILE).read_text()
    assert "relax.ConvertLayout" in report and "pip install apache-tvm==0.27.0.post1 onnx onnxruntime numpy" in report
    assert (folder / REPRO_FILE).is_file()

    again = kind("graph").triage(folder, meta, TriageOptions(minutes=4.0))  # finished: resumed, not redone
    assert (again.status, again.tests, again.size_after) == ("reduced", result.tests, result.size_after)


SQUEEZE = GraphPass("relax.ConvertLayout", {"desired_layouts": {"relax.nn.conv2d": ["NHWC", "OHWI"]}})
FRESH = """
import json, sys
import onnx, tvm
from tvm import relax
from tvm.relax.frontend.onnx import from_onnx
model = onnx.load("model.onnx")
onnx.checker.check_model(model, full_check=True)
print("opset", {o.domain or "ai.onnx": o.version for o in model.opset_import})
mod = from_onnx(model)
with tvm.target.Target("llvm"):
    for step in json.load(open("passes.json")):
        try:
            mod = getattr(relax.transform, step["pass"].removeprefix("relax."))(**step["args"])(mod)
        except Exception as exc:
            print("FAILS", step["pass"], str(exc).strip().splitlines()[-1])
            sys.exit(1)
print("no failure")
"""
"""A user's program in a fresh interpreter that knows no Seedzer: the folder's model.onnx through onnx's
checker, TVM's importer and the finding's Relax passes (passes.json)."""


def _seed() -> onnx.ModelProto:
    """A 1x1 Conv of a 1x3x4x1 input at opset 14: TVM handles it, with or without ConvertLayout."""
    weight = numpy_helper.from_array(np.ones((2, 3, 1, 1), np.float32), "w")
    graph = helper.make_graph([helper.make_node("Conv", ["x", "w"], ["c"])], "conv",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 4, 1])],
                              [helper.make_tensor_value_info("c", TensorProto.FLOAT, [1, 2, 4, 1])], [weight])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
    model.ir_version = 8
    return model


def test_a_mutated_graph_finding_s_model_onnx_fails_on_its_own(tmp_path: Path) -> None:
    """Issue 53, deliverable 2: a graph finding reached through a model mutation (Squeeze(axes=[-1])
    inserted after the seed's Conv, opset raised 14 -> 17) and ConvertLayout, which then throws
    std::bad_alloc. Filed as the campaign files it, gated and settled: model.onnx is the mutant (not the
    seed, which is seed.onnx), declares opset 17, and fails alone in a fresh interpreter with only onnx
    and TVM (from_onnx + the finding's passes); meta.json and report.md say what it is."""
    from seedzer.finding.kind import FileSettings, Observed, Provenance
    from seedzer.kernel.graph.case import ModelMutation

    seed = _seed()
    pool = tmp_path / "pool" / "model_000003.onnx"
    pool.parent.mkdir()
    pool.write_bytes(seed.SerializeToString())
    axes = {"value": [-1], "dtype": "int64", "shape": [1]}
    squeeze = ModelMutation("insert", "c", params={"op": "Squeeze", "domain": "", "opset": 17, "exports": ["%0.0"],
                                                   "nodes": [{"op": "Squeeze", "inputs": ["$", axes]}]}, seed=5)
    case = GraphCase((("x", "float32", (1, 3, 4, 1)),), (GraphPass("relax.Normalize"), SQUEEZE),
                     model_mutations=(squeeze,), timeout=120.0)
    preload()
    observed = observe_forked(case.with_model(pool.read_bytes()), 300.0)
    assert (observed.symptom, observed.pass_name) == (Symptom.EXCEPTION, "relax.ConvertLayout"), observed.headline()
    assert "bad_alloc" in observed.message
    filed = kind("graph").file(Observed(observed, dataclasses.replace(case, model_file=str(pool)),
                                        Provenance(origin=str(pool))), FileSettings())
    folder = dump(tmp_path / "findings" / filed.meta.signature, filed.finding)
    assert (folder / "seed.onnx").read_bytes() == pool.read_bytes() and not (folder / "model.onnx").exists()

    verdict = run_graph_gate_on_folder(str(folder))
    assert verdict.verdict == BUG, verdict.reason
    meta = FindingMeta.load(folder)
    apply_verdict(folder, meta, verdict)  # as the store settles it (and writes meta.json)
    (folder / "meta.json").write_text(meta.dump(folder / "meta.json"))

    failing = onnx.load(folder / "model.onnx")
    assert "Squeeze" in [n.op_type for n in failing.graph.node]  # the mutant, not the seed
    assert (folder / "seed.onnx").read_bytes() == pool.read_bytes()
    record = FindingMeta.load(folder).failing_model
    assert record is not None and record.seed_origin == str(pool) and record.mutations == (squeeze.label(),)
    assert record.opset == {"": 17} and record.seed_opset == {"": 14}
    assert any("relax.ConvertLayout" in also for also in record.also)
    fresh = subprocess.run([sys.executable, "-I", "-c", FRESH], cwd=folder, capture_output=True, text=True,
                           timeout=600)
    assert fresh.returncode == 1, fresh.stdout + fresh.stderr
    assert "opset {'ai.onnx': 17}" in fresh.stdout and "FAILS relax.ConvertLayout" in fresh.stdout
    assert "bad_alloc" in fresh.stdout
    assert _run_clean(folder).returncode == 1  # and repro.py, from the seed and the recorded mutation

    result = kind("graph").triage(folder, FindingMeta.load(folder), TriageOptions(minutes=3.0))
    assert result.status == "reduced", result
    assert "Squeeze" in [n.op_type for n in onnx.load(folder / "reduced" / "model.onnx").graph.node]
    assert "Squeeze" not in [n.op_type for n in onnx.load(folder / "reduced" / "seed.onnx").graph.node]
    report = (folder / REPORT_FILE).read_text()
    assert "the model that fails: `model.onnx`" in report
    assert "opset: ai.onnx 17, raised by the model mutations from the seed's ai.onnx 14" in report


def test_a_convert_layout_failure_is_keyed_by_the_layout_rule_of_the_binding_it_fails_at() -> None:
    """Conv then Dropout: ConvertLayout to NHWC fails at the dropout (its registered rule is the unary
    element-wise one, which does not return a tuple's layouts for dropout's two outputs)."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 6, 6])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 4, 4])
    w = numpy_helper.from_array(np.ones((4, 3, 3, 3), np.float32), "w")
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"]), helper.make_node("Dropout", ["c"], ["y", "mask"])]
    model = helper.make_model(helper.make_graph(nodes, "g", [x], [y], [w]), opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    preload()
    case = GraphCase((("x", "float32", (1, 3, 6, 6)),), (SQUEEZE,), timeout=120.0).with_model(model.SerializeToString())
    observed = observe_forked(case, 300.0)
    assert (observed.symptom, observed.pass_name) == (Symptom.EXCEPTION, "relax.ConvertLayout"), observed.headline()
    found = locate_forked(case, observed, 60.0)
    assert found is not None and found.code == "relax.nn.dropout.FRelaxInferLayout", found
    assert "relax.nn.dropout" in found.evidence and "the first one that fails" in found.evidence


def test_a_bug_counted_without_a_gate_run_gets_its_failing_model(tmp_path: Path) -> None:
    """d53 audit: findings counted against a known root (no gate run) had no model.onnx, only the seed. The
    graph kind's model call writes the mutant the case fails on and returns its record."""
    import shutil

    folder = tmp_path / "finding"
    shutil.copytree(Path(__file__).parents[1] / "fixtures" / "corpus" / "d53-signed-zero-of-a-mean", folder)
    (folder / "model.onnx").unlink()
    meta = FindingMeta.load(folder)
    call = kind("graph").model_call(folder, meta)
    assert call is not None
    record = call.fn(*call.args)
    model = onnx.load(str(folder / "model.onnx"))
    seed = onnx.load(str(folder / "seed.onnx"))
    assert record is not None and record.mutations and record.file == "model.onnx"
    assert len(model.graph.node) > len(seed.graph.node)  # the inserted operator is in it
    assert kind("tir").model_call(folder, meta) is None
