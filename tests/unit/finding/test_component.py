"""The shared component a failure was raised in, from its TVM frames: real frames of the installed TVM
(``tests/frames.py``) and the shapes older Seedzers recorded."""

from __future__ import annotations

import dataclasses

from seedzer.finding.component import CONSTANT_FOLDER, IMPORTER, component_of, converter, innermost, legalization
from seedzer.kernel.common import Observation, Stage, Symptom
from tests.frames import real_failure


def _raised(*frames: str) -> Observation:
    return Observation(Symptom.EXCEPTION, Stage.PASS, "relax.LegalizeOps", "Check failed", frames=frames)


def test_an_importer_failure_names_the_converter_class_and_version() -> None:
    for name in ("sequence_at_negative_a", "sequence_at_negative_b"):
        found = component_of(real_failure(name))
        assert found is not None and found.name == "relax.frontend.onnx.SequenceAt._impl_v11", name


def test_a_failure_after_the_converter_returned_names_the_operator_being_converted() -> None:
    """PRelu's converter returned; the importer's normalize then failed in C++ type inference: the frame of
    the per-node dispatch records which converter it had called."""
    found = component_of(real_failure("prelu_rank0"))
    assert found is not None and found.name == "relax.frontend.onnx.PRelu._impl_v1"
    assert "NormalizeAxes" in real_failure("prelu_rank0").frames[-1]  # the innermost frame is the check, not the code


def test_an_older_frame_without_its_class_finds_it_in_the_installed_importer() -> None:
    """Frames recorded before frames carried qualified names: ``_impl_v11 (file:line)``."""
    frames = real_failure("sequence_at_negative_a").frames
    bare = next(f for f in frames if "SequenceAt._impl_v11" in f and "[" not in f)
    assert converter(bare.replace("SequenceAt._impl_v11", "_impl_v11")) == "relax.frontend.onnx.SequenceAt._impl_v11"
    assert converter("_construct_nodes (tvm/relax/frontend/onnx/onnx_frontend.py:6540)") is None


def test_a_topi_operator_outranks_the_tensor_expression_check_it_tripped() -> None:
    for name in ("rms_norm_legalize_ops", "rms_norm_fold_constant", "rms_norm_build"):
        found = component_of(real_failure(name))
        assert found is not None and found.name == "topi.nn.rms_norm", name


def test_codegens_missing_intrinsic_rule_is_named_by_the_operator() -> None:
    for op in ("cosh", "sinh"):
        found = component_of(real_failure(f"vectorized_{op}_codegen"))
        assert found is not None and found.name == f"codegen.intrin_rule.tirx.{op}"


def test_a_pass_of_its_own_is_no_component() -> None:
    assert component_of(real_failure("force_narrow_compact")) is None  # ForceNarrowIndexToInt32's IR, EQ's check
    assert component_of(_raised("tvm::tirx::LoopPartitioner::MakeFor(...)")) is None
    assert component_of(_raised()) is None
    assert innermost(["tvm::ffi::Function::operator()", "tvm::runtime::Foo"]) is None


def test_an_operator_implementation_outranks_a_helper_it_called() -> None:
    trilu = _raised("trilu (tvm/topi/transform.py:1030)", "get_const_int (tvm/topi/utils.py:80)")
    found = component_of(trilu)
    assert found is not None and found.name == "topi.transform"
    analyzer = _raised("resize2d (tvm/topi/image/resize.py:700)", "tvm::arith::CanonicalSimplifier::operator()(...)")
    found = component_of(analyzer)
    assert found is not None and found.name == "topi.image.resize"
    alone = component_of(_raised("get_const_int (tvm/topi/utils.py:80)"))
    assert alone is not None and alone.name == "topi.utils"  # a helper reached by no operator is named itself


def test_the_arithmetic_analyzer_is_named_by_its_class_past_the_infrastructure() -> None:
    found = component_of(_raised("tvm::tirx::VectorizeLoop(...)", "tvm::arith::IntSetAnalyzer::operator()(...)",
                                 "tvm::tirx::ExprFunctor<...>::VisitExpr(...)"))
    assert found is not None and found.name == "arith.IntSetAnalyzer"


