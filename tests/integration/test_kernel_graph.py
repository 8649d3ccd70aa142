"""The graph kernel on real TVM and onnxruntime: a model, a Relax pass sequence, build, run, compare."""

from __future__ import annotations

import base64
import dataclasses
import random
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from seedzer.finding.graph.folder import KERNEL
from seedzer.finding.repro import render, run_repro
from seedzer.kernel.common import Stage, Symptom
from seedzer.kernel.graph.case import GraphCase, GraphPass, ModelMutation
from seedzer.kernel.graph.observe import GraphMemo, observe_graph
from seedzer.kernel.onnx.model import Trace
from seedzer.mutate.graph.model_mutators import edge_candidates, sample_model_mutation
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
    moved = dataclasses.replace(observed, pass_name="relax.Normalize")  # the same check, expected one pass away
    path.write_text(render(KERNEL, "onnx onnxruntime numpy", case | {"expected": moved.to_json()}, title="test"))
    ran = run_repro(path, timeout=300)
    assert ran.returncode == 1 and "now shows at relax.ConvertLayout" in ran.output, ran.output
    fixed = _case(max_model()).to_json() | {"expected": observed.to_json()}  # the same case without the pass
    path.write_text(render(KERNEL, "onnx onnxruntime numpy", fixed, title="test"))
    assert run_repro(path, timeout=300).returncode == 0


def _uoc_mutant(model: onnx.ModelProto, kind: str, seed: int = 3) -> ModelMutation:
    mutation = sample_model_mutation(model, kind, random.Random(seed))
    assert mutation is not None
    return mutation


def test_a_semantics_keeping_model_mutation_agrees_with_the_seed() -> None:
    """UOC and PIOC keep the seed's outputs: TVM on the mutant equals TVM's default pipeline on the seed."""
    base = _case(conv_relu_model())
    seed_model = onnx.load_model_from_string(base64.b64decode(str(base.model)))
    for kind in ("uoc", "pioc"):
        case = dataclasses.replace(base, model_mutations=(_uoc_mutant(seed_model, kind),))
        trace = Trace()
        assert observe_graph(case, trace).symptom is Symptom.OK, kind
        assert "mutate-model" in trace.reached and "<default>:build" in trace.reached


def test_a_spec_edge_mutant_is_judged_against_onnxruntime_on_itself() -> None:
    base = _case(max_model())
    gone = ModelMutation("edge", "no_such_tensor", params={"op": "Max", "changes": [{"attr": "axis", "value": 1}]})
    got = observe_graph(dataclasses.replace(base, model_mutations=(gone,)))
    assert got.symptom is Symptom.INVALID and got.pass_name == "mutate-model"  # a record that cannot apply
    bad = ModelMutation("edge", "y", params={"op": "Max", "changes": [{"attr": "no_such_attr", "value": 1}]})
    got = observe_graph(dataclasses.replace(base, model_mutations=(bad,)))
    assert got.symptom is Symptom.INVALID and got.pass_name == "validate"  # the specification refuses the mutant
    assert "onnx.checker refuses the model" in got.message
    leaky = _case(leaky_model())
    seed_model = onnx.load_model_from_string(base64.b64decode(str(leaky.model)))
    candidates = [m for m in edge_candidates(seed_model, random.Random(1)) if m.params.get("op") == "LeakyRelu"]
    assert candidates
    trace = Trace()
    observed = observe_graph(dataclasses.replace(leaky, model_mutations=(candidates[0],)), trace)
    assert observed.symptom in (Symptom.OK, Symptom.MISMATCH)
    assert trace.reference == "onnxruntime" and "<default>:build" not in trace.reached


def conv_relu_model() -> onnx.ModelProto:
    """Conv, Relu and an Add of the input's mean: targets and operands for UOC and PIOC."""
    w = numpy_helper.from_array(np.random.default_rng(0).standard_normal((4, 3, 3, 3)).astype("float32"), "w")
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 6, 6])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 4, 4])
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], kernel_shape=[3, 3]), helper.make_node("Relu", ["c"], ["r"]),
             helper.make_node("Add", ["r", "c"], ["y"])]
    return helper.make_model(helper.make_graph(nodes, "conv_relu", [x], [y], [w]),
                             opset_imports=[helper.make_opsetid("", 17)])


