"""The retrying driver that applies IR mutators: weighted-random mutators until one yields a changed
mutant that passes the validity gate (:func:`seedzer.tir.wellformed.check_well_formed`), with
per-mutator counters. Imports TVM.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import tvm_ffi

from seedzer.mutate.weighted import pick
from seedzer.protocols import IRMutator
from seedzer.tir.wellformed import check_well_formed, first_error_line

DEFAULT_MAX_TRIES = 8


@dataclass
class MutationStats:
    """Per-mutator counters kept by :func:`mutate_ir` (pass one in to accumulate across calls)."""

    tried: Counter[str] = field(default_factory=Counter)
    inapplicable: Counter[str] = field(default_factory=Counter)
    unchanged: Counter[str] = field(default_factory=Counter)
    invalid: Counter[str] = field(default_factory=Counter)
    errors: Counter[str] = field(default_factory=Counter)
    accepted: Counter[str] = field(default_factory=Counter)
    reasons: Counter[str] = field(default_factory=Counter)
    out_of_bounds: Counter[str] = field(default_factory=Counter)
    """Mutants not run, by the bound they break (:func:`seedzer.mutate.tir.bounds.bound_of`)."""
    gave_up: int = 0

    def invalid_total(self) -> int:
        """Mutants rejected by the validity gate or that raised while being built."""
        return sum(self.invalid.values()) + sum(self.errors.values())

    def as_dict(self) -> dict[str, Any]:
        """JSON-friendly snapshot."""
        return {
            "tried": dict(self.tried),
            "inapplicable": dict(self.inapplicable),
            "unchanged": dict(self.unchanged),
            "invalid": dict(self.invalid),
            "errors": dict(self.errors),
            "accepted": dict(self.accepted),
            "reasons": dict(self.reasons.most_common(20)),
            "out_of_bounds": dict(self.out_of_bounds),
            "gave_up": self.gave_up,
        }


def mutate_ir(
    func: Any,
    rng: random.Random,
    mutators: Sequence[IRMutator],
    max_tries: int = DEFAULT_MAX_TRIES,
    stats: MutationStats | None = None,
    roundtrip: bool = False,
    ub_check: bool = True,
    factors: Mapping[str, float] | None = None,
) -> tuple[Any, str] | None:
    """Apply weighted-random mutators until one yields a changed, well-formed, UB-free mutant.

    Returns ``(mutant, mutator_name)`` or None after ``max_tries`` attempts. Inapplicable,
    unchanged, invalid (reasons of UB rejections start with ``ub:``) and crashing attempts are
    counted in ``stats``. ``ub_check=False`` skips the UB gate (for measuring what it rejects).
    ``factors``: the campaign's allocation of the mutators' weights, by name.
    """
    stats = stats if stats is not None else MutationStats()
    for _ in range(max_tries):
        m = pick(mutators, rng, factors)
        stats.tried[m.name] += 1
        try:
            out = m.mutate(func, rng)
        except Exception as exc:  # a mutator built an object TVM rejects: count, never crash
            stats.errors[m.name] += 1
            stats.reasons[f"{m.name}: {type(exc).__name__}: {first_error_line(exc)}"] += 1
            continue
        if out is None:
            stats.inapplicable[m.name] += 1
            continue
        if tvm_ffi.structural_equal(out, func):
            stats.unchanged[m.name] += 1
            continue
        reason = check_well_formed(out, roundtrip=roundtrip, parent=func if ub_check else None)
        if reason is not None:
            stats.invalid[m.name] += 1
            stats.reasons[f"{m.name}: {reason}"] += 1
            continue
        stats.accepted[m.name] += 1
        return out, m.name
    stats.gave_up += 1
    return None
