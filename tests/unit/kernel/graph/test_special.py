"""The special-values oracle (seedzer.kernel.graph.special): judged by the specification's engines."""

from __future__ import annotations

import os
import signal
from typing import Any

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from seedzer.kernel.common import SPECIAL_VALUES, Symptom
from seedzer.kernel.comparison import signed_zero_difference
from seedzer.kernel.graph.special import judge_special, locate_node, rejected_input
from seedzer.kernel.onnx.model import TOLERANCES, Trace
from seedzer.kernel.onnx.runtime import onnxruntime_outputs
from seedzer.kernel.onnx.undefined import undefined_on_specials, undefined_on_values
from seedzer.kernel.onnx.validity import reference_run

SPECIAL = np.array([np.nan, np.inf, -np.inf, -0.0, 1.0, -2.0], np.float32)


def _model(op: str, **attrs: Any) -> onnx.ModelProto:
    graph = helper.make_graph([helper.make_node(op, ["x"], ["y"], **attrs)], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [6])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [6])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


def _judge(model: onnx.ModelProto, feeds: dict[str, np.ndarray], actual: list[np.ndarray],
           **kwargs: Any) -> Any:
    return judge_special(model, feeds, actual, lambda: actual, TOLERANCES, Trace(), **kwargs)


def test_tvm_agreeing_with_the_engines_is_ok_and_disagreeing_is_a_special_values_mismatch() -> None:
    model, feeds = _model("Neg"), {"x": SPECIAL}
    assert _judge(model, feeds, [-SPECIAL]).symptom is Symptom.OK
    wrong = -SPECIAL
    wrong[0] = 0.0  # NaN lost
    got = _judge(model, feeds, [wrong])
    assert got.symptom is Symptom.MISMATCH and got.comparison == SPECIAL_VALUES
    assert "nan positions" in got.message and "agree with each other, not with TVM" in got.message


def test_after_a_lossy_pass_an_ill_conditioned_output_on_special_inputs_is_not_judged() -> None:
    """a53 audit (04cd4a218a2b): special inputs through ToMixedPrecision; Round at a tie float16 holds is the
    pass's expected loss, not a bug. The callback decides; without it the same output is a mismatch."""
    model = _model("Round")
    feeds = {"x": np.array([np.nan, np.inf, -np.inf, 4.50149, 1.0, -2.0], np.float32)}
    actual = np.array([np.nan, np.inf, -np.inf, 4.0, 1.0, -2.0], np.float32)  # 4.50149 held as 4.5
    asked: list[int] = []

    def lossy(index: int, got: list[np.ndarray], spec: list[np.ndarray]) -> bool:
        asked.append(index)
        return True

    judged = _judge(model, feeds, [actual], lossy=lossy)
    assert judged.symptom is Symptom.INVALID and "lossy pass" in judged.message and asked == [0]
    assert _judge(model, feeds, [actual]).symptom is Symptom.MISMATCH


def test_an_output_a_few_ulps_of_its_finite_inputs_decide_is_not_judged_on_special_inputs() -> None:
    """Issue 57's A/B audit (718f9554fdf8): Floor(Tan(x)) with x a float32 ulp from where Tan crosses 45 (slope
    about 2000 there): TVM's 44 against the engines' 45 is rounding, not a bug. A NaN lost beside it is still
    judged once the ill-conditioned element agrees."""
    nodes = [helper.make_node("Tan", ["x"], ["t"]), helper.make_node("Floor", ["t"], ["y"])]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [6])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [6])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    near_pole = np.float32(np.arctan(np.float64(45.0001)))
    x = np.array([np.nan, np.inf, near_pole, np.finfo(np.float32).max, 1.0, -0.0], np.float32)
    spec = reference_run(model, {"x": x})[0]
    assert spec[2] == 45.0
    rounded = spec.copy()
    rounded[2] = 44.0
    judged = _judge(model, {"x": x}, [rounded])
    assert judged.symptom is Symptom.INVALID and "ill-conditioned" in judged.message
    nan_lost = spec.copy()
    nan_lost[0] = 0.0
    assert _judge(model, {"x": x}, [nan_lost]).symptom is Symptom.MISMATCH


def test_a_signed_zero_counts_where_both_engines_agree_on_it() -> None:
    model, feeds = _model("Neg"), {"x": np.array([0.0, -0.0], np.float32)}
    model.graph.input[0].type.tensor_type.shape.dim[0].dim_value = 2
    model.graph.output[0].type.tensor_type.shape.dim[0].dim_value = 2
    got = _judge(model, feeds, [np.array([0.0, 0.0], np.float32)])
    assert got.symptom is Symptom.MISMATCH and got.difference is not None and got.difference.reason == "signed zeros"
    assert signed_zero_difference([np.zeros(2)], [np.zeros(2)]) is None


