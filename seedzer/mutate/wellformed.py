"""Validity gate for IR mutants, and the retrying driver that applies IR mutators.

``tvm.tirx.analysis.verify_well_formed`` rejects any function that still holds schedulable blocks
("TIR verifier does not support statement s_tir.SBlockRealize"). Every seed from LegalizeOps does,
so the gate uses ``tvm.s_tir.analysis.verify_well_formed`` instead: it checks definitions (SSA,
undefined variables), buffer-load types and S-TIR block boundaries (e.g. a block body using an
outer loop variable) and accepts ordinary TIR as well (~0.1 ms). It is followed by
``tvm.s_tir.analysis.OOBChecker`` (~0.2 ms), which proves constant-bounded buffer accesses in range,
as a second line of defence against out-of-bounds mutants (the mutators avoid them by
construction). On block IR it understands block predicates and padding guards; after flattening
its interval analysis ignores guards and raises false alarms, so it is run on the mutant as is.
Given the parent, :func:`seedzer.mutate.ub.check` (~0.1-0.4 ms on the fixture seeds) then rejects
undefined or NaN-producing behaviour the mutant adds to it: divisions by a range holding zero,
math intrinsics off their domain or overflowing, reads of uninitialised memory, lost writes, double
writes. Optionally (``roundtrip=True``, ~40 ms) the mutant is printed and re-parsed twice, since
only TVMScript text crosses process boundaries.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import tvm
import tvm_ffi
from tvm import s_tir, tirx

from seedzer.mutate import ub
from seedzer.protocols import IRMutator

DEFAULT_MAX_TRIES = 8


def first_error_line(exc: BaseException) -> str:
    """The line of a TVM error that says what failed (a 'Check failed' or error line), at most 300 chars."""
    lines = [ln.strip() for ln in str(exc).strip().splitlines() if ln.strip()]
    for ln in lines:
        if "check failed" in ln.lower() or "error" in ln.lower():
            return ln[:300]
    return (lines[0] if lines else type(exc).__name__)[:300]


def check_well_formed(func: Any, roundtrip: bool = False, parent: Any = None) -> str | None:
    """Return None if ``func`` is a well-formed PrimFunc with provably in-bounds accesses (and, given
    the ``parent`` it was mutated from, no undefined behaviour the parent lacks), else why not."""
    if not isinstance(func, tirx.PrimFunc):
        return f"not a PrimFunc but {type(func).__name__}"
    try:
        s_tir.analysis.verify_well_formed(func, True)
    except Exception as exc:
        return "ill-formed: " + first_error_line(exc)
    try:
        s_tir.analysis.OOBChecker()(tvm.IRModule({"main": func}))
    except Exception as exc:
        return "out-of-bounds: " + first_error_line(exc)
    if parent is not None:
        reason = ub.check(func, parent)
        if reason is not None:
            return reason
    if roundtrip:
        return _roundtrip(func)
    return None


def _roundtrip(func: Any) -> str | None:
    """Print and re-parse ``func``: the text must parse to a well-formed function that prints and
    parses back to itself. (The parser folds constant sub-expressions and drops ``T.evaluate(0)``,
    so the re-parsed function may legitimately differ from ``func`` itself.)
    """
    try:
        back = tvm.script.from_source(str(func.script()))
        again = tvm.script.from_source(str(back.script()))
    except Exception as exc:
        return "script round trip: " + first_error_line(exc)
    if not tvm_ffi.structural_equal(back, again, map_free_vars=True):
        return "script round trip: printed text is not stable"
    reason = check_well_formed(back)
    return None if reason is None else "script round trip: " + reason


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
) -> tuple[Any, str] | None:
    """Apply weighted-random mutators until one yields a changed, well-formed, UB-free mutant.

    Returns ``(mutant, mutator_name)`` or None after ``max_tries`` attempts. Inapplicable,
    unchanged, invalid (reasons of UB rejections start with ``ub:``) and crashing attempts are
    counted in ``stats``. ``ub_check=False`` skips the UB gate (for measuring what it rejects).
    """
    from seedzer.mutate.registry import pick

    stats = stats if stats is not None else MutationStats()
    for _ in range(max_tries):
        m = pick(mutators, rng)
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
