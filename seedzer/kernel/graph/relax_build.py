"""Building Relax functions by hand: the toolkit of the Relax IR mutations.

Renaming variables and constants through an expression, finding ``main``, fresh function names,
re-emitting bindings through a ``BlockBuilder`` (re-deriving their types, ``R.match_cast`` where a
shape would be lost), private copies, outlining a run of bindings into a private function called
from ``main``, and replacing ``main`` in a module. :mod:`seedzer.kernel.graph.relax_mutations` is made of
these; they keep what a function computes and only change how it is written.

Depends on tvm and the standard library only (copied verbatim into repro.py, before the mutations).
"""

from __future__ import annotations

from typing import Any

import tvm
import tvm_ffi
from tvm import relax


# --- kernel code (everything below is copied verbatim into repro.py) ---
@relax.expr_functor.mutator
class Renamer(relax.PyExprMutator):  # type: ignore[misc]
    """Replaces uses of variables (and of constants) by the expressions a mapping gives."""

    def __init__(self, mapping: dict[Any, Any]) -> None:
        """``mapping``: old variable or constant -> its replacement (read at each use)."""
        super().__init__()
        self.mapping = mapping

    def visit_var_(self, op: Any) -> Any:
        """A variable's replacement; unmapped, what the mutator made of it (a variable it redefined
        inside the expression, e.g. in an ``If`` branch whose types changed, is used as redefined)."""
        return self.mapping[op] if op in self.mapping else super().visit_var_(op)

    def visit_dataflow_var_(self, op: Any) -> Any:
        """A dataflow variable's replacement; unmapped, what the mutator made of it."""
        return self.mapping[op] if op in self.mapping else super().visit_dataflow_var_(op)

    def visit_generic_const_(self, op: Any) -> Any:
        """A constant's replacement (itself when unmapped)."""
        return self.mapping.get(op, op)


def rename(expr: Any, mapping: dict[Any, Any]) -> Any:
    """``expr`` with the variables and constants of ``mapping`` replaced."""
    if not mapping:
        return expr
    return Renamer(mapping).visit_expr(expr)


def main_function(mod: Any) -> tuple[Any, Any] | None:
    """``(GlobalVar, Function)`` of ``mod``'s Relax ``main`` (None if there is none)."""
    names = {gv.name_hint: gv for gv in mod.get_global_vars()}
    gv = names.get("main")
    if gv is None or not isinstance(mod[gv], relax.Function):
        return None
    return gv, mod[gv]


def unique_name(mod: Any, base: str) -> str:
    """``base``, or ``base_<n>`` with the smallest ``n`` no function of ``mod`` is named."""
    names = {gv.name_hint for gv in mod.get_global_vars()}
    if base not in names:
        return base
    n = 1
    while f"{base}_{n}" in names:
        n += 1
    return f"{base}_{n}"


def same_type(a: Any, b: Any) -> bool:
    """Whether two Relax types are structurally equal."""
    return bool(tvm_ffi.structural_equal(a, b))


def with_body(func: Any, body: Any, ret_ty: Any = None, params: Any = None) -> Any:
    """``func`` with another body (and return type / parameters), keeping purity and attributes."""
    return relax.Function(list(func.params if params is None else params), body,
                          func.ret_ty if ret_ty is None else ret_ty, func.is_pure, func.attrs)


DECLARED_TYPE = ("relax.call_", "relax.vm.", "relax.builtin.", "relax.memory.", "relax.dist.")
"""Prefixes of operators whose result type the call declares (``call_tir``'s output type, a packed
function's) instead of TVM inferring it from the operands: what they take is fixed by their callee."""


def declares_type(value: Any) -> bool:
    """Whether ``value`` is a call whose result type is declared rather than inferred (:data:`DECLARED_TYPE`)."""
    return isinstance(value, relax.Call) and isinstance(value.op, tvm.ir.Op) and value.op.name.startswith(DECLARED_TYPE)


def emit_bindings(bb: Any, bindings: Any, mapping: dict[Any, Any], dataflow: bool,
                  fallback: bool = False) -> None:
    """Re-emit ``bindings`` into ``bb``'s current block, renaming through ``mapping`` (updated with
    each binding's new variable). Non-dataflow variables of a dataflow block stay block outputs.

    With ``fallback``, a binding whose value does not normalize (an operator rejecting the
    re-derived operand types), whose shape inference loses a shape the old binding had (LegalizeOps
    leaves such calls alone, which VM codegen then rejects), or whose call declares its type
    (:func:`declares_type`: a ``call_tir`` of a PrimFunc whose buffers have fixed shapes, which a
    symbolic argument no longer fits) is retried with the operands whose types changed
    ``R.match_cast`` to their old types.
    """
    for binding in bindings:
        old = binding.var
        name = old.name
        value = rename(binding.value, mapping)
        output = dataflow and not isinstance(old, relax.DataflowVar)
        if isinstance(binding, relax.MatchCast):
            new = bb.match_cast(value, binding.ty, name)
            if output:
                new = bb.emit_output(new, name)
        else:
            try:
                normalized = bb.normalize(value)
                failed = fallback and (lost_shape(old.ty, normalized.ty) or declares_type(value))
            except Exception:  # an operator that cannot take the re-derived types
                if not fallback:
                    raise
                failed = True
            if failed:
                local = dict(mapping)
                for used in relax.analysis.free_vars(binding.value):
                    if used in mapping and not same_type(mapping[used].ty, used.ty):
                        local[used] = bb.match_cast(mapping[used], used.ty, used.name + "_static")
                normalized = bb.normalize(rename(binding.value, local))
            new = bb.emit_output(normalized, name) if output else bb.emit(normalized, name)
        mapping[old] = new