def _crash(*_: Any) -> Any:
    os.kill(os.getpid(), signal.SIGSEGV)


def test_onnxruntime_crashing_on_the_input_is_not_tvms_finding() -> None:
    got = _judge(_model("Neg"), {"x": SPECIAL}, [-SPECIAL], engines=(_crash, reference_run))
    assert got.symptom is Symptom.INVALID and "onnxruntime crashed on the input, which is not TVM's" in got.message
    got = _judge(_model("Neg"), {"x": SPECIAL}, [SPECIAL], engines=(onnxruntime_outputs, _crash))
    assert got.symptom is Symptom.INVALID and "the ONNX reference crashed" in got.message


def test_an_input_the_reference_rejects_is_not_judged() -> None:
    indices = numpy_helper.from_array(np.array([0], np.int64), "unused")
    graph = helper.make_graph([helper.make_node("Gather", ["d", "i"], ["y"])], "g",
                              [helper.make_tensor_value_info("d", TensorProto.FLOAT, [3]),
                               helper.make_tensor_value_info("i", TensorProto.INT64, [2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])], [indices])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    feeds = {"d": np.ones(3, np.float32), "i": np.array([0, 7], np.int64)}  # 7 is out of range
    assert rejected_input(model, feeds) is not None
    got = _judge(model, feeds, [np.array([1.0, 123.0], np.float32)])
    assert got.symptom is Symptom.INVALID and "TVM's run on it is not judged" in got.message


def test_where_the_reference_lacks_an_operator_onnxruntime_says_whether_the_input_is_rejected() -> None:
    """d53 audit (d461ddc8c56e): EmbedLayerNormalization (a contrib operator onnx.reference does not implement)
    fed word ids past its table; onnxruntime rejects them, so TVM's run on them is not judged."""
    inits = [numpy_helper.from_array(np.ones((6, 4), np.float32), "word"),
             numpy_helper.from_array(np.ones((4, 4), np.float32), "pos"),
             numpy_helper.from_array(np.ones(4, np.float32), "gamma"),
             numpy_helper.from_array(np.zeros(4, np.float32), "beta")]
    node = helper.make_node("EmbedLayerNormalization", ["ids", "", "word", "pos", "", "gamma", "beta"],
                            ["y", "mask"], domain="com.microsoft")
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("ids", TensorProto.INT32, [1, 2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2, 4])], inits)
    opsets = [helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)]
    model = helper.make_model(graph, opset_imports=opsets)
    model.ir_version = 8
    assert rejected_input(model, {"ids": np.array([[0, 5]], np.int32)}) is None
    assert "out of range" in (rejected_input(model, {"ids": np.array([[0, 9]], np.int32)}) or "")


def test_a_zero_whose_sign_alone_differs_at_a_sum_is_not_judged() -> None:
    """d53 audit (e29b33063f85): Mean of -0 is +0 in TVM (a sum from +0), -0 in both engines; the sign of a zero
    sum is the accumulator's start. The same difference at a non-summing operator is still judged."""
    feeds = {"x": np.array([-0.0, -0.0], np.float32)}
    graph = helper.make_graph([helper.make_node("Mean", ["x"], ["y"])], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    mean = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    mean.ir_version = 8
    got = _judge(mean, feeds, [np.array([0.0, 0.0], np.float32)])
    assert got.symptom is Symptom.INVALID and "sign of zeros" in got.message
    neg = _model("Neg")
    neg.graph.input[0].type.tensor_type.shape.dim[0].dim_value = 2
    neg.graph.output[0].type.tensor_type.shape.dim[0].dim_value = 2
    assert _judge(neg, {"x": np.array([0.0, 0.0], np.float32)}, [np.array([0.0, 0.0], np.float32)]).symptom \
        is Symptom.MISMATCH


def test_a_float_to_integer_cast_is_undefined_on_special_values() -> None:
    model = _model("Cast", to=TensorProto.INT32)
    model.graph.output[0].type.tensor_type.elem_type = TensorProto.INT32
    assert "Cast (a float to an integer type)" in str(undefined_on_specials(model))
    assert undefined_on_specials(_model("Neg")) is None
    got = _judge(model, {"x": SPECIAL}, [np.full(6, 7, np.int32)])  # any answer of TVM's: never a mismatch
    assert got.symptom is Symptom.INVALID


def _roi_align(mode: str) -> onnx.ModelProto:
    # the campF false alarm 81fe679768e7: RoiAlign on a 1x1 map holding one negative value
    rois = np.array([[0, 0, 0.54, 0.49], [0, 0, 0.59, 0.77], [0, 0, 0.82, 0.86]], np.float32)
    inits = [numpy_helper.from_array(rois, "rois"), numpy_helper.from_array(np.zeros(3, np.int64), "bidx")]
    node = helper.make_node("RoiAlign", ["x", "rois", "bidx"], ["y"], mode=mode, output_height=4, output_width=2,
                            spatial_scale=0.5)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 1, 1])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 1, 4, 2])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    model.ir_version = 8
    return model


