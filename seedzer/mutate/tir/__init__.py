"""The TIR level's mutators on TVM 0.27: Tzer-style IR mutators, the mutant bounds and Tzer's mutation
schedule; its pass-sequence mutators are the generic ones (:mod:`seedzer.mutate.sequence`) made with the
TIR pass family (:mod:`seedzer.passes.tir.family`).

The IR mutators work with the TIR analysis toolkit (:mod:`seedzer.tir`: sites, expression ranges, the
UB and well-formedness gate). Importing the package is cheap and TVM-free; names that need TVM
(``mutate_ir``, ``MutationStats``) are imported on first access. Pass-sequence mutators and the
tolerance schedule (:mod:`seedzer.mutate.tir.schedule`) never import TVM.

Typical use in a worker::

    ir_mutators = build_ir_mutators(config_weights)        # or default_ir_mutators()
    found = mutate_ir(func, rng, ir_mutators, stats=stats)  # -> (mutant, mutator name) | None
    passes = pick(default_pass_mutators(), rng).mutate(seed.passes, rng, other=other_seq)
    steps = plan(passes)              # seedzer.passes.tir.contracts: TVM's pipeline with the passes inserted
    script = script_of(mutant)        # seedzer.tvmio
    case = Case(script, tuple(steps), input_seed(script))  # seedzer.kernel.common, seedzer.seed
    observation = observe(case)       # seedzer.kernel.tir.observe: minimal, opt, reference; judged

(``pick``: :func:`seedzer.mutate.weighted.pick`), or, for Tzer's whole schedule,
:class:`~seedzer.mutate.tir.schedule.TzerSchedule`.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from seedzer.mutate.sequence import SequenceMutator
from seedzer.mutate.tir.registry import (
    IR_MUTATOR_NAMES,
    PASS_MUTATOR_NAMES,
    build_ir_mutators,
    build_pass_mutators,
    ir_mutator_classes,
    validate_weights,
)
from seedzer.mutate.tir.schedule import Mutant, TzerSchedule, choose_mutated_part

if TYPE_CHECKING:
    from seedzer.mutate.tir.driver import MutationStats, mutate_ir

_LAZY = {
    "MutationStats": "seedzer.mutate.tir.driver",
    "mutate_ir": "seedzer.mutate.tir.driver",
}

__all__ = [
    "IR_MUTATOR_NAMES",
    "PASS_MUTATOR_NAMES",
    "Mutant",
    "MutationStats",
    "TzerSchedule",
    "build_ir_mutators",
    "build_pass_mutators",
    "choose_mutated_part",
    "default_ir_mutators",
    "default_pass_mutators",
    "ir_mutator_classes",
    "mutate_ir",
    "validate_weights",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'seedzer.mutate.tir' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def default_ir_mutators() -> list[Any]:
    """Every IR mutator at its default weight (imports TVM)."""
    return build_ir_mutators()


def default_pass_mutators() -> list[SequenceMutator]:
    """Every pass-sequence mutator of the TIR family at its default weight."""
    return build_pass_mutators()
