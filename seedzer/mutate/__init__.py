"""Tzer-style mutation on TVM 0.27: IR mutators, the TIR pass catalogue and pass-sequence mutators.

Importing the package is cheap and TVM-free; names that need TVM (IR mutators,
``check_well_formed`` ...) are imported on first access. The pass catalogue, the pass contracts
(:mod:`seedzer.mutate.contracts`), pass-sequence mutators, the tolerance schedule and ``pick``
never import TVM.

Typical use in a worker::

    ir_mutators = build_ir_mutators(config_weights)        # or default_ir_mutators()
    found = mutate_ir(func, rng, ir_mutators, stats=stats)  # -> (mutant, mutator name) | None
    passes = pick(default_pass_mutators(), rng).mutate(seed.passes, rng, other=other_seq)
    steps = plan(passes)              # contracts: TVM's pipeline with the passes inserted (flat steps)
    script = script_of(mutant)        # seedzer.tvmio
    case = Case(script, tuple(steps), input_seed(script))  # seedzer.kernel.common, seedzer.seed
    observation = observe(case)       # seedzer.kernel.lowlevel: minimal, opt, reference; judged
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from seedzer.mutate.pass_catalog import (
    CATALOG,
    EXCLUDED,
    PASS_NAMES,
    PassInfo,
    random_sequence,
    sample_pass,
)
from seedzer.mutate.pass_mutators import MAX_LEN, MIN_LEN, choose_mutation_kind
from seedzer.mutate.registry import (
    IR_MUTATOR_NAMES,
    PASS_MUTATORS,
    build_ir_mutators,
    build_pass_mutators,
    ir_mutator_classes,
    pick,
    validate_weights,
)

if TYPE_CHECKING:
    from seedzer.mutate.nodes import Analysis, Site, analyze, choose
    from seedzer.mutate.wellformed import MutationStats, check_well_formed, mutate_ir

_LAZY = {
    "Analysis": "seedzer.mutate.nodes",
    "Site": "seedzer.mutate.nodes",
    "analyze": "seedzer.mutate.nodes",
    "choose": "seedzer.mutate.nodes",
    "MutationStats": "seedzer.mutate.wellformed",
    "check_well_formed": "seedzer.mutate.wellformed",
    "mutate_ir": "seedzer.mutate.wellformed",
}

__all__ = [
    "CATALOG",
    "EXCLUDED",
    "IR_MUTATOR_NAMES",
    "MAX_LEN",
    "MIN_LEN",
    "PASS_MUTATORS",
    "PASS_NAMES",
    "Analysis",
    "MutationStats",
    "PassInfo",
    "Site",
    "analyze",
    "build_ir_mutators",
    "build_pass_mutators",
    "check_well_formed",
    "choose",
    "choose_mutation_kind",
    "default_ir_mutators",
    "default_pass_mutators",
    "ir_mutator_classes",
    "mutate_ir",
    "pick",
    "random_sequence",
    "sample_pass",
    "validate_weights",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'seedzer.mutate' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def default_ir_mutators() -> list[Any]:
    """Every IR mutator at its default weight (imports TVM)."""
    return build_ir_mutators()


def default_pass_mutators() -> list[Any]:
    """Every pass-sequence mutator at its default weight."""
    return build_pass_mutators()
