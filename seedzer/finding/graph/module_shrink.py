"""Shrinking a printed Relax module while a plain reproducer still fails the same way: the last step of a
graph finding's minimal program (the reducer already shrank the model and the step sequence).

First ddmin over the bindings of ``main`` (:func:`sliced`: the bindings left out become parameters of
``main`` where the kept ones use them), then candidates, biggest first, each well-formed
(``relax.analysis.well_formed``) and accepted when its printed text is shorter (fewer lines, else fewer
characters) and the test still holds:

1. drop a function (one no other function calls);
2. ``main`` returns an earlier binding's variable (the bindings after it go; a dataflow variable becomes
   its block's output);
3. a binding of ``main`` becomes a parameter of ``main`` (what only it used goes);
4. drop a parameter of ``main`` nothing uses;
5. drop a function attribute.

After each cut, bindings of dataflow blocks whose variables nothing uses are removed. Greedy, like
:func:`seedzer.finding.shrink_ir.shrink`: the first candidate that helps is taken, then the search
starts again, until none helps or time runs out. Runs TVM.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import tvm
from tvm import relax

from seedzer.kernel.graph.relax_build import rename


def _main(mod: Any) -> tuple[Any, Any] | None:
    names = {gv.name_hint: gv for gv in mod.get_global_vars()}
    gv = names.get("main")
    return (gv, mod[gv]) if gv is not None and isinstance(mod[gv], relax.Function) else None


def _block(old: Any, bindings: list[Any]) -> Any:
    return relax.DataflowBlock(bindings) if isinstance(old, relax.DataflowBlock) else relax.BindingBlock(bindings)


def _live(blocks: list[Any], body: Any) -> list[Any]:
    """``blocks`` without the dataflow bindings nothing after them uses."""
    used = {v for v in relax.analysis.free_vars(body)}
    out = []
    for block in reversed(blocks):
        kept = []
        for binding in reversed(list(block.bindings)):
            if isinstance(block, relax.DataflowBlock) and binding.var not in used:
                continue
            kept.append(binding)
            used.update(relax.analysis.free_vars(binding.value))
        if kept:
            out.append(_block(block, kept[::-1]))
    return out[::-1]


def _with_main(mod: Any, gv: Any, params: list[Any], blocks: list[Any], body: Any, func: Any,
               ret_ty: Any = None) -> Any:
    new = relax.Function(params, relax.SeqExpr(_live(blocks, body), body), func.ret_ty if ret_ty is None else ret_ty,
                         func.is_pure, func.attrs)
    functions = dict(mod.functions.items())
    functions[gv] = new
    return relax.transform.Normalize()(tvm.IRModule(functions, attrs=mod.attrs, global_infos=mod.global_infos))


def _sites(func: Any) -> list[tuple[int, int]]:
    return [(b, k) for b, block in enumerate(func.body.blocks) for k in range(len(block.bindings))]


def _drop_functions(mod: Any) -> Iterator[Any]:
    for gv in mod.get_global_vars():
        if gv.name_hint != "main":
            yield tvm.IRModule({g: f for g, f in mod.functions.items() if not g.same_as(gv)}, attrs=mod.attrs)


def _earlier_results(mod: Any) -> Iterator[Any]:
    found = _main(mod)
    if found is None:
        return
    gv, func = found
    blocks = list(func.body.blocks)
    for b, k in _sites(func):
        binding = blocks[b].bindings[k]
        var = binding.var
        if isinstance(var, relax.DataflowVar):  # made an output of its block: only those are seen after it
            var = relax.Var(var.name, var.ty)
            binding = relax.MatchCast(var, binding.value, binding.ty) if isinstance(binding, relax.MatchCast) \
                else relax.VarBinding(var, binding.value)
        head = [*blocks[:b], _block(blocks[b], [*blocks[b].bindings[:k], binding])]
        yield _with_main(mod, gv, list(func.params), head, var, func, var.ty)


def _bindings_to_params(mod: Any) -> Iterator[Any]:
    found = _main(mod)
    if found is None:
        return
    gv, func = found
    blocks = list(func.body.blocks)
    for b, k in reversed(_sites(func)):
        var = blocks[b].bindings[k].var
        param = relax.Var(var.name, var.ty)
        mapping = {var: param}
        new_blocks = []
        for i, block in enumerate(blocks):
            kept = [relax.MatchCast(x.var, rename(x.value, mapping), x.ty) if isinstance(x, relax.MatchCast)
                    else relax.VarBinding(x.var, rename(x.value, mapping))
                    for j, x in enumerate(block.bindings) if (i, j) != (b, k)]
            if kept:
                new_blocks.append(_block(block, kept))
        yield _with_main(mod, gv, [*func.params, param], new_blocks, rename(func.body.body, mapping), func)


def sliced(mod: Any, keep: set[tuple[int, int]]) -> Any:
    """``mod`` with only the bindings of ``main`` at ``keep`` (block, binding) computed: every other one
    whose variable a kept binding or the result uses becomes a parameter of ``main``; parameters nothing
    uses are dropped."""
    found = _main(mod)
    assert found is not None
    gv, func = found
    mapping: dict[Any, Any] = {}
    params = list(func.params)
    blocks = []
    for b, block in enumerate(func.body.blocks):
        kept = []
        for k, binding in enumerate(block.bindings):
            if (b, k) not in keep:
                mapping[binding.var] = relax.Var(binding.var.name, binding.var.ty)
                params.append(mapping[binding.var])
                continue
            value = rename(binding.value, mapping)
            kept.append(relax.MatchCast(binding.var, value, binding.ty) if isinstance(binding, relax.MatchCast)
                        else relax.VarBinding(binding.var, value))
        if kept:
            blocks.append(_block(block, kept))
    body = rename(func.body.body, mapping)
    live = _live(blocks, body)
    used = set(relax.analysis.free_vars(relax.SeqExpr(live, body)))
    return _with_main(mod, gv, [p for p in params if p in used], live, body, func)


def ddmin_bindings(mod: Any, test: Callable[[Any], bool], out_of_time: Callable[[], bool]) -> Any:
    """The module :func:`sliced` to a 1-minimal set of ``main``'s bindings that keeps ``test`` true."""
    from seedzer.finding.ddmin import ddmin

    found = _main(mod)
    if found is None:
        return mod

    def holds(keep: list[tuple[int, int]]) -> bool:
        try:
            candidate = sliced(mod, set(keep))
        except Exception:  # a slice this module's IR does not take
            return False
        return _well_formed(candidate) and test(candidate)

    keep = ddmin(_sites(found[1]), holds, out_of_time)
    return sliced(mod, set(keep)) if len(keep) < len(_sites(found[1])) else mod


