"""Named, weighted mutators: the name -> class registry that configurations refer to."""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any, Protocol, TypeVar

from seedzer.errors import ConfigError
from seedzer.mutate import ir_mutators as irm
from seedzer.mutate import pass_mutators as pm
from seedzer.mutate import tensor_mutators as tm


class _Weighted(Protocol):
    name: str
    weight: float


W = TypeVar("W", bound=_Weighted)

IR_MUTATORS: dict[str, type[Any]] = {
    cls.name: cls
    for cls in (
        irm.Insertor, irm.Deletor, irm.Flipper, irm.Nilizer,
        tm.WrapIf, tm.WrapSelect, tm.WrapAlloc, tm.WrapAssert, tm.WrapAttr,
        tm.SplitLoop, tm.LoopKind, tm.UnrollPragma, tm.BufferLoad,
    )
}
"""Every IR mutator class by its name."""

PASS_MUTATORS: dict[str, type[Any]] = {
    cls.name: cls for cls in (pm.InsertPass, pm.DeletePass, pm.ReplacePass, pm.Crossover)
}
"""Every pass-sequence mutator class by its name."""


def pick(mutators: Sequence[W], rng: random.Random) -> W:
    """Choose one mutator with probability proportional to its weight."""
    live = [m for m in mutators if m.weight > 0]
    if not live:
        raise ValueError("no mutator with a positive weight")
    return rng.choices(live, weights=[m.weight for m in live], k=1)[0]


def _build(table: Mapping[str, type[Any]], kind: str, weights: Mapping[str, float] | None) -> list[Any]:
    weights = dict(weights or {})
    unknown = sorted(set(weights) - set(table))
    if unknown:
        raise ConfigError(
            f"unknown {kind} mutator(s) {', '.join(unknown)}; known: {', '.join(sorted(table))}"
        )
    out = []
    for name, cls in table.items():
        w = weights.get(name)
        if w is not None and (not isinstance(w, int | float) or w < 0):
            raise ConfigError(f"{kind} mutator {name}: weight must be a number >= 0, got {w!r}")
        out.append(cls(weight=w))
    return out


def build_ir_mutators(weights: Mapping[str, float] | None = None) -> list[Any]:
    """All IR mutators, with default weights overridden by ``weights`` (name -> weight)."""
    return _build(IR_MUTATORS, "IR", weights)


def build_pass_mutators(weights: Mapping[str, float] | None = None) -> list[Any]:
    """All pass-sequence mutators, with default weights overridden by ``weights``."""
    return _build(PASS_MUTATORS, "pass", weights)
