"""Oracles judge the kernel's observations; signatures (raw and root) deduplicate findings."""

import dataclasses

from seedzer.kernel.common import OPT_VS_REFERENCE, Observation, Stage, Symptom
from seedzer.kernel.comparison import Difference
from seedzer.kernel.messages import ir_names, normalize
from seedzer.oracles import ORACLES, judge, make_oracles
from seedzer.oracles.preconditions import is_precondition_error
from seedzer.oracles.signature import component_key, essence, raw_key, root_essence, root_key, without_ir
from tests.frames import real_failure

ALL = make_oracles(list(ORACLES))


def test_clean_and_invalid_observations_stay_what_they_are() -> None:
    assert judge(ALL, Observation.ok()).symptom is Symptom.OK
    invalid = Observation(Symptom.INVALID, Stage.MUTATE, None, "unusable test case")
    assert judge(ALL, invalid) == invalid


def test_crash_and_hang() -> None:
    crash = judge(ALL, Observation(Symptom.CRASH, Stage.BUILD, "s_tir.LoopPartition", "killed by SIGSEGV", signal=11))
    assert (crash.symptom, crash.stage, crash.pass_name) == (Symptom.CRASH, Stage.BUILD, "s_tir.LoopPartition")
    hang = judge(ALL, Observation(Symptom.HANG, Stage.RUN, "run", "run stage exceeded 20s"))
    assert hang.symptom is Symptom.HANG and hang.stage is Stage.RUN


def test_exception_vs_precondition() -> None:
    bug = judge(ALL, Observation(Symptom.EXCEPTION, Stage.PASS, "X", "InternalError: Check failed: a == b"))
    assert bug.symptom is Symptom.EXCEPTION
    pre = judge(ALL, Observation(Symptom.EXCEPTION, Stage.PASS, "X", "LowerIntrin must be called after BindTarget"))
    assert pre.symptom is Symptom.INVALID and "precondition" in pre.message


def test_disabled_oracle_never_counts_an_error_as_ok() -> None:
    only_crash = make_oracles(["crash"])
    out = judge(only_crash, Observation(Symptom.EXCEPTION, Stage.BUILD, "codegen", "boom"))
    assert out.symptom is Symptom.INVALID
    only_mismatch = make_oracles(["mismatch"])
    assert judge(only_mismatch, Observation(Symptom.ILLFORMED, Stage.PASS, "p", "m")).symptom is Symptom.INVALID


def test_special_values_mismatches_have_their_own_oracle() -> None:
    special = Observation(Symptom.MISMATCH, Stage.COMPARE, "compare", "nan positions", comparison="special-values")
    plain = Observation(Symptom.MISMATCH, Stage.COMPARE, "compare", "values", comparison=OPT_VS_REFERENCE)
    assert judge(ALL, special) == special and judge(ALL, plain) == plain
    without = make_oracles([n for n in ORACLES if n != "special-values"])
    assert judge(without, plain) == plain
    off = judge(without, special)
    assert off.symptom is Symptom.INVALID and off.message.startswith("special-values oracle disabled")
    only = make_oracles(["special-values"])
    assert judge(only, special) == special and judge(only, plain).symptom is Symptom.INVALID


def test_oracles_are_listed_in_the_kernels_order() -> None:
    assert list(ORACLES) == ["crash", "hang", "illformed", "exception", "mismatch", "special-values", "perf"]


def test_precondition_patterns() -> None:
    assert is_precondition_error("Pass X must be called after Y")
    assert is_precondition_error("The target is missing either in the current context or in the prim_func")
    assert not is_precondition_error("Check failed: (n > 0) is false")
    assert not is_precondition_error("Check failed: pb->value != 0 (0 vs. 0) : Divide by zero")  # a real bug


def test_signature_merges_renamed_variables_and_splits_passes() -> None:
    m1 = 'InternalError: Check failed: (v_i0 < 16) is false: index "ax1_3" out of /src/a.cc:123'
    m2 = 'TVMError: Check failed: (v_k7 < 32) is false: index "ax2_0" out of /src/a.cc:456'
    o1 = Observation(Symptom.EXCEPTION, Stage.PASS, "tirx.StorageRewrite", m1)
    o2 = Observation(Symptom.EXCEPTION, Stage.PASS, "tirx.StorageRewrite", m2)
    assert normalize(m1) == normalize(m2)
    assert raw_key("lowlevel", o1).digest() == raw_key("lowlevel", o2).digest()
    other_pass = dataclasses.replace(o1, pass_name="s_tir.LoopPartition")
    assert raw_key("lowlevel", other_pass).digest() != raw_key("lowlevel", o1).digest()