def test_a_disputed_operator_setting_is_never_a_mismatch() -> None:
    feeds = {"x": np.full((1, 1, 1, 1), -0.9546, np.float32)}
    tvm_answer = [np.full((3, 1, 4, 2), -0.9546, np.float32)]  # TVM interpolates, then takes the max
    got = _judge(_roi_align("max"), feeds, tvm_answer)
    assert got.symptom is Symptom.INVALID  # disputed (onnx/onnx#4764), and interpolating: never a mismatch
    assert "onnx/onnx/issues/4764" in str(undefined_on_values(_roi_align("max"), feeds, 0))  # on any value
    assert undefined_on_values(_roi_align("avg"), feeds, 0) is None  # finite values: judged


def _two_outputs(side: str) -> onnx.ModelProto:
    """y = Relu(x), and a side output z = ``side``(x) (of 6 float elements or, for ArgMax, 1 int64)."""
    z_type = TensorProto.INT64 if side == "ArgMax" else TensorProto.FLOAT
    z_shape = [1] if side == "ArgMax" else [6]
    attrs = {"keepdims": 1} if side == "ArgMax" else {}
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"]), helper.make_node(side, ["x"], ["z"], **attrs)],
                              "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [6])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [6]),
                               helper.make_tensor_value_info("z", z_type, z_shape)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


def test_an_undefined_side_output_leaves_the_other_outputs_judged_and_names_the_operator() -> None:
    # campF's filtered 1a2213d783c-361: Relu(NaN) = 0 in TVM, dropped because an ArgMax beside it is undefined on NaN
    model, feeds = _two_outputs("ArgMax"), {"x": SPECIAL}
    relu_nan_lost = np.maximum(np.nan_to_num(SPECIAL, nan=0.0), 0.0).astype(np.float32)
    got = _judge(model, feeds, [relu_nan_lost, np.array([1], np.int64)])
    assert got.symptom is Symptom.MISMATCH and got.comparison == SPECIAL_VALUES
    assert got.difference is not None and got.difference.output == 0 and got.difference.operator == "Relu"
    right_relu = onnxruntime_outputs(model, feeds)[0]
    got = _judge(model, feeds, [right_relu, np.array([4], np.int64)])  # differs only on the undefined output
    assert got.symptom is Symptom.INVALID and "gives NaN no place in that order" in got.message


def test_engines_disagreeing_on_one_output_leave_the_others_judged() -> None:
    model, feeds = _two_outputs("Neg"), {"x": SPECIAL}
    ort = onnxruntime_outputs(model, feeds)
    disputed_side = [ort[0], ort[1] + 1.0]  # the "reference" disagrees with onnxruntime on output 1 only

    def reference(_model: onnx.ModelProto, _feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
        return disputed_side

    wrong = ort[0].copy()
    wrong[0] = 0.0  # NaN lost on output 0
    got = _judge(model, feeds, [wrong, ort[1]], engines=(onnxruntime_outputs, reference))
    assert got.symptom is Symptom.MISMATCH and got.difference is not None and got.difference.output == 0
    got = _judge(model, feeds, [ort[0], ort[1] + 2.0], engines=(onnxruntime_outputs, reference))
    assert got.symptom is Symptom.INVALID and "disagree on output 1" in got.message


def test_an_interpolating_operator_is_undefined_on_special_values() -> None:
    # a `seedzer run` filing: Sin(inf) = NaN, then a cubic Resize: TVM NaN (0 * NaN) where both engines give 0
    sizes = numpy_helper.from_array(np.array([12], np.int64), "sizes")
    graph = helper.make_graph([helper.make_node("Sin", ["x"], ["s"]),
                               helper.make_node("Resize", ["s", "", "", "sizes"], ["y"], mode="cubic")], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [6])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [12])], [sizes])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    assert "weighs neighbouring elements" in str(undefined_on_specials(model))
    assert _judge(model, {"x": SPECIAL}, [np.full(12, np.nan, np.float32)]).symptom is Symptom.INVALID


