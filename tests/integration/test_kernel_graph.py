"""The graph kernel on real TVM and onnxruntime: a model, a Relax pass sequence, build, run, compare."""

from __future__ import annotations

from pathlib import Path

import onnx
import pytest
from onnx import TensorProto, helper

from seedzer.finding.graph.folder import KERNEL
from seedzer.finding.repro import render, run_repro
from seedzer.kernel.common import Stage, Symptom
from seedzer.kernel.graph import GraphMemo, observe_graph
from seedzer.kernel.graph_case import GraphCase, GraphPass
from seedzer.kernel.loader import Trace
from tests.integration.conftest import relu_add_model

pytestmark = pytest.mark.integration

CONVERT_LAYOUT = GraphPass("relax.ConvertLayout", {"desired_layouts": {"relax.nn.conv2d": ["NHWC", "default"]}})


def _case(model: onnx.ModelProto, *passes: GraphPass) -> GraphCase:
    model.ir_version = 8
    specs = tuple((i.name, "float32", tuple(d.dim_value for d in i.type.tensor_type.shape.dim))
                  for i in model.graph.input)
    return GraphCase(specs, tuple(passes)).with_model(model.SerializeToString())


def max_model() -> onnx.ModelProto:
    """ONNX Max of two vectors: TVM imports it as a stack and a max over the new axis."""
    a, b = (helper.make_tensor_value_info(n, TensorProto.FLOAT, [6]) for n in "ab")
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [6])
    return helper.make_model(helper.make_graph([helper.make_node("Max", ["a", "b"], ["y"])], "max", [a, b], [y]),
                             opset_imports=[helper.make_opsetid("", 17)])


def test_default_pipeline_and_an_in_contract_sequence_agree() -> None:
    memo = GraphMemo()
    assert observe_graph(_case(relu_add_model()), memo=memo).symptom is Symptom.OK
    trace = Trace()
    case = _case(relu_add_model(), GraphPass("relax.FoldConstant"), GraphPass("relax.LegalizeOps"))
    assert observe_graph(case, trace, memo).symptom is Symptom.OK
    assert "import" not in trace.timings and "<default>:build" not in trace.timings  # both remembered
    assert {"relax.LegalizeOps", "relax.LegalizeOps:well-formed", "build", "run", "compare"} <= set(trace.reached)


def test_a_failing_pass_is_an_exception_at_that_pass() -> None:
    got = observe_graph(_case(max_model(), GraphPass("relax.Normalize"), CONVERT_LAYOUT))
    assert (got.symptom, got.stage, got.pass_name, got.step_index) == (
        Symptom.EXCEPTION, Stage.PASS, "relax.ConvertLayout", 1)
    assert "Invalid SLayout" in got.message


def test_an_unknown_pass_is_an_exception_naming_it() -> None:
    got = observe_graph(_case(relu_add_model(), GraphPass("relax.NoSuchPass")))
    assert got.symptom is Symptom.EXCEPTION and "no Relax pass 'relax.NoSuchPass'" in got.message


def test_repro_carries_the_graph_kernel_and_reproduces(tmp_path: Path) -> None:
    observed = observe_graph(_case(max_model(), CONVERT_LAYOUT))
    case = _case(max_model(), CONVERT_LAYOUT).to_json() | {"expected": observed.to_json()}
    path = tmp_path / "repro.py"
    path.write_text(render(KERNEL, "onnx onnxruntime numpy", case, title="test"))
    ran = run_repro(path, timeout=300)
    assert ran.returncode == 1, ran.output
    assert "reproduced: the bug is present" in ran.output
    fixed = _case(max_model()).to_json() | {"expected": observed.to_json()}  # the same case without the pass
    path.write_text(render(KERNEL, "onnx onnxruntime numpy", fixed, title="test"))
    assert run_repro(path, timeout=300).returncode == 0
