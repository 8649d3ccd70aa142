"""A heuristic's ``epochs:`` part: its pools are meant to grow while a campaign fuzzes them.

A heuristic that declares ``epochs: {count: N, models: M, pool: P}`` makes a starting pool (of ``P``
models in an experiment, when given) that its experiment trials fuzz with ``fuzz --epochs N``, ``M``
models generated per later epoch (:mod:`seedzer.campaign.epochs`). ``seedzer generate`` ignores it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from seedzer.config import excerpt
from seedzer.errors import ConfigError

MAX_EPOCHS = 9
"""Most epochs a campaign may have (the epochs' models are numbered per epoch below 10**6)."""


@dataclass(frozen=True)
class EpochPlan:
    """How a heuristic's pool is fuzzed: ``count`` epochs, ``models`` generated per later epoch, a
    starting pool of ``pool`` models in experiments (None: the experiment's pool size)."""

    count: int
    models: int
    pool: int | None = None


def _int(path: str, key: str, value: Any, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ConfigError(f"{path}: epochs.{key}: expected an integer between {low} and {high}, got {excerpt(value)}")
    return value


def parse_epoch_plan(raw: Any, path: str) -> EpochPlan | None:
    """Validate a heuristic's ``epochs:`` mapping (None when absent); one-line errors name the field."""
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise ConfigError(f"{path}: epochs: expected a mapping with count, models and pool, got {excerpt(raw)}")
    unknown = set(raw) - {"count", "models", "pool"}
    if unknown:
        raise ConfigError(f"{path}: epochs.{sorted(map(str, unknown))[0]}: unknown key (allowed: count, models, pool)")
    if "count" not in raw:
        raise ConfigError(f"{path}: epochs.count: missing (the number of epochs, 2 to {MAX_EPOCHS})")
    pool = raw.get("pool")
    return EpochPlan(_int(path, "count", raw["count"], 2, MAX_EPOCHS),
                     _int(path, "models", raw.get("models", 10), 1, 1000),
                     None if pool is None else _int(path, "pool", pool, 1, 100_000))
