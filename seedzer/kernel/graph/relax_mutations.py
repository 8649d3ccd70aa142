"""Relax-level IR mutations of an imported module that keep it valid and keep ``main`` callable the same way.

A graph case's step ``mutate.<Name>`` (a :class:`~seedzer.kernel.graph.case.GraphPass` with JSON-able
arguments) rewrites the module the way a user or a frontend could have written it, so TVM's passes
and ``tvm.compile`` see IR shapes an ONNX import never makes. Every mutation is deterministic given
its arguments (an index seed picks the site), never changes what ``main`` computes, and keeps
``main``'s parameters (the model's inputs, in order) and its flattened outputs. A mutation that finds
no site returns the module unchanged. Each is meant for high-level Relax (before
``relax.LegalizeOps``); it also accepts other forms, building them through TVM's BlockBuilder.

- ``mutate.SymbolicShapes`` (``input``, ``axes``, ``share``): main's chosen parameter(s) get symbolic
  (``T.int64`` variable) dims on the chosen axes, and every binding is re-normalized so the shapes
  flow symbolically. Where an operator cannot take the symbolic form, its operands are first
  ``R.match_cast`` back to their static types. Same computation: the VM is still called with
  tensors of the static shapes, which the symbolic signature accepts.
- ``mutate.SplitDataflow`` (``index``): a dataflow block is split in two at a binding; the dataflow
  vars that cross the split become non-dataflow outputs of the first block, and the first of them is
  re-bound in a plain block between the two (else Relax's normalizer merges adjacent dataflow blocks
  back). Same bindings, same order.
- ``mutate.DuplicateFunction`` (``mode``, ``index``, ``length``): ``mode="call"`` copies ``main`` into a
  private function and makes ``main`` call it (inside a dataflow block when ``index`` is odd);
  ``mode="outline"`` moves a contiguous run of bindings of a block into a private function called
  from ``main``, whose results are bound back to the original variables (through ``R.match_cast``
  where the callee's re-derived types differ). Same bindings, evaluated in a callee.
- ``mutate.TupleOutputs`` (``depth``, ``unpack``): the returned value is unpacked through
  ``TupleGetItem`` bindings and re-packed (``unpack``) and/or nested ``depth`` times in 1-tuples; the
  VM's flattened outputs are the same arrays in the same order.
- ``mutate.PrimArgs`` (``index``): a binary elementwise call with a scalar (0-d) constant operand is
  outlined into a private function taking the scalar as an ``R.Prim`` parameter, passed as a
  ``R.prim_value`` at the call site. Relax binary operators broadcast a PrimValue like a 0-d tensor.
- ``mutate.LiftConstants`` (``index``, ``all``): ``main``'s body moves into a private function in
  which one (or every) constant is a parameter; ``main`` calls it with the constants bound at the
  call site, so its own signature is unchanged. Same values, passed instead of embedded.

Built with :mod:`seedzer.kernel.graph.relax_build`. Depends on tvm and the standard library only (copied
verbatim into repro.py, after the toolkit).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any

import tvm
from tvm import relax

from seedzer.kernel.graph.case import GraphPass
from seedzer.kernel.graph.relax_build import (
    call_main,
    fresh_params,
    main_function,
    normalized,
    outline_run,
    private_copy,
    rebind,
    rebuild,
    rename,
    rename_block,
    replace_main,
    try_outline,
    unique_name,
    with_body,
)

# --- kernel code (everything below is copied verbatim into repro.py) ---
_PRIM_OPS = ("relax.add", "relax.subtract", "relax.multiply", "relax.divide", "relax.maximum", "relax.minimum")
"""Binary elementwise operators whose scalar operand may be a PrimValue (``mutate.PrimArgs``)."""
_PRIM_DTYPES = ("float32", "float64", "int32", "int64")
"""Scalar dtypes ``mutate.PrimArgs`` passes as ``R.Prim``."""


def _dim_var(param: str, axis: int) -> str:
    """The symbolic variable name of a parameter's axis (a valid identifier)."""
    return "n_" + re.sub(r"\W", "_", param) + f"_{axis}"