def lost_shape(old: Any, new: Any) -> bool:
    """Whether type ``new`` knows less of a tensor's shape than ``old`` did (in tuples too)."""
    if isinstance(old, relax.TupleType) and isinstance(new, relax.TupleType):
        return any(lost_shape(a, b) for a, b in zip(old.fields, new.fields, strict=False))
    if isinstance(old, relax.TensorType) and isinstance(new, relax.TensorType):
        return old.shape is not None and new.shape is None
    return False


def private_copy(bb: Any, gv: Any) -> Any:
    """Replace the function ``gv`` of ``bb``'s module by a copy with fresh variables, symbolic ones
    included (a symbolic variable may be defined by one function only); ``gv``."""
    bb.update_func(gv, relax.utils.copy_with_new_vars(bb.get()[gv]))
    return gv


def rebuild(bb: Any, func: Any, name: str, params: list[Any], mapping: dict[Any, Any], fallback: bool = False) -> Any:
    """A private function named ``name`` (added to ``bb``'s module) with ``func``'s blocks re-emitted
    over ``params`` (``mapping`` holds old parameters and constants to replace); its GlobalVar.
    ``fallback``: see :func:`emit_bindings`."""
    with bb.function(name, params, pure=bool(func.is_pure), private=True):
        for block in func.body.blocks:
            if isinstance(block, relax.DataflowBlock):
                with bb.dataflow():
                    emit_bindings(bb, block.bindings, mapping, True, fallback)
            else:
                emit_bindings(bb, block.bindings, mapping, False, fallback)
        bb.emit_func_output(rename(func.body.body, mapping))
    return bb.get().get_global_var(name)


def replace_main(bb: Any, main_gv: Any, new_main: Any, drop: tuple[str, ...] = ()) -> Any:
    """``bb``'s module with ``main`` replaced by ``new_main`` and the functions named ``drop`` removed."""
    mod = bb.get()
    functions = {gv: fn for gv, fn in mod.functions.items() if gv.name_hint not in drop}
    functions[main_gv] = new_main
    return normalized(tvm.IRModule(functions, attrs=mod.attrs, global_infos=mod.global_infos))


def normalized(mod: Any) -> Any:
    """``mod`` with the types of hand-built expressions (SeqExpr, Function) filled in by Relax's
    normalizer (``relax.transform.Normalize``, which changes nothing else)."""
    return relax.transform.Normalize()(mod)


def fresh_params(func: Any) -> list[Any]:
    """New variables like ``func``'s parameters (same names and types)."""
    return [relax.Var(p.name, p.ty) for p in func.params]


# --- mutate.SymbolicShapes ---------------------------------------------------------------------
def rebind(binding: Any, var: Any, value: Any = None) -> Any:
    """``binding`` with another variable (and value)."""
    value = binding.value if value is None else value
    if isinstance(binding, relax.MatchCast):
        return relax.MatchCast(var, value, binding.ty)
    return relax.VarBinding(var, value)


def rename_block(block: Any, mapping: dict[Any, Any]) -> Any:
    """``block`` with uses renamed through ``mapping``."""
    bindings = [rebind(b, b.var, rename(b.value, mapping)) for b in block.bindings]
    return relax.DataflowBlock(bindings) if isinstance(block, relax.DataflowBlock) else relax.BindingBlock(bindings)


# --- mutate.DuplicateFunction ------------------------------------------------------------------
def call_main(bb: Any, main: Any, callee: Any, extra: list[Any], dataflow: bool) -> Any:
    """A new ``main`` (same parameters' names and types) whose body calls ``callee`` with its
    parameters followed by ``extra`` arguments."""
    params = fresh_params(main)
    call = bb.normalize(relax.Call(callee, [*params, *extra]))
    if dataflow:
        inner = relax.DataflowVar("lv", call.ty)
        out = relax.Var("gv", call.ty)
        blocks = [relax.DataflowBlock([relax.VarBinding(inner, call), relax.VarBinding(out, inner)])]
    else:
        out = relax.Var("gv", call.ty)
        blocks = [relax.BindingBlock([relax.VarBinding(out, call)])]
    return with_body(main, relax.SeqExpr(blocks, out), call.ty, params)


