"""Weighted mutators: the weighted choice of one, and the check of the weights a configuration gives them
by name (TVM-free)."""

from __future__ import annotations

import random
from collections.abc import Collection, Mapping, Sequence
from typing import Any, Protocol, TypeVar

from seedzer.errors import ConfigError


class Weighted(Protocol):
    """A mutator as a weighted choice sees it."""

    name: str
    weight: float


W = TypeVar("W", bound=Weighted)


def pick(mutators: Sequence[W], rng: random.Random, factors: Mapping[str, float] | None = None) -> W:
    """Choose one mutator with probability proportional to its weight, times its factor in ``factors`` (the
    campaign's allocation, by mutator name; a name not there keeps its weight)."""
    live = [m for m in mutators if m.weight > 0]
    if not live:
        raise ValueError("no mutator with a positive weight")
    return rng.choices(live, weights=scaled(live, factors), k=1)[0]


def scaled(mutators: Sequence[Weighted], factors: Mapping[str, float] | None) -> list[float]:
    """Each mutator's weight times its factor in ``factors`` (1 when absent or when there are none)."""
    if not factors:
        return [m.weight for m in mutators]
    return [m.weight * factors.get(m.name, 1.0) for m in mutators]


def group_factor(mutators: Sequence[Weighted], factors: Mapping[str, float] | None) -> float:
    """The factor of a group of mutators drawn as one group first: their weighted mean factor (1 when there
    are no factors or no weight)."""
    total = sum(m.weight for m in mutators)
    if not factors or total <= 0:
        return 1.0
    return sum(scaled(mutators, factors)) / total


def checked_weights(weights: Mapping[str, Any] | None, known: Collection[str], group: str) -> dict[str, float]:
    """A ``name -> weight`` mapping for the ``group`` mutators named ``known``, as floats; an unknown
    name or a bad weight is a :class:`ConfigError` naming it."""
    weights = dict(weights or {})
    unknown = sorted(set(weights) - set(known))
    if unknown:
        raise ConfigError(f"unknown {group} mutator(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}")
    out = {}
    for name, w in weights.items():
        if isinstance(w, bool) or not isinstance(w, int | float) or w < 0:
            raise ConfigError(f"{group} mutator {name}: weight must be a number >= 0, got {w!r}")
        out[name] = float(w)
    return out
