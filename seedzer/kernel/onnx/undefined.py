"""Where the ONNX specification defines no result: the operators and classes of values no engine is
judged on (TVM-free).

:data:`UNDEFINED` is the table, one :class:`Undefined` row per operator family and classes of values
(NaN, infinities, values out of a type's range, an all-zero tensor, or any value where the
specification's own engines and its text disagree), each with why the result is undefined or disputed
and where the specification says so. A result a row covers is never judged by comparing values (a
crash or a hang still counts):

- on special inputs (:mod:`seedzer.kernel.graph.special`), where NaN, infinities and extremes reach
  every node, a row of those classes on a node an output depends on leaves that output unjudged
  (:func:`undefined_on_specials`);
- on a model compared with onnxruntime (a spec-edge or inserted operator; a pool model in the load
  kernel), the values reaching the nodes a differing output depends on are read off onnxruntime
  (:func:`undefined_on_values`): an all-zero input of DynamicQuantizeLinear (0/0 in the formula) or a
  NaN quantized into an integer makes the difference the specification's silence, not TVM's bug.

:data:`REFUSALS` lists the errors by which TVM refuses, on purpose, a setting whose result the
specification does not define (AffineGrid with align_corners=1 over a spatial size of 1): the gates
call such a failure an invalid test case (:func:`refused_where_undefined`), not a bug.

``python -m seedzer.docs`` prints the table into docs/findings.md. Depends on numpy, onnx and the
kernel modules before it only (copied verbatim into repro.py).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np
import onnx
from onnx import TensorProto, helper

from seedzer.kernel.onnx.model import upstream
from seedzer.kernel.onnx.runtime import onnxruntime_outputs

# --- kernel code (everything below is copied verbatim into repro.py) ---
NAN, INF, OUT_OF_RANGE, ALL_ZERO, ANY = "nan", "inf", "out-of-range", "all-zero", "any"
"""Classes of values a row covers: NaN, an infinity, a finite value outside the target type's range, a
tensor whose every element is zero, any value at all (the engines and the text disagree)."""
SPECIAL_CLASSES = frozenset({NAN, INF, OUT_OF_RANGE, ANY})
UNDEFINED_HERE = "the specification defines no result here"
"""How the reason of a difference on values the specification leaves undefined starts."""
"""The classes special inputs bring to every node (:mod:`seedzer.kernel.graph.inputs`)."""
FLOATS = frozenset({TensorProto.FLOAT, TensorProto.DOUBLE, TensorProto.FLOAT16, TensorProto.BFLOAT16})
INTEGERS = frozenset({TensorProto.INT8, TensorProto.INT16, TensorProto.INT32, TensorProto.INT64, TensorProto.UINT8,
                      TensorProto.UINT16, TensorProto.UINT32, TensorProto.UINT64})
Types = dict[str, int]
"""Element types (``TensorProto`` codes) of a model's tensors, by name."""


def attribute_of(node: onnx.NodeProto, name: str) -> Any:
    """The value of ``node``'s attribute ``name`` (None when it has none)."""
    attr = next((a for a in node.attribute if a.name == name), None)
    return None if attr is None else helper.get_attribute_value(attr)


def _always(node: onnx.NodeProto, types: Types) -> bool:
    return True


def _float_to_integer(node: onnx.NodeProto, types: Types) -> bool:
    """A Cast or CastLike of a float to an integer type."""
    if not node.input or types.get(node.input[0]) not in FLOATS:
        return False
    target = attribute_of(node, "to") if node.op_type == "Cast" else \
        types.get(node.input[1]) if len(node.input) > 1 else None
    return target in INTEGERS


def _into_integer(node: onnx.NodeProto, types: Types) -> bool:
    """A QuantizeLinear into an integer type (its zero point's type, else its ``output_dtype``, else its
    output's; uint8 when none is known, the specification's default)."""
    zero = types.get(node.input[2]) if len(node.input) > 2 and node.input[2] else None
    target = zero or attribute_of(node, "output_dtype") or (types.get(node.output[0]) if node.output else None)
    return (target or TensorProto.UINT8) in INTEGERS


def _same_operands(node: onnx.NodeProto, types: Types) -> bool:
    """A node whose first two inputs are the same tensor (``Sub(x, x)``)."""
    return len(node.input) > 1 and node.input[0] == node.input[1]


def _max_mode(node: onnx.NodeProto, types: Types) -> bool:
    return attribute_of(node, "mode") in (b"max", "max")


