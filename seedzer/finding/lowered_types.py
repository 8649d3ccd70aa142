"""The lowering that retypes a value the importer typed right: the code at fault of a wrong output dtype or shape.

A wrong result whose difference is the output's dtype or shape (ReduceMean of an int32 tensor returned as
int64) is filed by default under the converter of the operator computing it. But when the importer declared
the graph output with ONNX's type, the converter typed it right, and the type went wrong later, in the
lowering: :func:`retyped_output` imports the model, compares the output's declared Relax type with ONNX's
(shape inference), and legalizes each binding's Relax operator call alone (``relax.LegalizeOps`` on a module of
that call) to find the first binding feeding that output (in program order) whose type its legalization
changes (``R.mean`` declared int32, ``call_tir(mean)`` int64). Each call alone, and only the output's own
bindings, so that no other binding's lowering is blamed.
That operator's legalization rule is at fault (:func:`seedzer.finding.component.legalization` names it).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
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


def _changed(a: Any, b: Any) -> str | None:
    """What of a tensor type differs between ``a`` and ``b`` (``dtype``, ``shape``), or None (only tensors are
    judged)."""
    from tvm import relax

    if not (isinstance(a, relax.TensorType) and isinstance(b, relax.TensorType)):
        return None
    if str(a.dtype) != str(b.dtype):
        return "dtype"
    return "shape" if str(a.shape) != str(b.shape) else None


def call_alone(call: Any, declared: Any) -> Any:
    """A module whose ``main`` is ``call`` alone (of type ``declared``), each Relax variable it reads a parameter of
    that type."""
    import tvm
    from tvm import relax

    free = list(relax.analysis.free_vars(call))
    params = [relax.Var(v.name, v.ty) for v in free]

    def bound(expr: Any) -> Any:
        if isinstance(expr, relax.Var):
            return next((p for v, p in zip(free, params, strict=True) if v.same_as(expr)), expr)
        if isinstance(expr, relax.Tuple):
            return relax.Tuple([bound(f) for f in expr.fields])
        return expr

    body = relax.Call(call.op, [bound(a) for a in call.args], call.attrs, list(call.ty_args))
    return tvm.IRModule({"main": relax.Function(params, body, declared)})


def bindings_of(function: Any) -> list[Any]:
    """The bindings of the Relax function ``function``'s blocks, in program order."""
    return [b for block in function.body.blocks for b in block.bindings]


def operator_call(value: Any) -> bool:
    """Whether the Relax expression ``value`` calls a Relax operator (not a function, a tuple or a variable)."""
    import tvm
    from tvm import relax

    return isinstance(value, relax.Call) and isinstance(value.op, tvm.ir.Op)


def _feeding(function: Any, index: int, count: int) -> list[Any]:
    """The bindings of ``function`` (in program order) that its ``index``-th of ``count`` results reads, directly
    or through other bindings."""
    from tvm import relax

    bindings = bindings_of(function)

    def binding_of(var: Any) -> Any:
        return next((b for b in bindings if b.var.same_as(var)), None)

    result = function.body.body
    made = binding_of(result) if isinstance(result, relax.Var) else None
    made = made.value if made is not None and isinstance(made.value, relax.Tuple) else result
    if isinstance(made, relax.Tuple) and len(made.fields) == count:
        made = made.fields[index]
    wanted = list(relax.analysis.free_vars(made)) if not isinstance(made, relax.Var) else [made]
    needed: list[Any] = []
    while wanted:
        found = binding_of(wanted.pop())
        if found is not None and not any(found.same_as(n) for n in needed):
            needed.append(found)
            wanted.extend(relax.analysis.free_vars(found.value))
    return [b for b in bindings if any(b.same_as(n) for n in needed)]


def legalized_alone(bindings: Iterable[Any]) -> Iterator[tuple[Any, Any]]:
    """Each of ``bindings`` that calls a Relax operator, with its call legalized alone (``relax.LegalizeOps`` on
    :func:`call_alone` of it), in order; a binding whose legalization fails alone is left out (it decides nothing
    for the callers)."""
    from tvm import relax

    for binding in bindings:
        if not operator_call(binding.value):
            continue
        try:
            lowered = relax.transform.LegalizeOps()(call_alone(binding.value, binding.var.ty))
        except Exception:  # TVM raises many types
            continue
        yield binding, lowered


def _first_retyped(bindings: list[Any]) -> tuple[str, str, Any, Any, str] | None:
    """The first of ``bindings`` calling a Relax operator whose legalization, run on that call alone, gives another
    tensor type than the one declared: its name, the operator, the two types and what differs (``dtype``,
    ``shape``); None when there is none (a legalization that fails is not judged)."""
    from tvm import relax

    tensors = (b for b in bindings if isinstance(b.var.ty, relax.TensorType))
    for binding, lowered in legalized_alone(tensors):
        declared, made = binding.var.ty, lowered["main"].ret_ty
        what = _changed(declared, made)
        if what is not None:
            return binding.var.name, binding.value.op.name, declared, made, what
    return None


def retyped_output(data: bytes, output: str | int) -> Retyped | None:
    """The first binding whose type its legalization changes, when the importer declared the graph output
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
    found = _first_retyped(_feeding(module["main"], names.index(output), len(names)))
    if found is None:
        return None
    name, op, declared, lowered, what = found
    return Retyped(op, name, str(declared), str(lowered), output, what)


def retyped_forked(data: bytes, output: str | int) -> Retyped | None:
    """:func:`retyped_output` in a forked child (a crash, a timeout or an error: None, nothing decided)."""
    from seedzer.execute.forked import call_forked

    got = call_forked(retyped_output, data, output, timeout=CHECK_SECONDS)
    return got.value if got.ok and isinstance(got.value, Retyped) else None
