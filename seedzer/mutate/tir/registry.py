"""Named, weighted mutators: the name -> class registries that configurations refer to.

TVM-free at import time: :data:`IR_MUTATOR_NAMES` and :func:`validate_weights` let the campaign
process check a configuration; :func:`ir_mutator_classes` / :func:`build_ir_mutators` import the
IR mutators (and so TVM) only when called.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any, Protocol, TypeVar

from seedzer.errors import ConfigError
from seedzer.mutate.tir import pass_mutators as pm


class _Weighted(Protocol):
    name: str
    weight: float


W = TypeVar("W", bound=_Weighted)

IR_MUTATOR_NAMES: tuple[str, ...] = (
    "insert",
    "delete",
    "flip",
    "nilize",
    "wrap_if",
    "wrap_select",
    "wrap_alloc",
    "wrap_assert",
    "wrap_attr",
    "split_loop",
    "loop_kind",
    "unroll_pragma",
    "buffer_load",
)
"""Names of every IR mutator (the keys of :func:`ir_mutator_classes`)."""

PASS_MUTATORS: dict[str, type[Any]] = {
    cls.name: cls for cls in (pm.InsertPass, pm.DeletePass, pm.ReplacePass, pm.Crossover)
}
"""Every pass-sequence mutator class by its name."""


def ir_mutator_classes() -> dict[str, type[Any]]:
    """Every IR mutator class by its name (imports TVM)."""
    from seedzer.mutate.tir import ir_mutators as irm
    from seedzer.mutate.tir import tensor_mutators as tm

    classes = (
        irm.Insertor,
        irm.Deletor,
        irm.Flipper,
        irm.Nilizer,
        tm.WrapIf,
        tm.WrapSelect,
        tm.WrapAlloc,
        tm.WrapAssert,
        tm.WrapAttr,
        tm.SplitLoop,
        tm.LoopKind,
        tm.UnrollPragma,
        tm.BufferLoad,
    )
    return {cls.name: cls for cls in classes}


def pick(mutators: Sequence[W], rng: random.Random) -> W:
    """Choose one mutator with probability proportional to its weight."""
    live = [m for m in mutators if m.weight > 0]
    if not live:
        raise ValueError("no mutator with a positive weight")
    return rng.choices(live, weights=[m.weight for m in live], k=1)[0]


def validate_weights(weights: Mapping[str, Any] | None, kind: str = "ir") -> dict[str, float]:
    """Check a ``name -> weight`` mapping for ``kind`` ``"ir"`` or ``"pass"`` mutators.

    Raises :class:`ConfigError` naming unknown mutators or bad weights; returns the weights as floats.
    """
    known = IR_MUTATOR_NAMES if kind == "ir" else tuple(PASS_MUTATORS)
    weights = dict(weights or {})
    unknown = sorted(set(weights) - set(known))
    if unknown:
        raise ConfigError(f"unknown {kind} mutator(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}")
    out = {}
    for name, w in weights.items():
        if isinstance(w, bool) or not isinstance(w, int | float) or w < 0:
            raise ConfigError(f"{kind} mutator {name}: weight must be a number >= 0, got {w!r}")
        out[name] = float(w)
    return out


def _build(table: Mapping[str, type[Any]], kind: str, weights: Mapping[str, Any] | None) -> list[Any]:
    checked = validate_weights(weights, kind)
    return [cls(weight=checked.get(name)) for name, cls in table.items()]


def build_ir_mutators(weights: Mapping[str, Any] | None = None) -> list[Any]:
    """All IR mutators, default weights overridden by ``weights`` (name -> weight; imports TVM)."""
    return _build(ir_mutator_classes(), "ir", weights)


def build_pass_mutators(weights: Mapping[str, Any] | None = None) -> list[Any]:
    """All pass-sequence mutators, default weights overridden by ``weights``."""
    return _build(PASS_MUTATORS, "pass", weights)
