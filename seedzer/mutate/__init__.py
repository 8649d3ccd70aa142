"""Tzer-style mutation on TVM 0.27: IR mutators, the TIR pass registry and pass-sequence mutators.

Importing this package imports TVM; only worker-side code (and tests) may do so.

Typical use in a worker::

    ir_mutators = build_ir_mutators(config_weights)        # or default_ir_mutators()
    found = mutate_ir(func, rng, ir_mutators, stats=stats)  # -> (mutant, mutator name) | None
    passes = pick(default_pass_mutators(), rng).mutate(seed.passes, rng, other=other_seq)
    mod = apply_passes(module_of(mutant), passes)           # raises PassFailure(name, index, exc)
"""

from __future__ import annotations

from typing import Any

from seedzer.mutate.nodes import Analysis, Site, analyze, choose
from seedzer.mutate.pass_errors import classify_pass_error
from seedzer.mutate.pass_mutators import MAX_LEN, MIN_LEN, choose_mutation_kind
from seedzer.mutate.passes import (
    EXCLUDED,
    PASSES,
    PassFailure,
    PassInfo,
    apply_passes,
    instantiate,
    optional_pass_names,
    random_sequence,
    sample_pass,
)
from seedzer.mutate.registry import (
    IR_MUTATORS,
    PASS_MUTATORS,
    build_ir_mutators,
    build_pass_mutators,
    pick,
)
from seedzer.mutate.stages import default_target
from seedzer.mutate.wellformed import MutationStats, check_well_formed, mutate_ir

__all__ = [
    "EXCLUDED",
    "IR_MUTATORS",
    "MAX_LEN",
    "MIN_LEN",
    "PASSES",
    "PASS_MUTATORS",
    "Analysis",
    "MutationStats",
    "PassFailure",
    "PassInfo",
    "Site",
    "analyze",
    "apply_passes",
    "build_ir_mutators",
    "build_pass_mutators",
    "check_well_formed",
    "choose",
    "choose_mutation_kind",
    "classify_pass_error",
    "default_ir_mutators",
    "default_pass_mutators",
    "default_target",
    "instantiate",
    "mutate_ir",
    "optional_pass_names",
    "pick",
    "random_sequence",
    "sample_pass",
]


def default_ir_mutators() -> list[Any]:
    """Every IR mutator at its default weight."""
    return build_ir_mutators()


def default_pass_mutators() -> list[Any]:
    """Every pass-sequence mutator at its default weight."""
    return build_pass_mutators()
