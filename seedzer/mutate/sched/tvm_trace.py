"""A ``tvm.s_tir.Trace`` object (from MetaSchedule, dlight or a Schedule) as trace items, and back.

``Trace.as_json()`` leaves TVM's integers and floats (``IntImm``, ``FloatImm``) in its result and
writes an IndexMap through ``tvm.ir.save_json``, which segfaults with apache-tvm-ffi 0.1.15
(:mod:`seedzer.mutate.sched.environment`): :func:`items_of` refuses such a trace there instead of
crashing, and turns the rest into plain JSON values. Imports TVM.
"""

from __future__ import annotations

from typing import Any

from seedzer.kernel.sched.trace import Instruction, parse_trace
from seedzer.mutate.sched.environment import json_graph_works

INDEX_MAP_KINDS = frozenset({"TransformLayout", "TransformBlockLayout", "ReindexCacheRead", "ReindexCacheWrite",
                             "AnnotateBufferAccess"})
"""Instructions whose JSON holds an IndexMap (written with ``tvm.ir.save_json``)."""


def plain(value: Any) -> Any:
    """``value`` with TVM's containers and immediates turned into Python's (JSON values)."""
    import tvm

    if isinstance(value, str):
        return str(value)
    if isinstance(value, bool | int | float) or value is None:
        return value
    if isinstance(value, tvm.tirx.IntImm):
        return bool(value.value) if str(value.ty) == "bool" else int(value.value)
    if isinstance(value, tvm.tirx.FloatImm):
        return float(value.value)
    if hasattr(value, "items"):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple) or type(value).__name__ == "Array":
        return [plain(v) for v in value]
    raise TypeError(f"a trace holds a {type(value).__name__}, which JSON cannot")


def writable(trace: Any) -> bool:
    """Whether ``trace`` can be written as JSON here without crashing."""
    return json_graph_works() or not any(str(i.kind.name) in INDEX_MAP_KINDS for i in trace.insts)


def items_of(trace: Any, remove_postproc: bool = True) -> list[Instruction] | None:
    """The items of a TVM trace (None when it cannot be written as JSON here)."""
    if not writable(trace):
        return None
    return parse_trace(plain(trace.as_json(remove_postproc)))
