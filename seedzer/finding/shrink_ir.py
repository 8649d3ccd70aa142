"""Shrinking a PrimFunc while a test holds: deterministic candidates, greedy acceptance (the TIR and the
schedule kinds' reducers and plain reproducers shrink their PrimFuncs with it).

Candidates reuse the mutation layer's walk (:func:`seedzer.tir.nodes.analyze`), its
type-compatible child choice (:meth:`seedzer.mutate.tir.ir_mutators.Deletor._children`) and its
copy-on-write replacement (:func:`seedzer.mutate.tir.base.replace_site`), so a shrink never touches a
protected position (an index, a bound, a guard) except through loop extents, and every candidate
must pass :func:`seedzer.tir.wellformed.check_well_formed` (which proves accesses in bounds).
In order, biggest reductions first:

1. drop one statement of a sequence (never a write to a buffer the function allocates);
2. replace a statement or a value expression by a compatible child (an operand, a branch, a loop
   body run once, an attribute's body);
3. shrink a constant loop extent (to 1, then to half);
4. simplify a value constant (to 0 or 1, or a float to an integer value).

:func:`shrink` accepts the first candidate that is smaller (:func:`size_key`) and keeps the test
true, and starts again until no candidate helps or time runs out.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import tvm
import tvm_ffi
from tvm import tirx

from seedzer.mutate.tir.base import replace_site
from seedzer.mutate.tir.ir_mutators import Deletor
from seedzer.tir.ir import replace_fields
from seedzer.tir.nodes import Analysis, analyze
from seedzer.tir.wellformed import check_well_formed
from seedzer.tvmio import parse_primfunc, script_of

Candidate = tuple[str, Any]


def _drops(a: Analysis, aggressive: bool) -> Iterator[Candidate]:
    for s in sorted(a.stmt_sites(), key=lambda s: -s.size):
        droppable = s.removable or aggressive
        if s.role == "seq" and droppable and isinstance(s.parent, tirx.SeqStmt) and len(s.parent.seq) > 1:
            index = s.path[-1][1]
            rest = [x for i, x in enumerate(s.parent.seq) if i != index]
            yield f"drop statement {index}", replace_site(a, s.path[:-1], rest[0] if len(rest) == 1 else
                                                           tirx.SeqStmt(rest))


def _children(a: Analysis, aggressive: bool) -> Iterator[Candidate]:
    for s in sorted(a.sites, key=lambda s: -s.size):
        for child in Deletor._children(a, s):
            if isinstance(child, tirx.Evaluate):
                continue  # dropping the statement is tried by _drops
            yield f"replace {type(s.node).__name__} by a child", replace_site(a, s.path, child)


def _extents(a: Analysis, aggressive: bool) -> Iterator[Candidate]:
    for info in a.loops:
        ext = info.const_extent
        if ext is None or ext <= 1:
            continue
        dtype = str(info.node.extent.ty.dtype)
        for new in sorted({1, ext // 2}):
            loop = replace_fields(info.node, extent=tirx.const(new, dtype))
            yield f"loop extent {ext} -> {new}", replace_site(a, info.path, loop)


def _constants(a: Analysis, aggressive: bool) -> Iterator[Candidate]:
    for s in a.expr_sites():
        n = s.node
        if isinstance(n, tirx.FloatImm):
            values = [0.0, 1.0, float(round(n.value))] if n.value == n.value else [0.0]
        elif isinstance(n, tirx.IntImm) and s.dtype != "bool":
            values = [0, 1]
        else:
            continue
        for v in dict.fromkeys(values):
            if v != n.value and abs(v) < abs(n.value) + (1 if v == 1 else 0):
                yield f"constant {n.value} -> {v}", replace_site(a, s.path, tirx.const(v, s.dtype))


GENERATORS: tuple[Callable[[Analysis, bool], Iterator[Candidate]], ...] = (_drops, _children, _extents, _constants)
"""The candidate families, tried in this order."""


def candidates(func: Any, aggressive: bool = False) -> Iterator[Candidate]:
    """Every one-step shrink of ``func`` that is well-formed and provably in bounds. ``aggressive``
    also drops writes to buffers the function allocates (later reads then see uninitialised
    memory: fine for a crash or an exception, a false alarm for a mismatch)."""
    a = analyze(func)
    for gen in GENERATORS:
        for label, cand in gen(a, aggressive):
            try:
                ok = check_well_formed(cand) is None
            except Exception:  # a candidate TVM cannot even verify
                ok = False
            if ok:
                yield label, cand


def size_key(script: str) -> tuple[int, int, int, int]:
    """How big a PrimFunc's TVMScript is: lines, IR nodes, total constant loop extent, characters."""
    func = parse_primfunc(script)
    nodes, extents = [0], [0]

    def visit(node: Any, *_: Any) -> bool:
        nodes[0] += 1
        if isinstance(node, tirx.For) and isinstance(node.extent, tirx.IntImm):
            extents[0] += int(node.extent.value)
        return True

    tvm_ffi.structural_walk(func.body, visit)
    return len(script.splitlines()), nodes[0], extents[0], len(script)


def shrink_step(script: str, test: Callable[[str], bool], out_of_time: Callable[[], bool],
                aggressive: bool = False) -> str | None:
    """The first smaller well-formed one-step shrink of ``script`` that keeps ``test`` true, or None."""
    func = parse_primfunc(script)
    current = size_key(script)
    for _label, cand in candidates(func, aggressive):
        if out_of_time():
            return None
        try:
            text = script_of(cand)
            if size_key(text) >= current:
                continue
        except (tvm.error.TVMError, ValueError):
            continue
        if test(text):
            return text
    return None


def shrink(script: str, test: Callable[[str], bool], out_of_time: Callable[[], bool] = lambda: False,
           on_better: Callable[[str], None] = lambda s: None, aggressive: bool = False) -> str:
    """Greedily shrink ``script`` while ``test`` holds; ``on_better`` sees every accepted step."""
    while not out_of_time():
        better = shrink_step(script, test, out_of_time, aggressive)
        if better is None:
            break
        script = better
        on_better(script)
    return script