def binding_sites(main: Any) -> list[tuple[int, int]]:
    """``(block, binding)`` of every binding of ``main``'s body, in order."""
    return [(b, k) for b, block in enumerate(main.body.blocks) for k in range(len(block.bindings))]


def outline_run(mod: Any, main_gv: Any, main: Any, index: int, length: int, base: str,
                prims: dict[Any, Any] | None = None) -> Any:
    """``mod`` with a run of at most ``length`` bindings of one of main's blocks, starting at the
    ``index``-th binding (modulo; later starts are tried when a run cannot be outlined), moved into a
    private function named after ``base``. ``prims``: constants of the run the callee takes as
    ``R.Prim`` parameters, each mapped to the PrimValue passed at the call site."""
    sites = binding_sites(main)
    for step in range(len(sites)):
        b, k = sites[(index + step) % len(sites)]
        block = main.body.blocks[b]
        end = min(len(block.bindings), k + length)
        out = try_outline(mod, main_gv, main, b, k, end, base, prims or {})
        if out is not None:
            return out
    return mod


def try_outline(mod: Any, main_gv: Any, main: Any, b: int, start: int, end: int, base: str,
                 prims: dict[Any, Any]) -> Any:
    """Outline bindings ``start:end`` of block ``b`` (None: the run cannot be outlined)."""
    blocks = list(main.body.blocks)
    block = blocks[b]
    run = list(block.bindings[start:end])
    defined = {binding.var for binding in run}
    inputs: list[Any] = []
    for binding in run:
        for var in relax.analysis.free_vars(binding.value):
            if var not in defined and var not in inputs:
                inputs.append(var)
    later = relax.SeqExpr([relax.BindingBlock(list(block.bindings[end:])), *blocks[b + 1:]], main.body.body)
    used_after = set(relax.analysis.free_vars(later))
    outputs = [binding.var for binding in run if binding.var in used_after]
    if not outputs:
        return None
    constants = [c for c in prims if any(contains(binding.value, c) for binding in run)]
    if prims and not constants:
        return None
    params = [relax.Var(v.name, v.ty) for v in inputs]
    prim_params = [relax.Var(f"s{i}", c.ty.dtype) for i, c in enumerate(constants)]
    mapping: dict[Any, Any] = dict(zip(inputs, params, strict=True))
    mapping.update(zip(constants, prim_params, strict=True))
    name = unique_name(mod, base)
    bb = relax.BlockBuilder(mod)
    dataflow = isinstance(block, relax.DataflowBlock)
    try:
        with bb.function(name, [*params, *prim_params], private=True):
            ret = _emit_run(bb, run, mapping, outputs, dataflow)
            bb.emit_func_output(ret)
    except Exception:  # e.g. a MatchCast whose symbolic vars the callee cannot define
        return None
    gv = private_copy(bb, bb.get().get_global_var(name))
    if relax.analysis.free_symbolic_vars(bb.get()[gv]):
        return None
    call = bb.normalize(relax.Call(gv, [*inputs, *[prims[c] for c in constants]]))
    site: list[Any] = []
    if len(outputs) == 1 and same_type(call.ty, outputs[0].ty):
        site.append(relax.VarBinding(outputs[0], call))
    else:
        result = (relax.DataflowVar if dataflow else relax.Var)("outlined", call.ty)
        site.append(relax.VarBinding(result, call))
        for i, var in enumerate(outputs):
            item = result if len(outputs) == 1 else bb.normalize(relax.TupleGetItem(result, i))
            if same_type(item.ty, var.ty):
                site.append(relax.VarBinding(var, item))
            else:
                site.append(relax.MatchCast(var, item, var.ty))
    bindings = [*block.bindings[:start], *site, *block.bindings[end:]]
    blocks[b] = relax.DataflowBlock(bindings) if dataflow else relax.BindingBlock(bindings)
    return replace_main(bb, main_gv, with_body(main, relax.SeqExpr(blocks, main.body.body)))


def _emit_run(bb: Any, run: list[Any], mapping: dict[Any, Any], outputs: list[Any], dataflow: bool) -> Any:
    """Emit the bindings ``run`` into the callee ``bb`` builds, in a dataflow block only when they came
    from one (a binding block may hold an ``If``, which no dataflow block may); the callee's result."""
    def result() -> Any:
        values = [mapping[v] for v in outputs]
        return values[0] if len(values) == 1 else relax.Tuple(values)

    if not dataflow:
        emit_bindings(bb, run, mapping, False)
        return bb.emit(result(), "out")
    with bb.dataflow():
        emit_bindings(bb, run, mapping, True)
        return bb.emit_output(result(), "out")


def contains(expr: Any, const: Any) -> bool:
    """Whether ``const`` (the very object) occurs in ``expr``."""
    found: list[bool] = []
    relax.analysis.post_order_visit(expr, lambda e: found.append(True) if e.same_as(const) else None)
    return bool(found)


# --- mutate.TupleOutputs -----------------------------------------------------------------------