def test_root_signature_keys_on_the_culprit_not_where_it_surfaced() -> None:
    at_a = Observation(Symptom.EXCEPTION, Stage.PASS, "tirx.StorageRewrite", "Check failed: x")
    at_b = dataclasses.replace(at_a, pass_name="tirx.UnrollLoop")
    assert root_key("lowlevel", at_a, ["s_tir.HoistExpression"]).digest() == \
        root_key("lowlevel", at_b, ["s_tir.HoistExpression"]).digest()
    assert root_key("lowlevel", at_a, ["s_tir.HoistExpression"]).digest() != \
        root_key("lowlevel", at_a, ["tirx.VectorizeLoop"]).digest()


def test_mismatch_raw_key_includes_the_passes_that_changed_the_ir() -> None:
    diff = Difference(1, "values", 3, 16, 0.5)
    obs = Observation(Symptom.MISMATCH, Stage.COMPARE, None, diff.describe(), comparison=OPT_VS_REFERENCE,
                      difference=diff)
    one = raw_key("lowlevel", obs, changed_passes=["tirx.UnrollLoop"]).digest()
    assert one == raw_key("lowlevel", obs, changed_passes=["tirx.UnrollLoop", "tirx.UnrollLoop"]).digest()
    assert one != raw_key("lowlevel", obs, changed_passes=["s_tir.HoistIfThenElse"]).digest()
    assert essence(obs) == OPT_VS_REFERENCE


def test_crash_essence_is_the_signal_and_the_top_tvm_frames() -> None:
    obs = Observation(Symptom.CRASH, Stage.PASS, "tirx.NarrowDataType", "killed by signal SIGSEGV\n"
                      "  at tvm::ObjectVisitor::VisitExpected(tvm::ffi::AnyView)\n  at tvm::tirx::Foo()", signal=11)
    assert essence(obs) == "SIGSEGV / tvm::ObjectVisitor::VisitExpected(tvm::ffi::AnyView) / tvm::tirx::Foo()"
    hang = Observation(Symptom.HANG, Stage.RUN, "run", "")
    assert essence(hang) == "kernel"
    assert essence(dataclasses.replace(hang, stage=Stage.BUILD)) == "compile"


RELU = '''@T.prim_func(s_tir=True)
def main(A: T.Buffer((T.int64(4),), "float32"), compute: T.Buffer((T.int64(4),), "float32")):
    for i0 in range(T.int64(4)):
        with T.sblock("compute"):
            v_i0 = T.axis.spatial(T.int64(4), i0)
            compute[v_i0] = T.max(A[v_i0], T.float32(0.0))
'''


def test_ir_names_finds_parameters_loops_axes_and_blocks() -> None:
    assert {"A", "compute", "i0", "v_i0"} <= ir_names(RELU)
    assert not {"T", "main", "for", "in"} & ir_names(RELU)


def test_signature_merges_variants_whose_names_have_no_digits() -> None:
    renamed = RELU.replace("compute", "out").replace("v_i0", "vx").replace("i0", "k").replace("A", "data")
    m1 = "ValueError: multiple definitions of variable v_i0 in compute, at <root>.body.seq[0].block.iter_vars[0]"
    m2 = "ValueError: multiple definitions of variable vx in out, at <root>.body.block.body.seq[1].block.iter_vars[0]"
    o1 = Observation(Symptom.ILLFORMED, Stage.PASS, "tirx.UnrollLoop", m1)
    o2 = Observation(Symptom.ILLFORMED, Stage.PASS, "tirx.UnrollLoop", m2)
    assert raw_key("lowlevel", o1).digest() != raw_key("lowlevel", o2).digest()  # the generic rules alone
    assert raw_key("lowlevel", o1, ir_names(RELU)).digest() == raw_key("lowlevel", o2, ir_names(renamed)).digest()
    different = Observation(Symptom.ILLFORMED, Stage.PASS, "tirx.UnrollLoop", "ValueError: undefined variable vx")
    assert raw_key("lowlevel", different, ir_names(renamed)).digest() != \
        raw_key("lowlevel", o2, ir_names(renamed)).digest()


def test_illformed_essence_is_the_verifiers_first_sentence() -> None:
    bare = "ValueError: Invalid use of undefined variable ins_46429 at <root>.body.seq[4].body.value.args[0]."
    scoped = ("ValueError: Invalid use of undefined variable ins_50947 at <root>.body.seq[3].value.value..  While "
              "this variable was previously defined at <root>.body.seq[2].body.var, this definition is no longer "
              "in-scope.")
    a, b = (Observation(Symptom.ILLFORMED, Stage.PASS, "tirx.VectorizeLoop", m) for m in (bare, scoped))
    assert essence(a) == essence(b) == "Invalid use of undefined variable ID at IRPATH"
    other = Observation(Symptom.ILLFORMED, Stage.PASS, "tirx.VectorizeLoop", "ValueError: Variable x defined twice.")
    assert essence(other) != essence(a)