def _unused_params(mod: Any) -> Iterator[Any]:
    found = _main(mod)
    if found is None:
        return
    gv, func = found
    used = set(relax.analysis.free_vars(func.body))
    for param in func.params:
        if param not in used:
            yield _with_main(mod, gv, [p for p in func.params if not p.same_as(param)], list(func.body.blocks),
                             func.body.body, func)


def _attributes(mod: Any) -> Iterator[Any]:
    for gv, func in mod.functions.items():
        for key in list(func.attrs.keys()) if func.attrs is not None else []:
            functions = dict(mod.functions.items())
            functions[gv] = func.without_attr(key)
            yield tvm.IRModule(functions, attrs=mod.attrs, global_infos=mod.global_infos)


CANDIDATES: tuple[Callable[[Any], Iterator[Any]], ...] = (_drop_functions, _earlier_results, _bindings_to_params,
                                                         _unused_params, _attributes)
"""The candidate families, tried in this order."""


def _well_formed(mod: Any) -> bool:
    try:
        relax.analysis.well_formed(mod)  # raises TVM's own error on a violation
    except Exception:  # ill-formed, or a candidate the analysis cannot even read
        return False
    return True


def shrink_module(mod: Any, test: Callable[[Any], bool], size: Callable[[Any], tuple[int, int]],
                  out_of_time: Callable[[], bool]) -> Any:
    """Greedily shrink ``mod`` while ``test`` holds; ``size`` measures a candidate (its printed lines, then
    characters)."""
    current = ddmin_bindings(mod, test, out_of_time)
    best = size(current)
    while not out_of_time():
        for family in CANDIDATES:
            better = None
            try:
                for candidate in family(current):
                    if out_of_time():
                        return current
                    if not _well_formed(candidate):
                        continue
                    measured = size(candidate)
                    if measured < best and test(candidate):
                        better = (candidate, measured)
                        break
            except Exception:  # a family whose rewrite this module's IR does not take
                continue
            if better is not None:
                current, best = better
                break
        else:
            return current
    return current
