"""Named, weighted mutators of the TIR level: the name -> class registry of the IR mutators that
configurations refer to, and the TIR family's pass-sequence mutators.

TVM-free at import time: :data:`IR_MUTATOR_NAMES` and :func:`validate_weights` let the campaign
process check a configuration; :func:`ir_mutator_classes` / :func:`build_ir_mutators` import the
IR mutators (and so TVM) only when called.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from seedzer.mutate.sequence import SequenceMutator, mutator_names, sequence_mutators
from seedzer.mutate.weighted import checked_weights
from seedzer.passes.tir.family import TIR_FAMILY

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

PASS_MUTATOR_NAMES: tuple[str, ...] = mutator_names(TIR_FAMILY)
"""Names of every pass-sequence mutator of the TIR level (the generic ones made with the TIR family)."""


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


def validate_weights(weights: Mapping[str, Any] | None, group: str = "ir") -> dict[str, float]:
    """Check a ``name -> weight`` mapping for the ``group`` ``"ir"`` or ``"pass"`` of mutators.

    Raises :class:`~seedzer.errors.ConfigError` naming unknown mutators or bad weights; returns the
    weights as floats.
    """
    return checked_weights(weights, IR_MUTATOR_NAMES if group == "ir" else PASS_MUTATOR_NAMES, group)


def build_ir_mutators(weights: Mapping[str, Any] | None = None) -> list[Any]:
    """All IR mutators, default weights overridden by ``weights`` (name -> weight; imports TVM)."""
    checked = validate_weights(weights, "ir")
    return [cls(weight=checked.get(name)) for name, cls in ir_mutator_classes().items()]


def build_pass_mutators(weights: Mapping[str, Any] | None = None) -> list[SequenceMutator]:
    """All pass-sequence mutators of the TIR family, default weights overridden by ``weights``."""
    return sequence_mutators(TIR_FAMILY, weights)