def test_the_failing_pass_leaves_the_root_key_when_other_culprits_made_its_input() -> None:
    message = "ValueError: Check failed: (!value_ty.IsFixedLengthVector()) is false: IntImm can only take scalar"
    at_codegen = Observation(Symptom.EXCEPTION, Stage.BUILD, "codegen", message)
    at_pass = Observation(Symptom.EXCEPTION, Stage.PASS, "s_tir.InjectVirtualThread", message)
    a = root_key("lowlevel", at_codegen, ["tirx.VectorizeLoop", "codegen"])
    b = root_key("lowlevel", at_pass, ["tirx.VectorizeLoop", "s_tir.InjectVirtualThread"])
    assert a.digest() == b.digest() and a.where == ("tirx.VectorizeLoop",)
    # a pass failing on its own input keeps its name
    assert root_key("lowlevel", at_pass, ["s_tir.InjectVirtualThread"]).where == ("s_tir.InjectVirtualThread",)


def test_illformed_ir_is_keyed_on_the_pass_that_emitted_it() -> None:
    obs = Observation(Symptom.ILLFORMED, Stage.PASS, "tirx.VectorizeLoop", "ValueError: Invalid use of variable x.")
    assert root_key("lowlevel", obs, ["s_tir.StmtSimplify", "tirx.VectorizeLoop"]).digest() == \
        root_key("lowlevel", obs, ["tirx.VectorizeLoop"]).digest()


def test_a_root_essence_keeps_no_dtype_shape_or_ir_expression_the_input_decides() -> None:
    narrow = real_failure("force_narrow_compact")  # "mismatched types. int64 vs. int32", as TVM raised it
    swapped = dataclasses.replace(narrow, message=narrow.message.replace("int64 vs. int32", "int32 vs. int64"))
    assert swapped.message != narrow.message  # the audit saw this order too: the same compare, operands swapped
    culprit = ["tirx.ForceNarrowIndexToInt32"]
    assert root_key("tir", narrow, culprit).digest() == root_key("tir", swapped, culprit).digest()
    assert raw_key("tir", narrow).digest() != raw_key("tir", swapped).digest()  # raw signatures keep them apart
    a, b = real_failure("sequence_at_negative_a"), real_failure("sequence_at_negative_b")  # R.split(x, ...) / (lv, ...)
    assert root_essence(a) == root_essence(b) and "IR cannot be accessed" in root_essence(a)
    constant = dataclasses.replace(a, message='IndexError: Check failed: index >= 0 (-1 vs. 0) : Index out of bounds: '
                                   'Tuple R.split(metadata["ir.GenericConst"][0], indices_or_sections=1, axis=-2)\n'
                                   "# Metadata omitted. Use show_meta=True in script() method to show it. cannot be "
                                   "accessed with negative index -1")  # a53: the printer's note split one root in two
    assert root_essence(constant) == root_essence(a)
    shapes = Observation(Symptom.EXCEPTION, Stage.PASS, "relax.X", "Check failed: expected [1, 3] got [2, 3, 4]")
    assert root_essence(shapes) == "Check failed: expected SHAPE got SHAPE"


def test_printed_ir_expressions_and_value_names_are_left_out_of_a_root() -> None:
    text = ('The type of Tuple must be TupleType, but expression lv has type R.Tensor((1, 2), dtype="float32") '
            "and R.split(x, indices_or_sections=3) too")
    assert without_ir(text) == "The type of Tuple must be TupleType, but expression ID has type IR and IR too"


def test_a_converter_is_keyed_by_its_operator_whatever_its_version() -> None:
    """The A/B audit of issue 57: ReduceL2's _impl_v13 and _impl_v18 fail the same way (sqrt of an integer)."""
    failure = Observation(Symptom.EXCEPTION, Stage.LOAD, "import", "TypeError: relax.sqrt requires the input tensor "
                          "to have float dtype")
    v13 = component_key(failure, "relax.frontend.onnx.ReduceL2._impl_v13")
    assert v13.digest() == component_key(failure, "relax.frontend.onnx.ReduceL2._impl_v18").digest()
    assert v13.digest() != component_key(failure, "relax.frontend.onnx.ReduceL1._impl_v18").digest()
