"""The small interfaces (seams) between Seedzer's parts, as in docs/design.md §2.

Each Protocol has one real implementation per backend and a cheap one used by unit tests.
Worker-side Protocols take and return TVM objects; everything the campaign process sees is text.
"""

from __future__ import annotations

import random
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from seedzer.kernel.common import Observation
from seedzer.seed import JointSeed, PassSpec


@dataclass
class GeneratedModel:
    """One generated model before it is written to a pool: ONNX bytes plus manifest metadata."""

    onnx_bytes: bytes
    meta: dict[str, Any] = field(default_factory=dict)


@runtime_checkable
class Generator(Protocol):
    """Makes one valid model from an rng seed under the generator's constraints."""

    def generate(self, seed: int) -> GeneratedModel:
        """Generate one model deterministically from ``seed``; raise on failure (with a reason)."""
        ...


@dataclass
class LoadedSeed:
    """A joint seed produced by the loader, with provenance."""

    seed: JointSeed
    op: str = ""
    fused: bool = False


@dataclass
class LoadResult:
    """Everything the loader learned about one model: seeds and what went wrong (never hidden)."""

    model: str
    seeds: list[LoadedSeed] = field(default_factory=list)
    observations: list[Observation] = field(default_factory=list)
    folded: bool = False
    timings: dict[str, float] = field(default_factory=dict)


@runtime_checkable
class Loader(Protocol):
    """Lowers one ONNX model file to PrimFunc joint seeds."""

    def load(self, path: Path) -> LoadResult:
        """Load ``path``; failures become observations in the result, not exceptions."""
        ...


@runtime_checkable
class IRMutator(Protocol):
    """Mutates a PrimFunc. Returns None when it found no applicable site."""

    name: str
    weight: float

    def mutate(self, func: Any, rng: random.Random) -> Any | None:
        """Return a mutated copy of ``func`` (a ``tvm.tirx.PrimFunc``) or None."""
        ...


@runtime_checkable
class PassMutator(Protocol):
    """Mutates a pass sequence (insert / delete / replace / crossover)."""

    name: str
    weight: float

    def mutate(
        self, passes: list[PassSpec], rng: random.Random, other: list[PassSpec] | None = None,
        triggered: Collection[str] = (),
    ) -> list[PassSpec]:
        """Return a new pass sequence derived from ``passes`` (and ``other`` for crossover); a pass it
        puts in preferably one the entry has not ``triggered`` (empty: any)."""
        ...


@runtime_checkable
class CoverageBackend(Protocol):
    """Coverage feedback: features reached by one execution, merged into campaign totals.

    Workers report the raw features of an execution; the campaign process owns the totals. Every
    method the campaign calls is declared here; a backend that subclasses this class explicitly
    inherits the defaults of the ones it does not need (:meth:`restore`, :meth:`drain_fresh`,
    :meth:`detail`).
    """

    name: str

    def new_since_last(self, features: Iterable[str]) -> int:
        """Merge ``features`` of one execution; return how many had never been seen."""
        ...

    def total(self) -> int:
        """Number of distinct features seen so far."""
        ...

    def snapshot(self) -> list[str]:
        """All features seen so far (for persistence and set operations between trials)."""
        ...

    def restore(self, features: Iterable[str]) -> None:
        """Re-seed the totals from persisted features (``--resume``), not counted as fresh.
        Default: nothing to restore (a backend that forgets between sessions)."""
        return None

    def drain_fresh(self) -> list[str]:
        """Features first seen since the previous call (what a snapshot persists). Default: none."""
        return []

    def detail(self) -> dict[str, int]:
        """Totals beside :meth:`total` that a snapshot records (per family, sub-totals). Default: none."""
        return {}
