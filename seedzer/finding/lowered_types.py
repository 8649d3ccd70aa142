"""The lowering that retypes a value the importer typed right: the code at fault of a wrong output dtype or shape.

A wrong result whose difference is the output's dtype or shape (ReduceMean of an int32 tensor returned as
int64) is filed by default under the converter of the operator computing it. But when the importer declared
the graph output with ONNX's type, the converter typed it right, and the type went wrong later, in the
lowering: :func:`retyped_output` imports the model, compares the output's declared Relax type with ONNX's
(shape inference), runs ``relax.LegalizeOps`` alone, and finds the first binding (in program order) of a
Relax operator whose type its legalization changes (``R.mean`` declared int32, ``call_tir(mean)`` int64).
That operator's legalization rule is at fault (:func:`seedzer.finding.component.legalization` names it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from seedzer.finding.onnx_types import CHECK_SECONDS, ONNX_TO_NUMPY

SHAPE_DTYPE = "shape/dtype"
"""How the kernel's comparison starts the reason of an output of another dtype or shape than expected."""


@dataclass(frozen=True)
class Retyped:
    """A binding ``value`` of the Relax operator ``op`` whose type ``declared`` (the importer's, ONNX's for the
    graph output ``output``) its legalization turns into ``lowered``; ``what`` it changes (``dtype``, ``shape``)."""

    op: str
    value: str
    declared: str
    lowered: str
    output: str
    what: str


def _onnx_agrees(want: Any, got: Any) -> bool:
    """Whether the Relax type ``got`` has the ONNX tensor type ``want``'s element type and static dimensions."""
    from tvm import relax, tirx

    if not isinstance(got, relax.TensorType) or not want.HasField("tensor_type"):
        return False
    tensor = want.tensor_type
    if ONNX_TO_NUMPY.get(tensor.elem_type) != str(got.dtype):
        return False
    if not tensor.HasField("shape"):
        return True
    dims = [d.dim_value if d.HasField("dim_value") else None for d in tensor.shape.dim]
    if got.ndim >= 0 and got.ndim != len(dims):
        return False
    values = getattr(got.shape, "values", None) or ()
    return all(d is None or not isinstance(v, tirx.IntImm) or int(v) == d for d, v in zip(dims, values, strict=False))


def _bindings(function: Any) -> dict[str, tuple[Any, str | None]]:
    """Each binding's variable name (the first of a name) and its type, with the Relax operator it calls (None:
    not an operator call)."""
    import tvm
    from tvm import relax

    found: dict[str, tuple[Any, str | None]] = {}
    for block in function.body.blocks:
        for binding in block.bindings:
            value = binding.value
            op = value.op.name if isinstance(value, relax.Call) and isinstance(value.op, tvm.ir.Op) else None
            found.setdefault(binding.var.name, (binding.var.ty, op))
    return found


def _changed(a: Any, b: Any) -> str | None:
    """What of a tensor type differs between ``a`` and ``b`` (``dtype``, ``shape``), or None (only tensors are
    judged)."""
    from tvm import relax

    if not (isinstance(a, relax.TensorType) and isinstance(b, relax.TensorType)):
        return None
    if str(a.dtype) != str(b.dtype):
        return "dtype"
    return "shape" if str(a.shape) != str(b.shape) else None


def retyped_output(data: bytes, output: str | int) -> Retyped | None:
    """The first binding whose type ``relax.LegalizeOps`` changes, when the importer declared the graph output
    ``output`` (its name, or its index) of the model ``data`` with ONNX's type (see the module docstring); None
    when it did not (the converter typed it wrongly), when ONNX infers no type for it, or when no legalization
    retypes a binding. Imports TVM: call it in a forked child."""
    import onnx
    from tvm import relax
    from tvm.relax.frontend.onnx import from_onnx

    model = onnx.load_model_from_string(data)
    names = [o.name for o in model.graph.output]
    if isinstance(output, int):
        output = names[output] if 0 <= output < len(names) else ""
    if output not in names:
        return None
    try:
        inferred = onnx.shape_inference.infer_shapes(model)
    except Exception:  # shape inference raises several types: the model's own declaration stands
        inferred = model
    want = inferred.graph.output[names.index(output)].type
    module = from_onnx(model, keep_params_in_input=False)
    ret = module["main"].ret_ty
    fields = list(ret.fields) if isinstance(ret, relax.TupleType) else [ret]
    if len(fields) != len(names) or not _onnx_agrees(want, fields[names.index(output)]):
        return None
    lowered = _bindings(relax.transform.LegalizeOps()(module)["main"])
    for name, (declared, op) in _bindings(module["main"]).items():
        after = lowered.get(name)
        what = _changed(declared, after[0]) if op is not None and after is not None else None
        if op is not None and after is not None and what is not None:
            return Retyped(op, name, str(declared), str(after[0]), output, what)
    return None


def retyped_forked(data: bytes, output: str | int) -> Retyped | None:
    """:func:`retyped_output` in a forked child (a crash, a timeout or an error: None, nothing decided)."""
    from seedzer.execute.forked import call_forked

    got = call_forked(retyped_output, data, output, timeout=CHECK_SECONDS)
    return got.value if got.ok and isinstance(got.value, Retyped) else None
