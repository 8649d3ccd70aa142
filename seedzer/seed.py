"""Joint seeds: a test case's script (a PrimFunc's TVMScript, or a level's own document) together
with its pass sequence.

TIR objects cannot be pickled or JSON-saved safely in TVM 0.27 (both segfault), so everything that
crosses a process boundary or touches disk is text plus plain data.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class PassSpec:
    """One pass of a sequence: its registry name and sampled keyword arguments (JSON-able)."""

    name: str
    args: tuple[tuple[str, Any], ...] = ()

    def to_json(self) -> dict[str, Any]:
        """JSON-friendly form: ``{"name": ..., "args": {...}}``."""
        return {"name": self.name, "args": dict(self.args)}

    @staticmethod
    def from_json(d: dict[str, Any] | str) -> PassSpec:
        """Inverse of :meth:`to_json`; a bare string is a pass without arguments."""
        if isinstance(d, str):
            return PassSpec(d)
        return PassSpec(d["name"], tuple(sorted((d.get("args") or {}).items())))

    def label(self) -> str:
        """Short human-readable form, e.g. ``UnrollLoop(auto_max_step=16)``."""
        if not self.args:
            return self.name
        return f"{self.name}(" + ", ".join(f"{k}={v!r}" for k, v in self.args) + ")"


@dataclass
class JointSeed:
    """A corpus entry: TVMScript of one PrimFunc named ``main`` plus a pass sequence.

    ``failures`` counts consecutive mutations that brought no new coverage (Tzer's tolerance).
    """

    script: str
    passes: list[PassSpec] = field(default_factory=list)
    origin: str = ""
    parent: str | None = None
    failures: int = 0
    seed_id: str = ""

    def __post_init__(self) -> None:
        if not self.seed_id:
            self.seed_id = self.digest()

    def digest(self) -> str:
        """Content hash of script and passes (16 hex chars): the corpus entry's identity."""
        h = hashlib.sha256(self.script.encode())
        h.update(passes_to_json(self.passes).encode())
        return h.hexdigest()[:16]


def passes_to_json(passes: list[PassSpec]) -> str:
    """Serialize a pass sequence as compact JSON."""
    return json.dumps([p.to_json() for p in passes], sort_keys=True, separators=(",", ":"))


def passes_from_json(text: str) -> list[PassSpec]:
    """Parse a pass sequence written by :func:`passes_to_json`."""
    return [PassSpec.from_json(d) for d in json.loads(text or "[]")]


def input_seed(script: str) -> int:
    """Seed of a test case's random inputs: a function of its script only, so that the nopt
    result can be reused while only the pass sequence changes, and reproducers can recreate it."""
    return int.from_bytes(hashlib.sha256(script.encode()).digest()[:4], "little")


def drop_passes(passes: list[PassSpec], indices: Iterable[int]) -> list[PassSpec]:
    """``passes`` without the positions in ``indices`` (e.g. passes that left the IR unchanged)."""
    gone = set(indices)
    return [p for i, p in enumerate(passes) if i not in gone]