def symbolic_shapes(input: int = 0, axes: int = 0, share: bool = False) -> Callable[[Any], Any]:
    """``mutate.SymbolicShapes``: symbolic dims on main's parameter ``input % n`` (every tensor
    parameter when ``input < 0``); the axes are the bit mask ``1 + axes % (2**ndim - 1)``. With
    ``share``, equal static sizes share one variable (``n_<size>``)."""

    def mutate(mod: Any) -> Any:
        found = main_function(mod)
        if found is None:
            return mod
        main_gv, main = found
        candidates = [i for i, p in enumerate(main.params) if _static_tensor(p.ty)]
        if not candidates:
            return mod
        chosen = candidates if input < 0 else [candidates[input % len(candidates)]]
        shared: dict[int, Any] = {}
        params = []
        for i, p in enumerate(main.params):
            if i not in chosen:
                params.append(relax.Var(p.name, p.ty))
                continue
            dims = [int(d) for d in p.ty.shape.values]
            mask = 1 + axes % (2 ** len(dims) - 1)
            shape: list[Any] = []
            for axis, size in enumerate(dims):
                if not mask >> axis & 1:
                    shape.append(size)
                elif share:
                    shape.append(shared.setdefault(size, tvm.tirx.Var(f"n_{size}", "int64")))
                else:
                    shape.append(tvm.tirx.Var(_dim_var(p.name, axis), "int64"))
            params.append(relax.Var(p.name, relax.TensorType(shape, p.ty.dtype)))
        bb = relax.BlockBuilder(mod)
        tmp = unique_name(mod, "seedzer_symbolic")
        gv = rebuild(bb, main, tmp, params, dict(zip(main.params, params, strict=True)), fallback=True)
        built = bb.get()[gv]
        return replace_main(bb, main_gv, with_body(main, built.body, built.ret_ty, built.params), drop=(tmp,))

    return mutate


def _static_tensor(ty: Any) -> bool:
    """Whether ``ty`` is a tensor type of known rank >= 1 with every dim a constant."""
    if not isinstance(ty, relax.TensorType) or ty.shape is None or not hasattr(ty.shape, "values"):
        return False
    values = list(ty.shape.values)
    return len(values) > 0 and all(isinstance(d, tvm.tirx.IntImm) for d in values)


# --- mutate.SplitDataflow ----------------------------------------------------------------------
def split_dataflow(index: int = 0) -> Callable[[Any], Any]:
    """``mutate.SplitDataflow``: split point ``index`` modulo the number of split points of main's
    dataflow blocks (a block of ``n`` bindings has ``n - 1``)."""

    def mutate(mod: Any) -> Any:
        found = main_function(mod)
        if found is None:
            return mod
        main_gv, main = found
        blocks = list(main.body.blocks)
        points = [(b, k) for b, block in enumerate(blocks) if isinstance(block, relax.DataflowBlock)
                  for k in range(1, len(block.bindings))]
        if not points:
            return mod
        b, k = points[index % len(points)]
        first, second = list(blocks[b].bindings[:k]), list(blocks[b].bindings[k:])
        later = relax.SeqExpr([relax.DataflowBlock(second), *blocks[b + 1:]], main.body.body)
        used = {v for v in relax.analysis.free_vars(later)}
        mapping: dict[Any, Any] = {}
        head = []
        crossing = []
        for binding in first:
            var = binding.var
            value = rename(binding.value, mapping)
            if isinstance(var, relax.DataflowVar) and var in used:
                mapping[var] = relax.Var(var.name, var.ty)
                crossing.append(var)
            head.append(rebind(binding, mapping.get(var, var), value))
        barrier = []
        if crossing:  # adjacent dataflow blocks would be merged again by Relax's normalizer
            alias = relax.Var(crossing[0].name + "_split", crossing[0].ty)
            barrier.append(relax.BindingBlock([relax.VarBinding(alias, mapping[crossing[0]])]))
            mapping[crossing[0]] = alias
        tail = [rebind(binding, binding.var, rename(binding.value, mapping)) for binding in second]
        rest = [rename_block(block, mapping) for block in blocks[b + 1:]]
        body = relax.SeqExpr([*blocks[:b], relax.DataflowBlock(head), *barrier, relax.DataflowBlock(tail), *rest],
                             rename(main.body.body, mapping))
        out = mod.clone()
        out.update_func(main_gv, with_body(main, body))
        return normalized(out)

    return mutate


