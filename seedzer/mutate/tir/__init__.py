"""Tzer-style mutators on TVM 0.27: IR mutators, pass-sequence mutators and the Tzer mutation schedule.

The mutators work with the TIR analysis toolkit (:mod:`seedzer.tir`: sites, expression ranges, the
UB and well-formedness gate) and insert passes of the pass model (:mod:`seedzer.passes`: catalogue
and contracts). Importing the package is cheap and TVM-free; names that need TVM (``mutate_ir``,
``MutationStats``) are imported on first access. Pass-sequence mutators, the tolerance schedule
(:mod:`seedzer.mutate.tir.schedule`) and ``pick`` never import TVM.

Typical use in a worker::

    ir_mutators = build_ir_mutators(config_weights)        # or default_ir_mutators()
    found = mutate_ir(func, rng, ir_mutators, stats=stats)  # -> (mutant, mutator name) | None
    passes = pick(default_pass_mutators(), rng).mutate(seed.passes, rng, other=other_seq)
    steps = plan(passes)              # seedzer.passes.tir.contracts: TVM's pipeline with the passes inserted
    script = script_of(mutant)        # seedzer.tvmio
    case = Case(script, tuple(steps), input_seed(script))  # seedzer.kernel.common, seedzer.seed
    observation = observe(case)       # seedzer.kernel.tir.observe: minimal, opt, reference; judged

or, for Tzer's whole schedule, :class:`~seedzer.mutate.tir.schedule.TzerSchedule`.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from seedzer.mutate.tir.pass_mutators import MAX_LEN, MIN_LEN
from seedzer.mutate.tir.registry import (
    IR_MUTATOR_NAMES,
    PASS_MUTATORS,
    build_ir_mutators,
    build_pass_mutators,
    ir_mutator_classes,
    pick,
    validate_weights,
)
from seedzer.mutate.tir.schedule import Mutant, TzerSchedule, choose_mutation_kind

if TYPE_CHECKING:
    from seedzer.mutate.tir.driver import MutationStats, mutate_ir

_LAZY = {
    "MutationStats": "seedzer.mutate.tir.driver",
    "mutate_ir": "seedzer.mutate.tir.driver",
}

__all__ = [
    "IR_MUTATOR_NAMES",
    "MAX_LEN",
    "MIN_LEN",
    "PASS_MUTATORS",
    "Mutant",
    "MutationStats",
    "TzerSchedule",
    "build_ir_mutators",
    "build_pass_mutators",
    "choose_mutation_kind",
    "default_ir_mutators",
    "default_pass_mutators",
    "ir_mutator_classes",
    "mutate_ir",
    "pick",
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


def default_pass_mutators() -> list[Any]:
    """Every pass-sequence mutator at its default weight."""
    return build_pass_mutators()
