"""A graph worker's LLVM code generation reused: a host module (TIR after TVM's whole lowering
pipeline) structurally equal to one the worker generated code for before gets that runtime module,
its JIT'd code with it, instead of LLVM generating, optimizing and JIT-compiling it again.

``tvm.compile`` of a Relax module lowers its PrimFuncs with TIR's pipeline and then hands the host
module to the global function ``target.build.llvm`` (``tvm.tirx.build.codegen_build``): LLVM's IR
generation and optimization there, and the JIT compilation at the first call of the Relax VM, were
two thirds of a graph worker's time in a profile on a basic pool. Most fuzzed Relax steps leave the
model's kernels as they were (they rewrite the graph around them, the VM's bindings, its memory
plan, or outline and inline functions), so most builds generate code for PrimFuncs the worker
already compiled: for the reference (TVM's default pipeline on the seed) or an earlier test case.
:class:`~seedzer.levels.graph.build_reuse.ReusingMemo` only catches Relax modules that are equal
before the build; this cache catches equal kernels after it. Once installed
(:meth:`CodegenReuse.install`, in every graph worker), it answers ``target.build.llvm``:

- a host module structurally equal (``structural_hash``, confirmed by ``structural_equal`` and by
  the same function names and symbols, which the Relax VM looks its kernels up by; free variables
  mapped, since the lowered host code refers to buffer variables in attributes before the statement
  defining them, and two lowerings of one module differ there by those variables' identity alone) to one built
  before, for the same target and pass-context options, gets that build's runtime module: code
  generation depends on nothing else, so it is the code a second generation would give;
- everything before code generation still runs for every case (the Relax pipeline, legalization,
  fusion, TIR's passes, each recorded by the case's pass triggers as before), and every executable
  is linked and run anew on the Relax VM and judged by every oracle;
- a module that has gained imported modules since (a device module linked into it) is not handed
  out again; a generation that raises is never remembered; a module the hash cannot walk is
  generated every time;
- native coverage reports only what this process reaches first, and it reached the code
  generator's at the first generation.

The filing gate, the reducer and every reproducer run without it: what they judge is plain TVM.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import tvm
import tvm_ffi

from seedzer.execute.lru import LRU
from seedzer.levels.graph.build_reuse import equal
from seedzer.levels.graph.fold_builds import context_key

CODEGEN_FUNCTION = "target.build.llvm"
"""The global function ``tvm.tirx.build`` generates a CPU host module's code with."""
TVM_CODEGEN = tvm.get_global_func(CODEGEN_FUNCTION)
"""TVM's own ``target.build.llvm`` (taken at import, before any cache answers it)."""
CODEGEN_CACHE = 128
"""How many runtime modules a worker keeps (each holds its JIT'd code once run)."""


@dataclass(frozen=True)
class GeneratedCode:
    """A host module, the runtime module LLVM made of it, and the names it exports."""

    module: Any
    runtime: Any
    names: tuple[str, ...]


def exported_names(mod: Any) -> tuple[str, ...]:
    """The functions of ``mod`` by name and symbol (what a caller of its runtime module looks up)."""
    names = []
    for gv, func in mod.functions.items():
        symbol = func.attrs.get("global_symbol") if func.attrs is not None else None
        names.append(f"{gv.name_hint}={symbol}")
    return tuple(sorted(names))


class CodegenReuse:
    """The worker's cache of LLVM code generation (see the module docstring); ``hits`` and
    ``misses`` count its answers."""

    def __init__(self, size: int = CODEGEN_CACHE) -> None:
        self.builds: LRU[tuple[int, str], list[GeneratedCode]] = LRU(size)
        self.hits = 0
        self.misses = 0
        self.generate: Any = TVM_CODEGEN
        """TVM's own ``target.build.llvm``, asked on a miss (never another cache's)."""

    def install(self) -> None:
        """Answer ``target.build.llvm`` from now on in this process (TVM's own answers the misses)."""
        tvm.register_global_func(CODEGEN_FUNCTION, self.build, override=True)

    @staticmethod
    def uninstall() -> None:
        """Give ``target.build.llvm`` back to TVM's own."""
        tvm.register_global_func(CODEGEN_FUNCTION, TVM_CODEGEN, override=True)

    def build(self, mod: Any, target: Any) -> Any:
        """The runtime module of ``mod`` for ``target``: an equal module's, else LLVM's (remembered)."""
        try:
            key = (tvm_ffi.structural_hash(mod, map_free_vars=True), context_key(target, None))
            names = exported_names(mod)
        except Exception:  # a node the hash cannot walk: generated, never reused
            return self.generate(mod, target)
        known = [earlier for earlier in self.builds.get(key) or [] if not earlier.runtime.imports]
        for earlier in known:
            if earlier.names == names and equal(earlier.module, mod, map_free_vars=True):
                self.hits += 1
                return earlier.runtime
        self.misses += 1
        runtime = self.generate(mod, target)
        self.builds.put(key, [*known, GeneratedCode(mod, runtime, names)])
        return runtime
