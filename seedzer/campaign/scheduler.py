"""Seed schedulers: which corpus entry to mutate next (the seam heuristics plug into)."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Protocol

from seedzer.errors import ConfigError
from seedzer.store.corpus import CorpusEntry


class Scheduler(Protocol):
    """Chooses the next corpus entry to mutate."""

    name: str

    def choose(self, entries: Sequence[CorpusEntry], rng: random.Random) -> CorpusEntry:
        """Return one of ``entries`` (never empty)."""
        ...


class UniformScheduler:
    """Tzer's joint seed pool baseline: every entry equally likely."""

    name = "uniform"

    def choose(self, entries: Sequence[CorpusEntry], rng: random.Random) -> CorpusEntry:
        """Uniform random choice."""
        return entries[rng.randrange(len(entries))]


SCHEDULERS: dict[str, Callable[[], Scheduler]] = {"uniform": UniformScheduler}


def make_scheduler(name: str) -> Scheduler:
    """Build the scheduler registered as ``name``."""
    try:
        return SCHEDULERS[name]()
    except KeyError:
        raise ConfigError(f"unknown scheduler '{name}' (known: {', '.join(SCHEDULERS)})") from None