def _one_by_one_conv() -> onnx.ModelProto:
    """A 1x1 Conv of two channels with weights 3 and 7: +FLT_MAX and -FLT_MAX inputs overflow its products."""
    weight = numpy_helper.from_array(np.array([3.0, 7.0], np.float32).reshape(1, 2, 1, 1), "w")
    graph = helper.make_graph([helper.make_node("Conv", ["x", "w"], ["y"])], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 1, 2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 1, 1, 2])], [weight])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


def test_a_sum_that_overflows_is_not_judged_between_nan_and_infinities() -> None:
    """The study's audit (bc33d6a66288): 3 * FLT_MAX + 7 * -FLT_MAX is -inf summed one way, NaN another
    (+inf - inf), and +4e38 exactly: TVM's NaN against the engines' -inf says nothing."""
    big = np.finfo(np.float32).max
    x = np.array([big, 1.0, -big, 1.0], np.float32).reshape(1, 2, 1, 2)
    model, feeds = _one_by_one_conv(), {"x": x}
    expected = onnxruntime_outputs(model, feeds)[0]
    assert not np.isfinite(expected[0, 0, 0, 0]) and expected[0, 0, 0, 1] == 10.0
    other = expected.copy()  # the other way of summing: NaN against an infinity, or -inf against NaN
    other[0, 0, 0, 0] = -np.inf if np.isnan(expected[0, 0, 0, 0]) else np.nan
    agreeing = (onnxruntime_outputs, onnxruntime_outputs)  # the engines agree (on some processors the
    # reference's sum and onnxruntime's differ themselves there, and the case is not judged for that)
    got = _judge(model, feeds, [other], engines=agreeing)
    assert got.symptom is Symptom.INVALID and "Conv sums terms in an order IEEE 754 leaves open" in got.message
    finite = other.copy()
    finite[0, 0, 0, 1] = 11.0  # a finite value wrong beside it: judged
    assert _judge(model, feeds, [finite], engines=agreeing).symptom is Symptom.MISMATCH


def test_a_nan_lost_by_a_non_accumulating_operator_is_still_judged() -> None:
    model, feeds = _model("Relu"), {"x": SPECIAL}
    wrong = onnxruntime_outputs(model, feeds)[0].copy()
    wrong[1] = np.nan  # +inf became NaN in an element-wise operator: no order excuses it
    assert _judge(model, feeds, [wrong]).symptom is Symptom.MISMATCH


def _sequence_model() -> onnx.ModelProto:
    """``out = SequenceAt(SequenceInsert([x, -x], |x|, -1), 1)``: |x| inserted before the last element."""
    position = numpy_helper.from_array(np.array(-1, np.int64), "pos")
    one = numpy_helper.from_array(np.array(1, np.int64), "one")
    nodes = [helper.make_node("Neg", ["x"], ["n"]), helper.make_node("Abs", ["x"], ["a"]),
             helper.make_node("SequenceConstruct", ["x", "n"], ["s"]),
             helper.make_node("SequenceInsert", ["s", "a", "pos"], ["s2"]),
             helper.make_node("SequenceAt", ["s2", "one"], ["out"])]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3])],
                              [helper.make_tensor_value_info("out", TensorProto.FLOAT, [3])], [position, one])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


def _appending_insert(probe: onnx.ModelProto) -> list[np.ndarray]:
    """A fake TVM whose SequenceInsert ignores its position (appends): onnxruntime on the probe without it."""
    wrong = onnx.ModelProto()
    wrong.CopyFrom(probe)
    for node in wrong.graph.node:
        if node.op_type == "SequenceInsert":
            del node.input[2]
    return onnxruntime_outputs(wrong, {"x": np.array([1.0, -2.0, 3.0], np.float32)})


def test_a_tensor_read_out_of_a_wrongly_made_sequence_names_the_maker() -> None:
    """d53 audit (42590c9c3ec6): SequenceInsert's negative position off by one was filed to SequenceAt, which reads
    the right slot of a wrong sequence. The sequences are probed element by element: the maker is named."""
    feeds = {"x": np.array([1.0, -2.0, 3.0], np.float32)}
    located = locate_node(_sequence_model(), feeds, TOLERANCES, _appending_insert, "out")
    assert located is not None and located[0] == "SequenceInsert", located
    wrong_at = lambda probe: [-o if i == 0 else o for i, o in enumerate(onnxruntime_outputs(probe, feeds))]  # noqa: E731
    located = locate_node(_sequence_model(), feeds, TOLERANCES, wrong_at, "out")  # the reader itself wrong
    assert located is not None and located[0] == "SequenceAt", located
