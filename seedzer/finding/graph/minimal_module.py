"""A Relax module as the text of a plain reproducer: its TVMScript (``@I.ir_module class Module``) with
every constant the printer leaves in its metadata section (``metadata["ir.GenericConst"][j]``, which the
printer cannot show in this TVM) replaced by a name ``c<j>`` the reproducer defines with numpy first.

A constant of at most :data:`LITERAL_ELEMENTS` elements is written out exactly; a bigger one is drawn from
a fixed seed in the range of its values (booleans false) unless ``exact`` asks for its values, written
out. The text is accepted only when it parses back into a module structurally equal to
the one printed (the exact values substituted): what the reproducer defines is what the pass received.
Runs TVM.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import tvm
import tvm_ffi
from tvm import relax
from tvm.script import ir as I
from tvm.script import relax as R
from tvm.script import tirx as T

from seedzer.finding.graph.minimal_text import ModuleText

LITERAL_ELEMENTS = 16
"""Constants up to this many elements are written out exactly."""
_META = re.compile(r'metadata\["ir\.GenericConst"\]\[(\d+)\]')
_NONFINITE = re.compile(r'R\.const\("(-?inf|nan)", ')
"""A non-finite scalar as the printer writes it (``R.const("-inf", "float32")``), which TVMScript's parser
refuses; written ``R.const(float("-inf"), "float32")`` instead."""
_TYPEVAR = re.compile(r'^(\w+) = TypeVar\("(\w+)"\)$', re.MULTILINE)
"""A symbolic shape variable several functions share, as the printer writes it above the module
(``n = TypeVar("n")``, which nothing defines); written as the ``int64`` TIR variable it is."""


def _constants(mod: Any) -> list[Any]:
    """The module's constants the printer puts in its metadata, in the order it numbers them (first
    use, functions in the order printed)."""
    found: list[Any] = []

    def visit(expr: Any) -> None:
        if isinstance(expr, tvm.ir.GenericConst) and expr.value.numpy().ndim > 0 \
                and not any(expr.same_as(c) for c in found):
            found.append(expr)

    text = mod.script()
    order = sorted((text.find(f"def {gv.name_hint}("), gv) for gv in mod.get_global_vars())
    for _, gv in order:
        if isinstance(mod[gv], relax.Function):
            relax.analysis.post_order_visit(mod[gv], visit)
    return found


def _array_text(array: np.ndarray, exact: bool, name: str) -> str:
    dtype = str(array.dtype)
    if exact or array.size <= LITERAL_ELEMENTS or (array.dtype.kind == "f" and not np.isfinite(array).all()):
        return f"{name} = relax.const(np.array({array.tolist()!r}, {dtype!r}))"
    shape = tuple(array.shape)
    kind = array.dtype.kind
    if kind == "f":  # in the range of the values it stands for
        low, high = float(np.floor(array.min())), float(np.ceil(array.max()))
        made = f"rng.uniform({low:g}, {max(high, low + 1):g}, {shape!r}).astype({dtype!r})"
    elif kind == "b":
        made = f"np.zeros({shape!r}, 'bool')"
    else:
        made = f"rng.integers({int(array.min())}, {int(array.max()) + 1}, {shape!r}).astype({dtype!r})"
    return f"{name} = relax.const({made})"


def module_text(mod: Any, exact: bool = False) -> ModuleText | None:
    """``mod`` as code (see the module docstring); None when its text does not parse back into it."""
    text = mod.script()
    constants = _constants(mod)
    used = sorted({int(j) for j in _META.findall(text)})
    if used and used[-1] >= len(constants):
        return None
    body = _NONFINITE.sub(r'R.const(float("\1"), ', _META.sub(lambda m: f"c{m.group(1)}", text))
    body = _TYPEVAR.sub(r'\1 = tvm.tirx.Var("\2", "int64")', body)
    lines = [ln.rstrip() for ln in body.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
    names = {f"c{j}": constants[j] for j in used}
    try:
        parsed = tvm.script.from_source("\n".join(lines), extra_vars={**names, "I": I, "R": R, "T": T, "tvm": tvm})
    except Exception:  # a module whose TVMScript does not parse back
        return None
    if not tvm_ffi.structural_equal(parsed, mod):
        return None
    arrays = [_array_text(constants[j].value.numpy(), exact, f"c{j}") for j in used]
    seeded = any("rng." in a for a in arrays)
    head = ["rng = np.random.default_rng(0)  # the values of the big constants"] if seeded else []
    return ModuleText(tuple(head + arrays), tuple(lines), bool(used), any("T.prim_func" in ln for ln in lines))