@dataclasses.dataclass(frozen=True)
class Undefined:
    """One row of :data:`UNDEFINED`: the operators, the classes of values, the setting it is limited to
    (``condition`` in words, ``applies`` as a test of a node and the model's types), why the
    specification defines no result there, and where it says so (its operator page or an upstream issue)."""

    operators: tuple[str, ...]
    values: tuple[str, ...]
    why: str
    reference: str
    condition: str = ""
    applies: Callable[[onnx.NodeProto, Types], bool] = _always

    def covers(self, node: onnx.NodeProto, types: Types, present: Iterable[str]) -> bool:
        """Whether ``node`` is one of this row's, in its setting, with a class of ``present`` values."""
        return node.op_type in self.operators and node.domain in ("", "ai.onnx") and \
            bool(set(self.values) & set(present)) and self.applies(node, types)

    def reason(self, node: onnx.NodeProto) -> str:
        """One line: the operator, the values, why, and the reference."""
        setting = f" ({self.condition})" if self.condition else ""
        return f"{node.op_type}{setting} on {' or '.join(self.values)} values: {self.why} [{self.reference}]"


ONNX_OPERATORS = "https://onnx.ai/onnx/operators/onnx__{}.html"
UNDEFINED: tuple[Undefined, ...] = (
    Undefined(("ArgMax", "ArgMin", "TopK", "Unique", "NonMaxSuppression"), (NAN,),
              "the operator orders or ranks its input, and the specification gives NaN no place in that order",
              ONNX_OPERATORS.format("TopK") + " (and ArgMax, ArgMin, Unique, NonMaxSuppression): no order of NaN is "
              "stated"),
    Undefined(("DynamicQuantizeLinear",), (NAN, INF),
              "y_scale = (max(0, max(x)) - min(0, min(x))) / 255 is NaN or infinite, so the zero point and every "
              "quantized value are too, and they are then rounded and saturated into uint8",
              ONNX_OPERATORS.format("DynamicQuantizeLinear")),
    Undefined(("DynamicQuantizeLinear",), (ALL_ZERO,),
              "y_scale = (0 - 0) / 255 = 0 and the zero point is qmin - min(x) / y_scale = 0/0: the formula "
              "gives no value (onnxruntime answers y_scale 1, onnx.reference 1/255)",
              ONNX_OPERATORS.format("DynamicQuantizeLinear")),
    Undefined(("QuantizeLinear",), (NAN,),
              "y = saturate(round(x / y_scale) + y_zero_point): rounding NaN to an integer is not defined, and "
              "saturation is defined for values out of the range, which NaN is not (the float 8 types alone "
              "define NaN)", ONNX_OPERATORS.format("QuantizeLinear"), "into an integer type", _into_integer),
    Undefined(("Cast", "CastLike"), (NAN, INF, OUT_OF_RANGE),
              "casting from floating point to fixed point is undefined if out of range (NaN and the infinities "
              "are)", ONNX_OPERATORS.format("Cast") + " (\"fixed point: undefined if OOR\")",
              "a float to an integer type", _float_to_integer),
    Undefined(("Resize", "Upsample", "GridSample", "RoiAlign", "AffineGrid"), (NAN, INF),
              "the operator weighs neighbouring elements and the specification does not say which taps are "
              "read: a NaN or an infinity beside a tap of weight 0 gives NaN in one implementation (IEEE "
              "0 * NaN) and not in another (onnxruntime and the reference skip the tap)",
              ONNX_OPERATORS.format("Resize") + " (interpolation is stated as a formula over the taps)"),
    Undefined(("Sub",), (NAN, INF),
              "TVM's arithmetic simplifier folds a float x - x to 0 on purpose, accepting that NaN and the "
              "infinities give NaN under IEEE 754 (src/arith/rewrite_simplify.cc, x - x => ZeroWithTypeLike(x), with "
              "the comment saying so); once fusion makes both operands one load the fold applies: a documented "
              "choice, disputed, not a defect to report",
              "https://github.com/apache/tvm/pull/11373 (the fold; Inf/NaN raised in review and accepted); c53 "
              "audit dd6b8e950b22", "a tensor minus itself", _same_operands),
    Undefined(("RoiAlign",), (ANY,),
              "onnx.reference and onnxruntime take the largest weighted corner, the specification's prose the "
              "interpolated value; TVM follows the prose (an open dispute upstream)",
              "https://github.com/onnx/onnx/issues/4764", "mode=max", _max_mode),
)
"""The operators and classes of values whose result the specification leaves undefined or disputed
(see the module docstring; docs/findings.md prints it)."""


@dataclasses.dataclass(frozen=True)
class Refusal:
    """A setting of ``operators`` (``condition``) whose result the specification does not define and that TVM
    refuses with an error of its own (``message``, a fragment of it): the refusal is no bug, there being no
    result to compute. ``why`` the result is undefined, ``reference`` where that is seen."""

    operators: tuple[str, ...]
    message: str
    why: str
    reference: str
    condition: str

    def reason(self) -> str:
        """One line: the operator, the setting, why, and the reference."""
        return f"{'/'.join(self.operators)} ({self.condition}), which TVM refuses: {self.why} [{self.reference}]"