def duplicate_function(mode: str = "call", index: int = 0, length: int = 2) -> Callable[[Any], Any]:
    """``mutate.DuplicateFunction``: ``mode="call"`` makes ``main`` call a private copy of itself
    (from a dataflow block when ``index`` is odd); ``mode="outline"`` outlines up to ``length``
    bindings starting at binding ``index`` (modulo) of main's blocks into a private function."""
    if mode not in ("call", "outline"):
        raise ValueError(f"mutate.DuplicateFunction: unknown mode {mode!r} (call, outline)")

    def mutate(mod: Any) -> Any:
        found = main_function(mod)
        if found is None:
            return mod
        main_gv, main = found
        if mode == "call":
            bb = relax.BlockBuilder(mod)
            params = fresh_params(main)
            gv = private_copy(bb, rebuild(bb, main, unique_name(mod, "main_copy"), params,
                                          dict(zip(main.params, params, strict=True))))
            return replace_main(bb, main_gv, call_main(bb, main, gv, [], dataflow=index % 2 == 1))
        return outline_run(mod, main_gv, main, index, max(1, length), "main_outlined")

    return mutate


def tuple_outputs(depth: int = 1, unpack: bool = True) -> Callable[[Any], Any]:
    """``mutate.TupleOutputs``: unpack a tuple result into ``TupleGetItem`` bindings and re-pack it
    (``unpack``), then nest the result in ``depth`` 1-tuples."""

    def mutate(mod: Any) -> Any:
        found = main_function(mod)
        if found is None:
            return mod
        main_gv, main = found
        bb = relax.BlockBuilder(mod)
        ret = main.body.body
        bindings = []

        def bind(expr: Any, name: str) -> Any:
            expr = bb.normalize(expr)
            var = relax.Var(name, expr.ty)
            bindings.append(relax.VarBinding(var, expr))
            return var

        if unpack and isinstance(ret.ty, relax.TupleType):
            items = [bind(relax.TupleGetItem(ret, i), f"out{i}") for i in range(len(ret.ty.fields))]
            ret = bind(relax.Tuple(items), "packed")
        for level in range(max(0, depth)):
            ret = bind(relax.Tuple([ret]), f"nested{level}")
        if not bindings:
            return mod
        body = relax.SeqExpr([*main.body.blocks, relax.BindingBlock(bindings)], ret)
        out = mod.clone()
        out.update_func(main_gv, with_body(main, body, ret.ty))
        return normalized(out)

    return mutate


# --- mutate.PrimArgs ---------------------------------------------------------------------------
def prim_args(index: int = 0) -> Callable[[Any], Any]:
    """``mutate.PrimArgs``: the ``index``-th (modulo) binary elementwise call of main with a finite
    scalar constant operand is outlined into a private function taking the scalar as ``R.Prim``."""

    def mutate(mod: Any) -> Any:
        found = main_function(mod)
        if found is None:
            return mod
        main_gv, main = found
        sites = []
        for b, block in enumerate(main.body.blocks):
            for k, binding in enumerate(block.bindings):
                const = _scalar_operand(binding.value)
                if const is not None:
                    sites.append((b, k, const))
        for step in range(len(sites)):
            b, k, const = sites[(index + step) % len(sites)]
            scalar = const.value.numpy().item()
            prim = relax.prim_value(scalar, const.ty.dtype)
            out = try_outline(mod, main_gv, main, b, k, k + 1, "main_prim", {const: prim})
            if out is not None:
                return out
        return mod

    return mutate


