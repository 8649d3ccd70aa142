"""A graph worker's constant-folding builds reused: ``FoldConstant`` gets the runtime module of a
PrimFunc the worker compiled before instead of compiling it again with LLVM.

Relax's ``FoldConstant`` (``src/relax/transform/fold_constant.cc``) evaluates every call whose
arguments are constants by compiling its PrimFunc with the global function ``tirx.build`` for the
``llvm`` target and running it. Its cache of those builds lives in one run of the pass, so every
test case of a model compiled the same constant PrimFuncs again: in a profile of a graph worker on a
basic pool, 13% of its time went to them (inside the fuzzed ``FoldConstant`` steps, and again in
``tvm.compile``'s own pipeline). Once installed (:meth:`FoldBuilds.install`, in every graph worker),
this cache answers ``tirx.build`` itself (the only caller in TVM is ``FoldConstant``; Python's ``tvm.tirx.build``, which
``tvm.compile`` links with, is untouched):

- a PrimFunc structurally equal to one built before (``structural_hash``, confirmed by
  ``structural_equal``), for the same target, pipeline and pass context, gets that build's module:
  ``tirx.build`` depends on nothing else, and ``FoldConstant`` only looks up and calls its function,
  so the folded constants are the ones a second build would give (its JIT'd code is kept too);
- the passes the first build ran (TIR's lowering pipeline, which runs inside the case's pass
  context) are recorded with it and replayed into the case's :class:`PassTriggers`, so the case
  reports the same passes ran and triggered; a build made while the case's passes are not recorded
  (TVM's default build of the seed, the reference, ``active()`` false) keeps no passes, and is
  built again the first time a recorded step asks for it;
- a build that raises is never remembered (``FoldConstant`` skips that call, as it would);
- native coverage reports only what this process reaches first, and it reached the build's at the
  first build.

The filing gate, the reducer and every reproducer run without it: what they judge is plain TVM.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import tvm
import tvm_ffi
from tvm.tirx.build import build as tirx_build

from seedzer.coverage.triggers import PassTriggers
from seedzer.execute.lru import LRU
from seedzer.levels.graph.build_reuse import equal

BUILD_FUNCTION = "tirx.build"
"""The global function ``FoldConstant`` compiles a constant call's PrimFunc with."""
FOLD_CACHE = 512
"""How many PrimFuncs' runtime modules a worker keeps (a pool model folds a few to tens of calls)."""


@dataclass(frozen=True)
class FoldedBuild:
    """A PrimFunc built for ``FoldConstant``, its runtime module, and the passes the build ran
    (None: built while the case's passes were not recorded)."""

    func: Any
    module: Any
    triggers: dict[str, bool] | None


def context_key(target: Any, pipeline: Any) -> str:
    """What a ``tirx.build`` depends on besides the PrimFunc: the target, the pipeline and the pass
    context's options (opt level, required and disabled passes, config)."""
    ctx = tvm.transform.PassContext.current()
    return repr((str(target), str(pipeline), int(ctx.opt_level), sorted(str(p) for p in ctx.required_pass),
                 sorted(str(p) for p in ctx.disabled_pass), str(ctx.config)))


class FoldBuilds:
    """The worker's cache of ``FoldConstant``'s builds (see the module docstring); ``hits`` and
    ``misses`` count its answers."""

    def __init__(self, triggers: PassTriggers, active: Callable[[], bool], size: int = FOLD_CACHE) -> None:
        self.triggers = triggers
        self.active = active
        self.builds: LRU[tuple[int, str], list[FoldedBuild]] = LRU(size)
        self.hits = 0
        self.misses = 0

    def install(self) -> None:
        """Answer ``tirx.build`` from now on in this process."""
        tvm.register_global_func(BUILD_FUNCTION, self.build, override=True)

    @staticmethod
    def uninstall() -> None:
        """Give ``tirx.build`` back to TVM's own ``tvm.tirx.build``."""
        tvm.register_global_func(BUILD_FUNCTION, tirx_build, override=True)

    def build(self, func: Any, target: Any = None, pipeline: Any = "default") -> Any:
        """``tvm.tirx.build(func, target, pipeline)``, or the module of an equal PrimFunc built before."""
        try:
            key = (tvm_ffi.structural_hash(func), context_key(target, pipeline))
        except Exception:  # a node the hash cannot walk: built, never reused
            return tirx_build(func, target, pipeline)
        recording = self.active()
        known = self.builds.get(key) or []
        for earlier in known:
            if (earlier.triggers is not None or not recording) and equal(earlier.func, func):
                self.hits += 1
                if recording and earlier.triggers:
                    self.triggers.replay(earlier.triggers)
                return earlier.module
        self.misses += 1
        with self.triggers.captured() as own:
            module = tirx_build(func, target, pipeline)
        kept = [earlier for earlier in known if not equal(earlier.func, func)]
        self.builds.put(key, [*kept, FoldedBuild(func, module, own if recording else None)])
        return module
