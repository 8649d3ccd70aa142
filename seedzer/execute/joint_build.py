"""``tvm.compile`` for a PrimFunc module, split in two so that two builds can share one LLVM JIT.

``tvm.compile`` on a TIR module is ``tvm.tirx.build``: bind the target, run the default TIR
pipeline, split host from device code, finalize the host module, generate LLVM code. The JIT then
compiles the whole LLVM module at the first function lookup, at a fixed cost of ~40 ms even for a
one-line kernel: most of an iteration. The optimized and the unoptimized builds of a new script
must each run their own pipeline (under their own PassContext), but their finalized host modules
can be merged and generated as one module: one JIT instead of two (~17% of a mutated-IR iteration
measured under load). :func:`lower_for_llvm` and :func:`codegen_llvm` are exactly those two halves,
made of the functions ``tvm.tirx.build`` itself calls; a finding's ``repro.py`` uses ``tvm.compile``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import tvm
from tvm.tirx.build import codegen_build, split_host_device_mods


def lower_for_llvm(mod: Any, target: Any) -> Any:
    """The host IRModule ``tvm.compile(mod, target)`` would generate code for (CPU targets only).

    Runs under the caller's PassContext (its disabled passes and instruments apply).
    """
    bound = target.with_host(target.host or target)
    mod = tvm.tirx.transform.BindTarget(bound)(mod)
    pipeline, finalize_host, _finalize_device = tvm.tirx.get_default_tir_pipeline(target)
    mod = pipeline(mod)
    host, devices = split_host_device_mods(mod)
    if any(len(dev.functions) for dev in devices.values()):
        raise ValueError("joint builds are for CPU modules only; this module has device functions")
    return finalize_host()(host)


def codegen_llvm(hosts: Sequence[Any], target: Any) -> Any:
    """One ``tvm.runtime.Executable`` for every function of the lowered ``hosts`` (distinct names)."""
    merged = tvm.IRModule({}, attrs=hosts[0].attrs)
    for host in hosts:
        merged.update(host)
    with tvm.transform.PassContext(opt_level=3):
        lib = codegen_build(merged, target.host or target)
    return tvm.runtime.Executable(lib)
