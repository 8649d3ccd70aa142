"""Whether a Relax module is a consistent program: what every Relax IR mutation must leave behind.

``relax.analysis.well_formed`` checks scopes, dataflow rules and that every expression has a type; it
does not check that a ``call_tir``'s arguments fit the PrimFunc it calls, nor that a binding's type is
the one TVM's type inference derives from its value. A rewrite that changes a variable's type can
break both and still pass it: ``mutate.SymbolicShapes`` after ``relax.LegalizeOps`` once gave main a
symbolic input and kept calling PrimFuncs of fixed buffer shapes, so FuseTIR rejected the program
before any fault of TVM's (the audit of issue 53: three false roots). :func:`inconsistencies` lists a
module's problems of two kinds:

- ``call_tir`` (and its in-place and gradient forms): each tensor argument must have the rank and dtype
  of the PrimFunc buffer it binds, and a dimension the buffer fixes must be that constant in the
  argument's type (a symbolic or unknown one is not), one the buffer names a variable of must bind it
  consistently;
- every call of a Relax operator (whose type TVM infers from its operands) is normalized afresh: it
  must normalize, and the type of the variable it is bound to must subsume the inferred one.

A rewrite is judged by the problems it adds (:func:`added_inconsistency`): what TVM's own passes left
in the module before it is theirs to answer for. Depends on tvm and the standard library only (copied
verbatim into repro.py, before the mutations).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import tvm
import tvm_ffi
from tvm import relax

from seedzer.kernel.graph.relax_build import declares_type

# --- kernel code (everything below is copied verbatim into repro.py) ---
TIR_CALLS = ("relax.call_tir", "relax.call_tir_inplace", "relax.call_tir_with_grad")
"""Operators calling a PrimFunc of the module with tensor arguments (its buffers) and a declared output."""
_TYPE_FAILURES = {"FAIL_L0": "no value fits both", "FAIL_L1": "they differ", "FAIL_L2": "inference cannot show it"}


def _dims(ty: Any) -> list[Any] | None:
    """The dimensions of a tensor type with a known shape (None otherwise)."""
    shape = getattr(ty, "shape", None)
    if not isinstance(ty, relax.TensorType) or shape is None or not hasattr(shape, "values"):
        return None
    return list(shape.values)


def _bind_dims(where: str, name: str, buffer: Any, ty: Any, bound: dict[Any, Any]) -> str | None:
    """Why the tensor of type ``ty`` cannot be passed as the PrimFunc parameter ``buffer`` (a buffer:
    its ``name``, ``dtype`` and ``shape``; its variables bound in ``bound`` so far), or None."""
    if not isinstance(ty, relax.TensorType):
        return f"{where}: argument {name} is not a tensor"
    if str(ty.dtype) != str(buffer.dtype):
        return f"{where}: argument {name} is {ty.dtype}, the buffer {buffer.name} {buffer.dtype}"
    dims = _dims(ty)
    if dims is None:
        return None if ty.ndim in (-1, len(buffer.shape)) else \
            f"{where}: argument {name} has rank {ty.ndim}, the buffer {buffer.name} {len(buffer.shape)}"
    if len(dims) != len(buffer.shape):
        return f"{where}: argument {name} has rank {len(dims)}, the buffer {buffer.name} {len(buffer.shape)}"
    for axis, (want, have) in enumerate(zip(buffer.shape, dims, strict=True)):
        if isinstance(want, tvm.tirx.IntImm):
            if not (isinstance(have, tvm.tirx.IntImm) and int(have) == int(want)):
                return (f"{where}: argument {name} has dimension {have} on axis {axis}, where the buffer "
                        f"{buffer.name} fixes {int(want)}")
        elif isinstance(want, tvm.tirx.Var):
            if want in bound and not tvm_ffi.structural_equal(bound[want], have):
                return (f"{where}: argument {name} binds {want} to {have} on axis {axis}, already bound to "
                        f"{bound[want]}")
            bound.setdefault(want, have)
    return None


def _tir_call_problem(mod: Any, call: Any) -> str | None:
    """Why a ``call_tir`` of ``mod`` does not fit its PrimFunc (see the module docstring), or None."""
    callee = call.args[0]
    if not isinstance(callee, tvm.ir.GlobalVar) or callee not in mod.get_global_vars():
        return None
    func = mod[callee]
    if not isinstance(func, tvm.tirx.PrimFunc):
        return None
    where = f"{call.op.name} of {callee.name_hint}"
    args = call.args[1]
    tensors = list(args.fields) if isinstance(args, relax.Tuple) else [args]
    buffers = [p for p in func.params if getattr(p, "shape", None) is not None]
    outputs = call.ty_args[0] if call.ty_args else None
    out_types = list(outputs.fields) if isinstance(outputs, relax.TupleType) else [outputs] if outputs else []
    if call.op.name == "relax.call_tir_inplace":
        out_types = []  # the outputs are some of the arguments: their buffers are the arguments'
    bound: dict[Any, Any] = {}
    for index, (arg, buffer) in enumerate(zip([*tensors, *out_types], buffers, strict=False)):
        ty = arg.ty if index < len(tensors) else arg
        name = arg.name if isinstance(arg, relax.Var) else f"#{index}"
        problem = _bind_dims(where, name if index < len(tensors) else f"output {index - len(tensors)}", buffer,
                             ty, bound)
        if problem is not None:
            return problem
    return None


def _inference_problem(bb: Any, binding: Any) -> str | None:
    """Why the operator call bound by ``binding`` does not normalize afresh to a type its variable
    subsumes, or None (a call whose type is declared, or no operator call, is not judged)."""
    value = binding.value
    if not isinstance(binding, relax.VarBinding) or not isinstance(value, relax.Call) \
            or not isinstance(value.op, tvm.ir.Op) or declares_type(value):
        return None
    where = f"{value.op.name} bound to {binding.var.name}"
    try:
        fresh = bb.normalize(relax.Call(value.op, list(value.args), value.attrs, list(value.ty_args)))
    except Exception as exc:  # TVM's type inference rejects the operands
        text = next((ln.strip() for ln in str(exc).splitlines() if ln.strip()), type(exc).__name__)
        return f"{where}: type inference rejects it ({text[:200]})"
    check = relax.analysis.BaseCheckResult(int(relax.analysis.type_base_check(binding.var.ty, fresh.ty)))
    failed = _TYPE_FAILURES.get(check.name)
    if failed is not None:
        return f"{where}: declared {binding.var.ty}, inferred {fresh.ty} ({failed})"
    return None


def inconsistencies(mod: Any) -> list[str]:
    """Every problem of ``mod`` (see the module docstring), one line each, in the order found."""
    problems: list[str] = []
    bb = relax.BlockBuilder(mod)

    def visit(expr: Any) -> None:
        if isinstance(expr, relax.Call) and isinstance(expr.op, tvm.ir.Op) and expr.op.name in TIR_CALLS:
            problem = _tir_call_problem(mod, expr)
            if problem is not None:
                problems.append(problem)

    for _, func in mod.functions.items():
        if not isinstance(func, relax.Function):
            continue
        relax.analysis.post_order_visit(func, visit)
        for block in func.body.blocks if isinstance(func.body, relax.SeqExpr) else ():
            for binding in block.bindings:
                problem = _inference_problem(bb, binding)
                if problem is not None:
                    problems.append(problem)
    return problems


def _subject(problem: str) -> str:
    """What a problem is about (its operator and callee), without the names of the IR's variables."""
    return problem.split(":")[0].split(" bound to ")[0]


def added_inconsistency(before: Any, after: Any) -> str | None:
    """The first problem of ``after`` about a subject ``before`` has fewer problems about (a rewrite's
    own), or None."""
    known = Counter(_subject(p) for p in inconsistencies(before))
    for problem in inconsistencies(after):
        subject = _subject(problem)
        if known[subject] > 0:
            known[subject] -= 1
            continue
        return problem
    return None
