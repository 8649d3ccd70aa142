"""The shared component a failure was raised in, from its innermost TVM frames."""

from __future__ import annotations

from seedzer.finding.component import component_of, innermost
from seedzer.kernel.common import Observation, Stage, Symptom


def _raised(*frames: str) -> Observation:
    return Observation(Symptom.EXCEPTION, Stage.PASS, "relax.LegalizeOps", "Check failed", frames=frames)


def test_a_topi_operator_is_named_by_its_module() -> None:
    found = component_of(_raised("transform (tvm/relax/transform/transform.py:10)",
                                 "resize2d (tvm/topi/image/resize.py:700)", "get_inx (tvm/topi/image/resize.py:168)"))
    assert found is not None and found.name == "topi.image.resize" and "get_inx" in found.frame


def test_the_arithmetic_analyzer_is_named_by_its_class_past_the_infrastructure() -> None:
    found = component_of(_raised("tvm::tirx::VectorizeLoop(...)", "tvm::arith::IntSetAnalyzer::operator()(...)",
                                 "tvm::tirx::ExprFunctor<...>::VisitExpr(...)"))
    assert found is not None and found.name == "arith.IntSetAnalyzer"


def test_the_onnx_importer_is_one_component_whatever_its_function() -> None:
    found = component_of(_raised("from_onnx (tvm/relax/frontend/onnx/onnx_frontend.py:6798)",
                                 "_construct_nodes (tvm/relax/frontend/onnx/onnx_frontend.py:6560)"))
    assert found is not None and found.name == "relax.frontend.onnx"


def test_a_pass_of_its_own_and_no_frames_are_no_component() -> None:
    assert component_of(_raised("tvm::tirx::LoopPartitioner::MakeFor(...)")) is None
    assert component_of(_raised()) is None
    assert innermost(["tvm::ffi::Function::operator()", "tvm::runtime::Foo"]) is None


def test_a_crash_report_gives_its_frames_innermost_last() -> None:
    crash = Observation(Symptom.CRASH, Stage.PASS, "relax.ConvertLayout", "killed by SIGFPE\n  at tvm::arith::"
                        "ConstIntBoundAnalyzer::Update(...)\n  at tvm::relax::ConvertLayout(...)", signal=8)
    found = component_of(crash)
    assert found is not None and found.name == "arith.ConstIntBoundAnalyzer"
