"""Plain reproducers of the ONNX kinds on real TVM: a Relax pass failure of a graph finding (ConvertLayout
on the Max of two tensors: the module the pass receives, printed and shrunk), and an importer failure of
a load finding (a Reshape of an unknown shape: the model built with onnx.helper, valid by ONNX's checker,
onnxruntime and onnx.reference). Each is run in a clean interpreter: exit 1, no Seedzer, no blob."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

pytest.importorskip("tvm")

from seedzer.finding.graph.minimal_repro import GraphMinimalJob, make_graph_minimal
from seedzer.finding.load.minimal_repro import LoadMinimalJob, make_load_minimal
from seedzer.finding.minimal.program import IMPORTER, PASS_FAILURE, Made
from seedzer.finding.minimal.text import Docs
from seedzer.kernel.common import Observation, Stage, Symptom
from seedzer.kernel.graph.case import GraphCase, GraphPass

DOCS = Docs("t", (), "0.27.0.post1")


def _runs(text: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    (tmp_path / "minimal.py").write_text(text)
    return subprocess.run([sys.executable, "-I", "minimal.py"], cwd=tmp_path, capture_output=True, text=True,
                          timeout=300, check=False)


def test_a_failing_relax_pass_gets_the_module_it_receives_shrunk(tmp_path: Path) -> None:
    node = helper.make_node("Max", ["a", "b"], ["m"])
    relu = helper.make_node("Relu", ["m"], ["y"])
    graph = helper.make_graph([node, relu], "g", [helper.make_tensor_value_info(n, TensorProto.FLOAT, [4, 1, 2])
                                                  for n in ("a", "b")],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 1, 2])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)], ir_version=7)
    step = GraphPass("relax.ConvertLayout", {"desired_layouts": {"relax.nn.conv2d": ["NHWC", "OHWI"]}})
    expected = Observation(Symptom.EXCEPTION, Stage.PASS, "relax.ConvertLayout", "InternalError: Check failed: "
                           "(res != std::string::npos) is false: Invalid SLayout:can't find S in source layoutABCD",
                           step_index=0)
    case = GraphCase((("a", "float32", (4, 1, 2)), ("b", "float32", (4, 1, 2))), (step,), expected=expected)
    made = make_graph_minimal(GraphMinimalJob(case.with_model(model.SerializeToString()), None, DOCS, 60))
    assert isinstance(made, Made), made
    program = made.program
    assert program.form == PASS_FAILURE and program.component == "relax.ConvertLayout"
    assert "R.nn.relu" not in program.text and "R.max" in program.text  # shrunk to what fails
    assert "seedzer" not in program.text and "onnx" not in program.text
    run = _runs(program.text, tmp_path)
    assert run.returncode == 1 and "reproduced: the bug is present" in run.stdout, run.stdout + run.stderr


def test_an_importer_failure_is_a_valid_model_built_in_code(tmp_path: Path) -> None:
    nodes = [helper.make_node("Slice", ["x", "starts", "ends", "axes", "steps"], ["s"]),
             helper.make_node("Transpose", ["s"], ["t"], perm=[1, 0]),
             helper.make_node("Reshape", ["t", "shape"], ["y"])]
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [5, 2]),
                     helper.make_tensor_value_info("starts", TensorProto.INT64, [1]),
                     helper.make_tensor_value_info("ends", TensorProto.INT64, [1])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [None])],
        [numpy_helper.from_array(np.array(v, "int64"), n) for n, v in (("axes", [0]), ("steps", [1]), ("shape", [-1]))])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)], ir_version=7)
    expected = Observation(Symptom.EXCEPTION, Stage.LOAD, "import", "InternalError: Check failed: (data_ty->shape"
                           ".has_value()) is false: Reshape expects the input tensor to have known shape when there is "
                           "some dimension length to infer. However, the given input has no shape.")
    data = model.SerializeToString()
    made = make_load_minimal(LoadMinimalJob(data, data, expected, 20240601, DOCS, 60))
    assert isinstance(made, Made), made
    assert made.program.form == IMPORTER and made.program.component == "relax.frontend.onnx (Reshape)"
    assert made.validity == {"checker": "ok", "onnxruntime": "ok", "reference": "ok"}
    assert "helper.make_node('Reshape'" in made.program.text and "b64" not in made.program.text
    run = _runs(made.program.text, tmp_path)
    assert run.returncode == 1 and "reproduced: the bug is present" in run.stdout, run.stdout + run.stderr


def test_a_pass_failure_no_printed_module_shows_is_the_model_built_in_code_with_its_passes(tmp_path: Path) -> None:
    """LegalizeOps fails on a valid OneHot with axis=-2 (topi.one_hot reads a shape it does not have); a
    module printed after the import folds the constants away, so the model in code carries the bug."""
    from seedzer.finding.minimal.onnx_search import ImporterJob, make_importer_minimal

    node = helper.make_node("OneHot", ["i", "d", "v"], ["y"], axis=-2)
    graph = helper.make_graph([node], "g", [], [helper.make_tensor_value_info("y", TensorProto.INT64, [3, 2, 3])],
                              [numpy_helper.from_array(np.array([[0, 1, -1]] * 3, "int64"), "i"),
                               numpy_helper.from_array(np.array(2, "int64"), "d"),
                               numpy_helper.from_array(np.array([0, 1], "int64"), "v")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)], ir_version=7)
    step = GraphPass("relax.LegalizeOps", {})
    expected = Observation(Symptom.EXCEPTION, Stage.PASS, "relax.LegalizeOps", "IndexError: Index 2 out of bounds 2",
                           step_index=0)
    made = make_importer_minimal(ImporterJob((model,), expected, False, 20240601, DOCS, 60, (step,)))
    assert isinstance(made, Made), made
    assert made.program.component == "relax.LegalizeOps" and "relax.transform.LegalizeOps()(mod)" in made.program.text
    run = _runs(made.program.text, tmp_path)
    assert run.returncode == 1 and "reproduced: the bug is present" in run.stdout, run.stdout + run.stderr


def _observed(case: GraphCase) -> Observation:
    from seedzer.kernel.graph.observe import observe_graph

    return observe_graph(case)


def test_a_special_values_finding_gets_the_model_on_its_inputs_against_the_reference(tmp_path: Path) -> None:
    """Issue 53: a special-values mismatch had no minimal.py ("no Relax pass to build without"). TVM's Max
    loses a NaN that onnxruntime and onnx.reference keep: the model built in code, the special inputs
    written out exactly, TVM's output against both engines' (which must agree)."""
    import dataclasses

    from seedzer.finding.minimal.program import WRONG_RESULT

    graph = helper.make_graph([helper.make_node("Max", ["a", "b"], ["y"])], "g",
                              [helper.make_tensor_value_info(n, TensorProto.FLOAT, [16]) for n in ("a", "b")],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [16])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    case = GraphCase((("a", "float32", (16,)), ("b", "float32", (16,))), input_mode="special",
                     input_seed=2).with_model(model.SerializeToString())
    expected = _observed(case)
    assert expected.symptom is Symptom.MISMATCH and expected.comparison == "special-values", expected.headline()
    made = make_graph_minimal(GraphMinimalJob(dataclasses.replace(case, expected=expected), None, DOCS, 60))
    assert isinstance(made, Made), made
    program = made.program
    assert program.form == WRONG_RESULT and "ReferenceEvaluator" in program.text and "float('nan')" in program.text
    assert "seedzer" not in program.text
    run = _runs(program.text, tmp_path)
    assert run.returncode == 1 and "reproduced: the bug is present" in run.stdout, run.stdout + run.stderr


def test_a_wrong_output_dtype_is_a_wrong_result_of_the_plain_reproducer(tmp_path: Path) -> None:
    """Issue 53: Dropout's mask, which TVM gives as float32 where the specification says bool, had no
    minimal.py: its check compared values only (True equals 1.0). Now it compares dtype and shape as the
    kernel does."""
    import dataclasses

    from seedzer.kernel.graph.case import ModelMutation

    relu = helper.make_graph([helper.make_node("Relu", ["x"], ["r"])], "g",
                             [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
                             [helper.make_tensor_value_info("r", TensorProto.FLOAT, [2, 3])])
    model = helper.make_model(relu, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    dropout = ModelMutation("insert", "r", params={"op": "Dropout", "domain": "", "exports": ["%0.0", "%0.1"],
                                                   "nodes": [{"op": "Dropout", "inputs": ["$"], "outputs": 2}]}, seed=1)
    case = dataclasses.replace(GraphCase((("x", "float32", (2, 3)),)).with_model(model.SerializeToString()),
                               model_mutations=(dropout,))
    expected = _observed(case)
    assert expected.symptom is Symptom.MISMATCH and expected.difference is not None, expected.headline()
    assert "expected (2, 3) bool, got (2, 3) float32" in expected.message
    made = make_graph_minimal(GraphMinimalJob(dataclasses.replace(case, expected=expected), None, DOCS, 60))
    assert isinstance(made, Made), made
    run = _runs(made.program.text, tmp_path)
    assert run.returncode == 1 and "expected (2, 3) bool, got (2, 3) float32" in run.stdout, run.stdout + run.stderr
