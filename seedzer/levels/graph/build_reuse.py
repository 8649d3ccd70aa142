"""A graph worker's builds reused: a fuzzed module structurally equal to one the worker built before
gets that build's executable instead of a second ``tvm.compile``.

Fuzzed Relax steps often leave a module another sequence left too (a pass with nothing to do, a step
whose arguments changed nothing, orders that converge): on a basic pool a third of the test cases
built a module the worker had built already. ``tvm.compile`` depends only on the module and the
target (the worker's pass context is the same for every case), so the executable of an equal module
is the one it would make again; the executable is run anew on the Relax VM each time (its JIT'd code
is kept: a second run costs no code generation) and judged by every oracle as before. Only the
compilation is skipped, and what it would have reported is kept:

- the passes of the build's pipeline that ran and changed the module are recorded at the first build
  and replayed into the case's :class:`~seedzer.coverage.triggers.PassTriggers`, so the case reports
  the same passes ran and triggered;
- native coverage reports only what this process reaches first, and it reached the build's at the
  first build;
- a build that raises is never remembered: the failure is observed again each time;
- a module the structural hash cannot walk (runtime modules in its attributes, which ``RunCodegen``
  attaches) is built every time.

Modules are matched by ``structural_hash`` and confirmed with ``structural_equal`` (as the TIR level's
caching builder matches lowered programs; names of Relax variables take no part in either).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import tvm_ffi

from seedzer.coverage.triggers import PassTriggers
from seedzer.execute.lru import LRU
from seedzer.kernel.graph.memo import MEMO_SIZE, GraphMemo
from seedzer.kernel.onnx.model import build

BUILD_CACHE = 64
"""How many executables a worker keeps (a kept executable holds its JIT'd code)."""


@dataclass(frozen=True)
class KnownBuild:
    """A module a worker built, its executable, and the passes of the build that ran (True: changed the module)."""

    module: Any
    executable: Any
    triggers: dict[str, bool]


def target_key(target: Any) -> str:
    """A target spec (a kind name, a JSON text or a dict) as text, for a cache key."""
    return target if isinstance(target, str) else json.dumps(target, sort_keys=True)


def equal(a: Any, b: Any, map_free_vars: bool = False) -> bool:
    """Whether two modules are structurally equal, free variables mapped when asked (False when they
    cannot be compared)."""
    try:
        return bool(tvm_ffi.structural_equal(a, b, map_free_vars=map_free_vars))
    except Exception:  # a node structural equality does not support
        return False


class ReusingMemo(GraphMemo):
    """The worker's :class:`GraphMemo` whose builds reuse an equal module's (see the module docstring).

    ``triggers`` is the worker's record of the passes a case ran (its trigger instrument's); ``reused``
    counts the builds reused."""

    def __init__(self, triggers: PassTriggers, builds: int = BUILD_CACHE, size: int = MEMO_SIZE) -> None:
        super().__init__(size)
        self.triggers = triggers
        self.builds: LRU[tuple[int, str], list[KnownBuild]] = LRU(builds)
        self.reused = 0

    def build(self, mod: Any, target: Any) -> Any:
        """The executable of ``mod`` for ``target``: an equal module's, with its build's triggered
        passes replayed, else ``tvm.compile``'s (remembered with the passes it ran)."""
        try:
            key = (tvm_ffi.structural_hash(mod), target_key(target))
        except Exception:  # e.g. runtime modules in its attributes (after RunCodegen): built, never reused
            return build(mod, target)
        known = self.builds.get(key) or []
        for earlier in known:
            if equal(earlier.module, mod):
                self.reused += 1
                self.triggers.replay(earlier.triggers)
                return earlier.executable
        with self.triggers.captured() as own:
            executable = build(mod, target)
        self.builds.put(key, [*known, KnownBuild(mod, executable, own)])
        return executable
