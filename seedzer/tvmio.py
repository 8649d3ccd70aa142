"""Conversions between PrimFuncs and TVMScript text, the only form TIR crosses process boundaries in.

Importing this module imports TVM; only worker-side code (and tests) may do so.
"""

from __future__ import annotations

from typing import Any

import tvm
from tvm import tirx


def parse_primfunc(script: str) -> tirx.PrimFunc:
    """Parse TVMScript text of one PrimFunc (or a module holding exactly one) into a PrimFunc."""
    obj: Any = tvm.script.from_source(script)
    if isinstance(obj, tvm.IRModule):
        funcs = [f for f in obj.functions.values() if isinstance(f, tirx.PrimFunc)]
        if len(funcs) != 1:
            raise ValueError(f"expected one PrimFunc in module, found {len(funcs)}")
        obj = funcs[0]
    if not isinstance(obj, tirx.PrimFunc):
        raise ValueError(f"TVMScript does not define a PrimFunc but a {type(obj).__name__}")
    return obj


def as_main(func: tirx.PrimFunc, name: str = "main") -> tirx.PrimFunc:
    """Return ``func`` with ``global_symbol`` set to ``name`` (every seed is built as ``main``)."""
    return func.with_attr("global_symbol", name)


def script_of(func: tirx.PrimFunc) -> str:
    """TVMScript text of a PrimFunc, after naming it ``main``."""
    return str(as_main(func).script())


def module_of(func: tirx.PrimFunc, name: str = "main") -> tvm.IRModule:
    """Wrap a PrimFunc in an IRModule under the name ``name`` (default ``main``)."""
    return tvm.IRModule({name: as_main(func, name)})
