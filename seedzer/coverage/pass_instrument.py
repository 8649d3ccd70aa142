"""Worker-side ``passes`` coverage: which passes changed which kinds of IR nodes, and by how much.

A feature is ``<scope>/<pass>:=`` when a pass left the IR unchanged, else one feature per IR node
type whose count changed, bucketed AFL-style by magnitude and sign, e.g. ``opt/LoopPartition:For:+2``.
It is coarse (docs/design.md §6 calls it the fallback) but costs only a structural hash per pass and a
node walk when the IR changed.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import tvm
import tvm_ffi

_BUCKETS = (1, 2, 3, 4, 8, 16, 32, 128)


def bucket(n: int) -> int:
    """AFL-style magnitude bucket of a positive count (1, 2, 3, 4-7 -> 4, 8-15 -> 8, ...)."""
    b = 1
    for edge in _BUCKETS:
        if n >= edge:
            b = edge
    return b


def node_histogram(obj: Any) -> Counter[str]:
    """Count IR nodes by type name."""
    counts: Counter[str] = Counter()

    def visit(value: Any, *_: Any) -> bool:
        counts[type(value).__name__] += 1
        return True

    tvm_ffi.structural_walk(obj, visit)
    return counts


def diff_features(scope: str, pass_name: str, before: Counter[str], after: Counter[str]) -> set[str]:
    """Features describing how node counts changed across one pass."""
    out = set()
    for key in before.keys() | after.keys():
        delta = after[key] - before[key]
        if delta:
            out.add(f"{scope}/{pass_name}:{key}:{'+' if delta > 0 else '-'}{bucket(abs(delta))}")
    return out or {f"{scope}/{pass_name}:~"}


@tvm.ir.instrument.pass_instrument
class PassCoverage:
    """A PassInstrument that records coverage features and the pass currently running.

    ``detailed=False`` records only whether each pass returned a new module, not how it changed it
    (no hashes, no node histograms: used on the fixed build pipeline, where they tripled the cost
    of a build).

    ``on_pass(name)`` is called before each pass (used to publish progress for crash attribution).
    """

    def __init__(self, scope: str, on_pass: Any = None, detailed: bool = True) -> None:
        self.scope = scope
        self.detailed = detailed
        self.features: set[str] = set()
        self.on_pass = on_pass
        self.current: str | None = None
        self.last_changed: str | None = None
        self._before_hash: int = 0
        self._before_hist: Counter[str] | None = None
        self._mod_before: Any = None

    def run_before_pass(self, mod: Any, info: Any) -> None:
        """Remember the IR's hash before the pass and publish its name."""
        self.current = str(info.name)
        if self.on_pass is not None:
            self.on_pass(self.current)
        self._mod_before = mod
        if self.detailed:
            self._before_hash = tvm_ffi.structural_hash(mod)

    def run_after_pass(self, mod: Any, info: Any) -> None:
        """Turn the change the pass made into features."""
        name = str(info.name)
        if mod.same_as(self._mod_before) or (self.detailed and tvm_ffi.structural_hash(mod) == self._before_hash):
            self.features.add(f"{self.scope}/{name}:=")
        else:
            self.last_changed = name
            if self.detailed:
                self.features |= diff_features(
                    self.scope, name, node_histogram(self._mod_before), node_histogram(mod)
                )
            else:
                self.features.add(f"{self.scope}/{name}:~")
        self._mod_before = None
