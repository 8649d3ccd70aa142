"""Lowering stages of a TIR module, read off the IR, and the standard passes that reach each one.

Facts (each implies the ones before it in :data:`FACTS`, except ``target``):

- ``target``: every PrimFunc carries a ``target`` attribute (MakePackedAPI, LowerIntrin,
  SplitHostDevice, LowerWarpMemory, LowerThreadAllreduce need it);
- ``no_init``: no SBlock has an init statement (LowerInitBlock ran);
- ``opaque``: every non-root SBlock is opaque (ConvertBlocksToOpaque ran);
- ``no_blocks``: no SBlock is left (LowerOpaqueBlock ran);
- ``flat``: every buffer access and allocation is one-dimensional (FlattenBuffer ran);
- ``vectorized``: no loop is still of kind ``vectorized`` (VectorizeLoop ran; StorageRewrite
  refuses vectorized loops: "VectorizeLoop before LiftStorageAlloc").

(MakePackedAPI is not a reachable stage: the build pipeline cannot run on its output.)

The repair passes are the s_tir default pipeline's own, in its order.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import tvm
import tvm_ffi
from tvm import s_tir, tirx

FACTS = ("target", "no_init", "opaque", "no_blocks", "flat", "vectorized")


def default_target() -> Any:
    """The target passes are bound to: llvm at opt-level 0 with itself as host (as tvm.compile does)."""
    t = tvm.target.Target({"kind": "llvm", "opt-level": 0})
    return t.with_host(t)


def _repairs(target: Any) -> dict[str, list[Callable[[], Any]]]:
    return {
        "target": [lambda: tirx.transform.BindTarget(target)],
        "no_init": [s_tir.transform.LowerCrossThreadReduction, s_tir.transform.LowerInitBlock],
        "opaque": [s_tir.transform.PlanAndUpdateBufferAllocationLocation, s_tir.transform.ConvertBlocksToOpaque],
        "no_blocks": [
            s_tir.transform.CompactBufferAllocation,
            s_tir.transform.LowerMatchBuffer,
            s_tir.transform.LowerOpaqueBlock,
        ],
        "flat": [tirx.transform.FlattenBuffer],
        "vectorized": [lambda: tirx.transform.VectorizeLoop(True)],
    }


def facts(mod: Any) -> set[str]:
    """The lowering facts that hold for every PrimFunc of ``mod``."""
    funcs = [f for f in mod.functions.values() if isinstance(f, tirx.PrimFunc)]
    state = {"init": False, "nonopaque": False, "blocks": False, "multidim": False, "vector": False}

    def on_block(b: Any) -> None:
        state["blocks"] = True
        state["init"] |= b.init is not None
        state["nonopaque"] |= len(b.iter_vars) > 0

    def on_access(x: Any) -> None:
        state["multidim"] |= len(x.indices) > 1

    def on_alloc(x: Any) -> None:
        state["multidim"] |= len(x.buffer.ty.shape) > 1

    def on_for(x: Any) -> None:
        state["vector"] |= int(x.kind) == int(tirx.ForKind.VECTORIZED)

    for f in funcs:
        tvm_ffi.structural_walk(
            f.body,
            [
                (s_tir.SBlock, on_block),
                ((tvm.ir.TensorLoad, tirx.BufferStore), on_access),
                (tirx.AllocBuffer, on_alloc),
                (tirx.For, on_for),
            ],
        )
    out = set()
    if all(f.attrs is not None and "target" in f.attrs for f in funcs):
        out.add("target")
    if not state["init"]:
        out.add("no_init")
    if not state["nonopaque"] and "no_init" in out:
        out.add("opaque")
    if not state["blocks"]:
        out |= {"no_init", "opaque", "no_blocks"}
        if not state["multidim"]:
            out.add("flat")
    if not state["vector"]:
        out.add("vectorized")
    return out


def ensure(mod: Any, required: frozenset[str], target: Any) -> Any:
    """Run the standard passes needed for ``mod`` to reach every fact in ``required``."""
    if not required:
        return mod
    have = facts(mod)
    if required <= have:
        return mod
    repairs = _repairs(target)
    top = max(FACTS.index(f) for f in required)
    for fact in FACTS[: top + 1]:
        if fact not in have and (fact in required or fact != "target"):
            for make in repairs[fact]:
                mod = make()(mod)
            have = facts(mod)
    return mod