def _scalar_operand(value: Any) -> Any:
    """The 0-d constant operand of a binary elementwise call whose other operand is a tensor (None
    if ``value`` is no such call)."""
    if not isinstance(value, relax.Call) or not isinstance(value.op, tvm.ir.Op) or value.op.name not in _PRIM_OPS:
        return None
    consts = [a for a in value.args if isinstance(a, relax.expr_functor.GenericConst)]
    if len(consts) != 1 or len(value.args) != 2:
        return None
    const, other = consts[0], next(a for a in value.args if not a.same_as(consts[0]))
    ty = const.ty
    if not isinstance(ty, relax.TensorType) or ty.ndim != 0 or str(ty.dtype) not in _PRIM_DTYPES:
        return None
    if not isinstance(other.ty, relax.TensorType) or str(other.ty.dtype) != str(ty.dtype):
        return None
    scalar = const.value.numpy().item()
    if isinstance(scalar, float) and not math.isfinite(scalar):
        return None
    return const


# --- mutate.LiftConstants ----------------------------------------------------------------------
def lift_constants(index: int = 0, all: bool = False) -> Callable[[Any], Any]:
    """``mutate.LiftConstants``: main's body moves into a private function taking the ``index``-th
    (modulo) constant of main (every constant with ``all``) as a parameter; ``main`` calls it with
    the constant(s) as arguments."""

    def mutate(mod: Any) -> Any:
        found = main_function(mod)
        if found is None:
            return mod
        main_gv, main = found
        constants: list[Any] = []

        def collect(expr: Any) -> None:
            if isinstance(expr, relax.expr_functor.GenericConst) and not any(expr.same_as(c) for c in constants):
                constants.append(expr)

        for block in main.body.blocks:
            for binding in block.bindings:
                relax.analysis.post_order_visit(binding.value, collect)
        if not constants:
            return mod
        chosen = constants if all else [constants[index % len(constants)]]
        params = fresh_params(main)
        lifted = [relax.Var(f"c{i}", c.ty) for i, c in enumerate(chosen)]
        mapping: dict[Any, Any] = dict(zip(main.params, params, strict=True))
        mapping.update(zip(chosen, lifted, strict=True))
        bb = relax.BlockBuilder(mod)
        gv = private_copy(bb, rebuild(bb, main, unique_name(mod, "main_lifted"), [*params, *lifted], mapping))
        return replace_main(bb, main_gv, call_main(bb, main, gv, chosen, dataflow=index % 2 == 1))

    return mutate


MUTATIONS: dict[str, Callable[..., Callable[[Any], Any]]] = {
    "mutate.SymbolicShapes": symbolic_shapes,
    "mutate.SplitDataflow": split_dataflow,
    "mutate.DuplicateFunction": duplicate_function,
    "mutate.TupleOutputs": tuple_outputs,
    "mutate.PrimArgs": prim_args,
    "mutate.LiftConstants": lift_constants,
}
"""Every mutation by step name: its arguments -> a function from module to mutated module."""


def make_mutation(step: GraphPass) -> Callable[[Any], Any]:
    """The module rewrite ``step`` names (ValueError for an unknown name or bad arguments)."""
    factory = MUTATIONS.get(step.name)
    if factory is None:
        raise ValueError(f"no Relax mutation {step.name!r} (known: {', '.join(sorted(MUTATIONS))})")
    try:
        return factory(**step.args)
    except TypeError as exc:
        raise ValueError(f"{step.name}: bad arguments {step.args!r}: {exc}") from exc


def apply_mutation(mod: Any, step: GraphPass) -> Any:
    """``mod`` after the mutation ``step`` (unchanged when the mutation finds no site; ``mod`` itself
    is never modified)."""
    return make_mutation(step)(mod)
