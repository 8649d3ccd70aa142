"""ONNX operators whose converter hands the node to one Relax operator of the same meaning: a wrong value there is
the lowering's.

A wrong result located to an ONNX operator is filed by default under its converter, which decides what the
operator becomes (:mod:`seedzer.finding.operator_code`). For the operators of :data:`MIRRORS` TVM has a Relax
operator defined with the ONNX operator's own semantics (its docstring says "ONNX style", or it takes
``output_format="onnx"``), and the converter only passes the inputs and attributes on. When the converter emitted
exactly that one call for every node of the operator in the failing model (:func:`mirrored_call` imports each node
alone and reads the Relax bindings), the converter made no choice that could be wrong, and the TOPI function the
operator's legalization calls computed the wrong value, named by its module as its frames would be
(:func:`seedzer.finding.component.lowering_topi`; the legalization rule when it calls none): apache/tvm's
``topi.vision.nms`` (``_nms_loop`` suppressing every box when ``iou_threshold`` is 0), ``topi.scatter_elements``
(reusing the indices' offsets for the data's). When the converter emitted anything more (a negative-index
normalization it computes, a box format it converts), the converter keeps the blame.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from seedzer.finding.component import legalization, lowering_topi
from seedzer.finding.lowered_types import bindings_of, operator_call


@dataclass(frozen=True)
class Mirror:
    """The ONNX operator ``operator`` whose meaning the Relax operator ``relax_op`` has; ``reference`` says where
    that was read and which audited roots it decides."""

    operator: str
    relax_op: str
    reference: str


MIRRORS: tuple[Mirror, ...] = (
    Mirror("NonMaxSuppression", "relax.vision.all_class_non_max_suppression",
           "onnx_frontend.NonMaxSuppression._impl_v10 calls it with output_format='onnx' and constant thresholds; "
           "audits of four campaigns (9828df026767): topi/vision/nms.py _nms_loop sets num_valid_boxes to 0 when "
           "iou_threshold is 0"),
    Mirror("ScatterElements", "relax.scatter_elements",
           "relax.op.scatter_elements: 'ONNX style scatter elements'; the converter passes axis and reduction on; "
           "A/B audit of issue 57 (33dad1314ef7): topi/scatter_elements.py gen_ir reuses the indices' flat offset"),
    Mirror("ScatterND", "relax.scatter_nd",
           "relax.op.scatter_nd follows ONNX ScatterND (reduction update/add/mul/min/max); the converter normalizes "
           "negative indices itself (then it emits more than the one call and keeps the blame)"),
    Mirror("GatherElements", "relax.gather_elements",
           "relax.op.gather_elements follows ONNX GatherElements (axis); the converter's negative-index "
           "normalization emits more calls when the indices are not constants"),
    Mirror("GatherND", "relax.gather_nd",
           "relax.op.gather_nd follows ONNX GatherND (batch_dims); as GatherElements for negative indices"),
)
"""The ONNX operators a converter maps onto one Relax operator of the same meaning."""


@dataclass(frozen=True)
class MirroredCall:
    """Every node of ``operator`` in a model imports as one call of ``op``, which ``code`` lowers (a TOPI module, or the
    legalization rule)."""

    operator: str
    op: str
    code: str


def mirror_of(operator: str) -> Mirror | None:
    """The row of :data:`MIRRORS` for the ONNX operator ``operator``, or None."""
    return next((m for m in MIRRORS if m.operator == operator), None)


def relax_calls(module: Any) -> list[str]:
    """The Relax operators the bindings of ``module``'s main function call, in program order (tuples, their items
    and variables are no calls)."""
    return [b.value.op.name for b in bindings_of(module["main"]) if operator_call(b.value)]


def node_alone(model: Any, index: int) -> Any:
    """The model of node ``index`` of ``model`` (shape-inferred) alone: its inputs that a constant makes stay
    constants (an initializer, a ``Constant`` node), the others become graph inputs of their inferred types.
    Raises when an input's type is not known."""
    import onnx
    from onnx.utils import Extractor

    graph = model.graph
    node = graph.node[index]
    made = {o for n in graph.node if n.op_type == "Constant" for o in n.output}
    constant = {i.name for i in graph.initializer} | made
    inputs = [name for name in node.input if name and name not in constant]
    known = {v.name for v in [*graph.input, *graph.value_info, *graph.output]}
    missing = [name for name in inputs if name not in known]
    if missing:
        raise ValueError(f"no type inferred for {', '.join(missing)}")
    alone = Extractor(model).extract_model(inputs, [o for o in node.output if o])
    onnx.checker.check_model(alone)
    return alone


def mirrored_call(data: bytes, operator: str) -> MirroredCall | None:
    """Whether every node of the ONNX operator ``operator`` in the model ``data`` imports, alone, as exactly the one
    call of its mirror's Relax operator (see the module docstring): that operator's legalization, else None (not
    an operator of :data:`MIRRORS`, no such node, a node the converter turns into more or other calls, or one that
    cannot be cut out). Imports TVM: call it in a forked child."""
    mirror = mirror_of(operator)
    code = (lowering_topi(mirror.relax_op) or legalization(mirror.relax_op)) if mirror is not None else None
    if mirror is None or code is None:
        return None
    import onnx
    from tvm.relax.frontend.onnx import from_onnx

    model = onnx.shape_inference.infer_shapes(onnx.load_model_from_string(data))
    indices = [i for i, node in enumerate(model.graph.node) if node.op_type == operator]
    if not indices:
        return None
    for index in indices:
        try:
            calls = relax_calls(from_onnx(node_alone(model, index)))
        except Exception:  # a node that cannot be cut out or imported alone decides nothing
            return None
        if calls != [mirror.relax_op]:
            return None
    return MirroredCall(operator, mirror.relax_op, code)