REFUSALS: tuple[Refusal, ...] = (
    Refusal(("AffineGrid",), "target spatial dims should be greater than 1 when align_corners is True",
            "with align_corners=1, -1 and 1 are the centers of the corner pixels, so one pixel's center would be both; "
            "the engines disagree: for an identity theta and a height of 1, onnx.reference divides by zero "
            "(step = 2 / (size - 1)) and gives y = -1, onnxruntime y = 1, PyTorch's affine_grid (which the "
            "specification cites) y = 0; TOPI's affine_grid asserts on purpose",
            ONNX_OPERATORS.format("AffineGrid") + " (align_corners: \"-1 and 1 refer to the centers of the corner "
            "pixels\")", "align_corners=1 and a spatial size of 1"),
)
"""TVM's own refusals of settings the specification leaves undefined (docs/findings.md prints them with
:data:`UNDEFINED`)."""


def refused_where_undefined(message: str) -> str | None:
    """Why an error with ``message`` is TVM refusing a setting whose result the specification does not define
    (the first row of :data:`REFUSALS` whose message it holds), or None."""
    row = next((r for r in REFUSALS if r.message in message), None)
    return row.reason() if row is not None else None


def _types(model: onnx.ModelProto) -> Types:
    """Element types of ``model``'s tensors (shape inference where it can, else what the model declares)."""
    try:
        inferred = onnx.shape_inference.infer_shapes(model)
    except Exception:  # shape inference raises several types
        inferred = model
    types = {vi.name: vi.type.tensor_type.elem_type for vi in [*inferred.graph.input, *inferred.graph.value_info,
                                                                *inferred.graph.output]}
    types.update({i.name: i.data_type for i in model.graph.initializer})
    return types


def undefined_on_specials(model: onnx.ModelProto, nodes: Sequence[onnx.NodeProto] | None = None) -> str | None:
    """Why special inputs (NaN, infinities, extremes reach every node) leave ``model``'s result computed by
    ``nodes`` (default all) undefined by the specification or disputed (the first row of
    :data:`UNDEFINED` of a special class covering one of them), or None."""
    nodes = list(model.graph.node if nodes is None else nodes)
    if not any(n.op_type in row.operators for row in UNDEFINED for n in nodes):
        return None
    types = _types(model)
    for node in nodes:
        for row in UNDEFINED:
            if row.covers(node, types, SPECIAL_CLASSES):
                return row.reason(node)
    return None


def classes_of(value: Any) -> set[str]:
    """The classes of values (:data:`NAN`, :data:`INF`, :data:`ALL_ZERO`) an array holds; every array is of
    :data:`ANY`. (:data:`OUT_OF_RANGE` depends on the target type: see :func:`_out_of_range`.)"""
    array = np.asarray(value)
    found = {ANY}
    if array.dtype.kind in "fc" and array.size:
        if np.isnan(array).any():
            found.add(NAN)
        if np.isinf(array).any():
            found.add(INF)
    if array.dtype.kind in "fciub" and array.size and not np.any(array):
        found.add(ALL_ZERO)
    return found


def _out_of_range(node: onnx.NodeProto, types: Types, value: Any) -> bool:
    """Whether a float ``value`` cast by ``node`` holds an element outside its integer target's range."""
    target = attribute_of(node, "to") if node.op_type == "Cast" else \
        types.get(node.input[1]) if len(node.input) > 1 else None
    array = np.asarray(value)
    if target not in INTEGERS or array.dtype.kind != "f" or not array.size:
        return False
    info = np.iinfo(helper.tensor_dtype_to_np_dtype(int(target)))
    finite = array[np.isfinite(array)]
    return bool(finite.size) and bool((finite < info.min).any() or (finite > info.max).any())


def undefined_on_values(model: onnx.ModelProto, feeds: dict[str, np.ndarray], output: int) -> str | None:
    """Why ``model``'s output ``output`` is undefined or disputed by the specification on ``feeds``: a
    node it depends on that a row of :data:`UNDEFINED` covers, for the values its first input takes
    (read off onnxruntime, run on the model probed for them); or None (also when onnxruntime cannot
    run the probe: nothing is known then)."""
    if not 0 <= output < len(model.graph.output):
        return None
    nodes = [n for n in upstream(model, model.graph.output[output].name)
             if any(n.op_type in row.operators for row in UNDEFINED) and n.input and n.input[0]]
    if not nodes:
        return None
    types = _types(model)
    names = list(dict.fromkeys(n.input[0] for n in nodes))
    constants = {i.name: onnx.numpy_helper.to_array(i) for i in model.graph.initializer}
    probe = onnx.ModelProto()
    probe.CopyFrom(model)
    probe.graph.output.extend(helper.make_empty_tensor_value_info(name) for name in names
                              if name not in feeds and name not in constants)
    try:
        ran = onnxruntime_outputs(probe, feeds, quiet=True)
    except Exception:  # onnxruntime raises many types
        return None
    values = {**constants, **feeds, **dict(zip([o.name for o in probe.graph.output], ran, strict=False))}
    for node in nodes:
        value = values.get(node.input[0])
        if value is None:
            continue
        present = classes_of(value) | ({OUT_OF_RANGE} if _out_of_range(node, types, value) else set())
        for row in UNDEFINED:
            if row.covers(node, types, present):
                return row.reason(node)
    return None
