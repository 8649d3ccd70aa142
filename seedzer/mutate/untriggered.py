"""Which passes a pass-sequence mutator inserts: preferably those the entry's IR has not triggered yet.

With rarity energy (``fuzz.energy: rarity``) a task carries the passes its corpus entry's own run
triggered (changed the IR: :mod:`seedzer.coverage.triggers`). A mutator that puts a new pass into the
sequence (insert, replace) then draws it, :data:`UNTRIGGERED_SHARE` of the time, among the candidates
the entry has not triggered (WhiteFox aims generation at the optimizations not triggered yet), and
otherwise among all of them, so that a pass that did something can still be repeated or reordered.
TVM-free.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Collection, Sequence

UNTRIGGERED_SHARE = 0.75
"""How often an inserted pass is drawn among those the entry has not triggered (when there are some)."""


def untriggered(candidates: Sequence[str], triggered: Collection[str],
                ran_as: Callable[[str], str] = str) -> list[str]:
    """The candidates (catalogue names) not among ``triggered`` (names as the passes ran: ``ran_as``
    gives a candidate's, :meth:`seedzer.passes.family.PassFamily.ran_as`)."""
    return [name for name in candidates if name not in triggered and ran_as(name) not in triggered]


def insertion_names(candidates: Sequence[str], triggered: Collection[str], rng: random.Random,
                    ran_as: Callable[[str], str] = str) -> list[str] | None:
    """The names to draw an inserted pass from: :data:`UNTRIGGERED_SHARE` of the time the untriggered
    candidates, else (or when every candidate was triggered, or none is known) None: all of them. Draws
    from ``rng`` only when ``triggered`` is not empty (today's draws otherwise)."""
    if not triggered:
        return None
    fresh = untriggered(candidates, triggered, ran_as)
    return fresh if fresh and rng.random() < UNTRIGGERED_SHARE else None