def leaky_model() -> onnx.ModelProto:
    """A LeakyRelu (its alpha is a spec-edge site)."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 5])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 5])
    node = helper.make_node("LeakyRelu", ["x"], ["y"], alpha=0.1)
    return helper.make_model(helper.make_graph([node], "leaky", [x], [y]), opset_imports=[helper.make_opsetid("", 17)])


def test_a_relax_mutation_that_fails_is_seedzers_not_tvms() -> None:
    """A campaign filed SymbolicShapes failing on a call_tir_inplace (DataflowUseInplaceCalls before it)
    as a bug: an error raised by Seedzer's own rewrite is an invalid test case."""
    got = observe_graph(_case(relu_add_model(), GraphPass("mutate.SplitDataflow", {"no_such_argument": 1})))
    assert (got.symptom, got.stage, got.pass_name) == (Symptom.INVALID, Stage.PASS, "mutate.SplitDataflow")
    assert "the Relax mutation does not apply" in got.message


def _slice_model() -> onnx.ModelProto:
    """Slice of an int64 vector of 5 (the campaign's case: a Shape output), backward from its end."""
    x = helper.make_tensor_value_info("x", TensorProto.INT64, [5])
    y = helper.make_tensor_value_info("y", TensorProto.INT64, None)
    inits = [numpy_helper.from_array(np.array([v], dtype=np.int64), name) for name, v in
             (("starts", -1), ("ends", -6), ("axes", 0), ("steps", -1))]
    node = helper.make_node("Slice", ["x", "starts", "ends", "axes", "steps"], ["y"])
    model = helper.make_model(helper.make_graph([node], "g", [x], [y], inits),
                              opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


def test_onnxruntime_departing_from_the_onnx_reference_is_not_tvm_s_bug() -> None:
    """A backward Slice with ``ends`` INT64_MAX: the specification clamps it to dim - 1, so the slice is
    empty (ONNX's reference implementation, numpy and TVM agree); onnxruntime returns all five
    elements. The edge oracle's mismatch with onnxruntime is then not TVM's: ``invalid``."""
    base = GraphCase((("x", "int64", (5,)),), ()).with_model(_slice_model().SerializeToString())
    assert observe_graph(base).symptom is Symptom.OK  # the seed's ends (-6: before the start) agree everywhere
    ends = ModelMutation("edge", "y", params={"op": "Slice", "changes": [
        {"input": 2, "value": [2**63 - 1], "dtype": "int64", "shape": [1]}]}, seed=1)
    got = observe_graph(dataclasses.replace(base, model_mutations=(ends,)))
    assert got.symptom is Symptom.INVALID, got.headline()
    assert "onnxruntime departs from the ONNX reference implementation, which agrees with TVM" in got.message


def _resize_record(mode: str) -> ModelMutation:
    """An insertion of Resize (linear) on the Conv's output, with ``mode`` and scales but no roi."""
    scales = {"value": [1.0, 1.0, 2.0, 2.0], "dtype": "float32", "shape": [4]}
    node = {"op": "Resize", "inputs": ["$", "", scales], "attrs": {"mode": "linear",
                                                                   "coordinate_transformation_mode": mode}}
    return ModelMutation("insert", "r", params={"op": "Resize", "domain": "", "nodes": [node], "exports": ["%0.0"]},
                         seed=2)


def test_an_inserted_operator_is_imported_and_judged_against_onnxruntime() -> None:
    base = _case(conv_relu_model())
    trace = Trace()
    got = observe_graph(dataclasses.replace(base, model_mutations=(_resize_record("half_pixel"),)), trace)
    assert got.symptom in (Symptom.OK, Symptom.MISMATCH), got.headline()
    assert "Resize" in trace.operators and trace.reference == "onnxruntime" and "validate" in trace.reached


def test_an_inserted_operator_the_reference_refuses_is_invalid_with_its_reason() -> None:
    """Resize switched to tf_crop_and_resize without the roi that mode requires (the audit's false
    alarm): onnx.checker passes and onnxruntime guesses, but the reference refuses: never compared."""
    case = dataclasses.replace(_case(conv_relu_model()), model_mutations=(_resize_record("tf_crop_and_resize"),))
    trace = Trace()
    got = observe_graph(case, trace)
    assert (got.symptom, got.stage, got.pass_name) == (Symptom.INVALID, Stage.MUTATE, "validate")
    assert got.message == ("the mutated model is not valid: onnx.reference refuses the model (Resize): "
                           "ValueError: roi cannot be None.")
    assert "import" not in trace.reached  # TVM never saw it


def test_special_inputs_are_judged_by_the_specification() -> None:
    case = dataclasses.replace(_case(relu_add_model()), input_mode="special", input_seed=3)
    assert GraphCase.from_json(case.to_json()).input_mode == "special"
    trace = Trace()
    got = observe_graph(case, trace)
    assert got.symptom is Symptom.OK, got.headline()  # TVM's Relu and Add handle NaN, Inf and -0 as specified
    assert trace.reference == "onnxruntime" and "<default>:build" not in trace.reached
    assert "onnx-reference" in trace.reached  # onnxruntime's Relu(-0.0) is +0.0: the reference was asked