def test_the_importers_own_plumbing_is_the_importer() -> None:
    found = component_of(_raised("from_onnx (tvm/relax/frontend/onnx/onnx_frontend.py:6798)",
                                 "_construct_nodes (tvm/relax/frontend/onnx/onnx_frontend.py:6560)"))
    assert found is not None and found.name == IMPORTER


def test_a_crash_report_gives_its_frames_innermost_last() -> None:
    crash = Observation(Symptom.CRASH, Stage.PASS, "relax.ConvertLayout", "killed by SIGFPE\n  at tvm::arith::"
                        "ConstIntBoundAnalyzer::Update(...)\n  at tvm::relax::ConvertLayout(...)", signal=8)
    found = component_of(crash)
    assert found is not None and found.name == "arith.ConstIntBoundAnalyzer"


def test_a_cpp_topi_operator_returning_a_tensor_expression_is_not_taken_for_the_tensor_expression_language() -> None:
    """The frames of the audited corpus' i43-broadcast-symbolic-legalize, as the gate recorded them."""
    frames = ("Pass.__call__ (tvm/ir/transform.py:171)",
              "reshape_call_te (tvm/relax/transform/legalize_ops/manipulate.py:43)",
              "call_te (tvm/relax/block_builder.py:364)", "gen_call_tir_inputs (tvm/relax/utils.py:344)",
              "broadcast_to (tvm/topi/broadcast.py:40)",
              "tvm::te::Tensor tvm::topi::broadcast_to(const tvm::te::Tensor&, const tvm::ffi::Array<tvm::PrimExpr>&, "
              "std::string, std::string)")
    found = component_of(_raised(*frames))
    assert found is not None and found.name == "topi.broadcast_to"


def test_a_float_division_by_a_constant_zero_is_the_constant_folders() -> None:
    """``Div(x, 0.0)``: elementwise division only forwards the program's zero, and IEEE 754 defines the result;
    the folder that refuses it is at fault, whether the build's LegalizeOps or a TIR rewrite reached it."""
    for name in ("float_divide_by_zero_build", "float_divide_by_zero_specialize"):
        found = component_of(real_failure(name))
        assert found is not None and found.name == CONSTANT_FOLDER, name
        assert "TryConstFold" in found.frame


def test_an_operator_that_built_the_zero_division_itself_keeps_it() -> None:
    """Resize's ``(w - 1) / (n - 1)`` with an output axis of length 1: the operator asked for it."""
    found = component_of(real_failure("resize_length_one_build"))
    assert found is not None and found.name == "topi.image.resize"


def test_an_integer_division_by_zero_is_not_the_folders() -> None:
    """An integer divisor (``pb``): ONNX leaves the result undefined, the refusal stands; elementwise division's."""
    integer = dataclasses.replace(real_failure("float_divide_by_zero_build"),
                                  message="InternalError: Check failed: pb->value != 0 (0 vs. 0) : Divide by zero")
    found = component_of(integer)
    assert found is not None and found.name == "topi.broadcast"


def test_a_relax_operators_legalization_is_named_as_its_frames_are() -> None:
    """Read from the installed TVM's legalization modules (their ``register_legalize`` calls), not imported."""
    assert legalization("relax.mean") == "legalize.statistical"
    assert legalization("relax.nn.conv2d") == "legalize.nn"
    assert legalization("relax.no_such_op") is None


def test_the_topi_function_a_legalization_calls_is_named_by_its_module() -> None:
    """c53 audit (4a59542fd6c7): legalize.vision only passes iou_threshold to TOPI; topi/vision/nms.py is at fault.
    The TOPI function of the operator's own name is preferred (gather_nd's rule transposes first)."""
    from seedzer.finding.component import lowering_topi

    assert lowering_topi("relax.vision.all_class_non_max_suppression") == "topi.vision.nms"
    assert lowering_topi("relax.scatter_elements") == "topi.scatter_elements"  # not topi.gpu's variant
    assert lowering_topi("relax.gather_nd") == "topi.transform"
    assert lowering_topi("relax.no_such_op") is None


def test_a_verifier_of_generated_code_is_no_component() -> None:
    """b53 audit (c8e3c62a995a): LLVM's verifier rejects what VectorizeLoop's out-of-scope let became."""
    verify = "void tvm::codegen::CodeGenLLVM::Verify() const (src/target/llvm/codegen_llvm.cc:372)"
    assert component_of(_raised("codegen_build (tvm/tirx/build.py:132)", verify)) is None
