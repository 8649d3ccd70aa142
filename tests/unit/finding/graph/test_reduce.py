"""The graph reducer: ddmin over the Relax sequence, then the house's ONNX graph reduction, with a
fake run (the real one forks a child running TVM); and the report draft. No TVM."""

from __future__ import annotations

import base64

import onnx
from onnx import TensorProto, helper

from seedzer.finding.graph.reduce import GraphPredicate, GraphReducer
from seedzer.finding.graph.report_md import GraphReportInput, render_report, title
from seedzer.kernel.common import Observation, Stage, Symptom
from seedzer.kernel.graph.case import GraphCase, GraphPass, ModelMutation

FOLD, NORM, DCE = GraphPass("relax.FoldConstant"), GraphPass("relax.Normalize"), GraphPass("relax.DeadCodeElimination")
LAYOUT = GraphPass("relax.ConvertLayout", {"desired_layouts": {"relax.nn.conv2d": ["NHWC", "default"]}})
ERROR = Observation(Symptom.EXCEPTION, Stage.PASS, "relax.ConvertLayout", "Invalid SLayout:can't find S in layoutAB")


def _model() -> onnx.ModelProto:
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])
    nodes = [helper.make_node("Relu", ["x"], ["r"]), helper.make_node("Neg", ["r"], ["n"]),
             helper.make_node("Max", ["n", "x"], ["m"]), helper.make_node("Abs", ["m"], ["y"])]
    model = helper.make_model(helper.make_graph(nodes, "g", [x], [y]), opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


def _ops(case: GraphCase) -> list[str]:
    assert case.model is not None
    return [n.op_type for n in onnx.load_model_from_string(base64.b64decode(case.model)).graph.node]


class Runs:
    """Fails the finding's way while ConvertLayout runs on a model with a Max node."""

    def __init__(self) -> None:
        self.count = 0

    def __call__(self, case: GraphCase, timeout: float) -> Observation:
        self.count += 1
        return ERROR if LAYOUT in case.passes and "Max" in _ops(case) else Observation.ok()


def _predicate() -> tuple[GraphPredicate, Runs]:
    runs = Runs()
    case = GraphCase((("x", "float32", (2, 3)),), (FOLD, NORM, LAYOUT, DCE)).with_model(_model().SerializeToString())
    same = lambda e, o: (e.symptom, e.pass_name) == (o.symptom, o.pass_name)  # noqa: E731
    return GraphPredicate(ERROR, case, 5.0, observe=runs, match=same), runs


def test_the_sequence_then_the_model_are_reduced() -> None:
    predicate, runs = _predicate()
    seen: list[tuple[int, int]] = []
    result = GraphReducer(predicate, 60.0, on_progress=lambda p, m: seen.append((len(p), len(m.graph.node)))
                          ).reduce((FOLD, NORM, LAYOUT, DCE), _model())
    assert result.reproduced and result.complete
    assert result.passes == (LAYOUT,) and [n.op_type for n in result.model.graph.node] == ["Max"]
    assert (result.passes_before, result.nodes_before, result.nodes) == (4, 4, 1)
    assert result.evaluations == runs.count
    assert seen[-1] == (1, 1) and "ddmin-passes" in result.stats and "ddmin-nodes" in result.stats
    assert result.stats["ddmin-passes"].size_removed == {"passes": 3}


def test_a_case_that_no_longer_fails_is_not_reduced() -> None:
    predicate, _ = _predicate()
    result = GraphReducer(predicate, 60.0).reduce((FOLD, NORM, DCE), _model())
    assert not result.reproduced and result.passes == (FOLD, NORM, DCE) and result.nodes == 4


def test_the_case_s_own_model_keeps_the_case_s_specs() -> None:
    predicate, _ = _predicate()
    assert predicate.case_for((LAYOUT,), _model()).specs == (("x", "float32", (2, 3)),)
    assert predicate.case_for((LAYOUT,)).passes == (LAYOUT,)


def test_report_names_the_pass_the_trigger_and_the_reduction() -> None:
    model = _model()
    report = GraphReportInput("0123456789ab", ERROR, "model_000007.onnx", model, model, (FOLD, LAYOUT), (LAYOUT,),
                              True, 12, 3.0, "exits with status 1", culprit=["relax.ConvertLayout"])
    text = render_report(report)
    assert title(report).startswith("[Bug][Relax] relax.ConvertLayout on Relu, Neg, Max, Abs: ")
    assert "1. `tvm.relax.transform.ConvertLayout(desired_layouts=" in text
    assert "pip install apache-tvm==0.27.0.post1 onnx onnxruntime numpy" in text
    assert "from 2 to 1 pass(es)" in text and "exits with status 1" in text


UOC_A = ModelMutation("uoc", "r", ("x", "r"), ("Add",), seed=1)
UOC_B = ModelMutation("uoc", "n", ("x", "n"), ("Mul",), seed=2)
PIOC = ModelMutation("pioc", "m", (), ("Sub",), seed=3)


class MetamorphicRuns:
    """A mismatch only while the PIOC relation is applied on top of the first UOC one (the PIOC one
    cannot be applied without it: the case is then invalid), under ConvertLayout, with a Max node."""

    def __init__(self) -> None:
        self.mutations: list[tuple[ModelMutation, ...]] = []

    def __call__(self, case: GraphCase, timeout: float) -> Observation:
        self.mutations.append(case.model_mutations)
        if PIOC in case.model_mutations and UOC_A not in case.model_mutations:
            return Observation(Symptom.INVALID, Stage.MUTATE, None, "pioc: target m needs r's relation")
        fails = PIOC in case.model_mutations and LAYOUT in case.passes and "Max" in _ops(case)
        return MISMATCH if fails else Observation.ok()


MISMATCH = Observation(Symptom.MISMATCH, Stage.RUN, None, "output 0: max abs diff 3.5")


def test_relations_are_reduced_before_the_sequence_and_the_model_keeping_those_others_build_on() -> None:
    runs = MetamorphicRuns()
    case = GraphCase((("x", "float32", (2, 3)),), (FOLD, LAYOUT, DCE), model_mutations=(UOC_A, UOC_B, PIOC)
                     ).with_model(_model().SerializeToString())
    same = lambda e, o: (e.symptom, e.stage) == (o.symptom, o.stage)  # noqa: E731
    predicate = GraphPredicate(MISMATCH, case, 5.0, observe=runs, match=same)
    saved: list[tuple[int, ...]] = []
    result = GraphReducer(predicate, 60.0, on_progress=lambda p, m: saved.append(
        (len(predicate.mutations), len(p), len(m.graph.node)))).reduce((FOLD, LAYOUT, DCE), _model())
    assert result.reproduced and result.complete
    assert result.mutations == (UOC_A, PIOC) and result.mutations_before == 3
    assert result.passes == (LAYOUT,) and [n.op_type for n in result.model.graph.node] == ["Max"]
    first_without_uoc_b = next(i for i, m in enumerate(runs.mutations) if UOC_B not in m)
    first_one_pass = next(i for i, m in enumerate(runs.mutations) if len(m) == 2 and m == (UOC_A, PIOC))
    assert first_without_uoc_b <= first_one_pass  # relations first
    assert all(m == (UOC_A, PIOC) for m in runs.mutations[-3:])  # the later stages keep the minimal relations
    assert result.stats["ddmin-mutations"].size_removed == {"mutations": 1}
    assert saved[-1] == (2, 1, 1)
    assert predicate.case_for(result.passes).model_mutations == (UOC_A, PIOC)


def test_report_lists_the_relations_and_what_they_promise() -> None:
    model = _model()
    report = GraphReportInput("0123456789ab", MISMATCH, "model_000007.onnx", model, model, (LAYOUT,), (LAYOUT,),
                              True, 12, 3.0, "exits with status 1", mutations=(UOC_A, PIOC))
    text = render_report(report)
    assert f"- `{UOC_A.label()}`" in text and f"- `{PIOC.label()}`" in text
    assert "the model below is the seed; `repro.py` builds the mutant from it" in text
    assert "TVM must give both the same outputs" in text


def test_report_shows_the_failing_model_its_opset_and_what_else_it_needs() -> None:
    """Issue 53: the report's trigger is the model that fails (the mutant), with the opset the mutations
    raised it to and what the failure needs besides the model."""
    from seedzer.finding.meta import ModelRecord

    model = _model()
    record = ModelRecord("model.onnx", "seed.onnx", "model_000007.onnx", "a", "b", {"": 18}, {"": 14},
                         (UOC_A.label(),), ("after tvm.relax.frontend.onnx.from_onnx, the Relax steps "
                                            "relax.ConvertLayout (passes.json)",))
    report = GraphReportInput("0123456789ab", MISMATCH, "model_000007.onnx", model, model, (LAYOUT,), (LAYOUT,),
                              True, 12, 3.0, "exits with status 1", mutations=(UOC_A,), failing=model, record=record)
    text = render_report(report)
    assert "the model below is the mutant (`reduced/model.onnx`)" in text
    assert "opset: ai.onnx 18, raised by the model mutations from the seed's ai.onnx 14: the model needs it" in text
    assert "- after tvm.relax.frontend.onnx.from_onnx, the Relax steps relax.ConvertLayout" in text
