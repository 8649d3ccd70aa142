"""dlight's CPU schedule rules where they apply: ``tvm.s_tir.dlight.cpu`` ``GEMV`` (matrix-vector
products, with an injective epilogue) and ``Reduction`` (softmax, layer and RMS norms: reductions and
injective blocks sharing leading spatial axes). A rule returns None for a function it does not fit;
the schedule it returns carries its trace. Imports TVM.
"""

from __future__ import annotations

import random
from typing import Any

from seedzer.kernel.sched.trace import Instruction
from seedzer.mutate.sched.space import llvm_target
from seedzer.mutate.sched.tvm_trace import items_of

RULES = ("GEMV", "Reduction")
"""dlight's CPU rules (``tvm.s_tir.dlight.cpu``)."""


def apply_rule(name: str, func: Any, num_cores: int) -> list[Instruction] | None:
    """The trace dlight's CPU rule ``name`` schedules ``func`` with (None: the rule does not apply, or
    its trace cannot be written as JSON here)."""
    from tvm.s_tir.dlight import cpu

    schedule = getattr(cpu, name)().apply(func.with_attr("global_symbol", "main"), llvm_target(num_cores), False)
    if isinstance(schedule, list):
        schedule = schedule[0] if schedule else None
    return items_of(schedule.trace) if schedule is not None else None


def dlight_trace(func: Any, rng: random.Random, num_cores: int) -> tuple[list[Instruction], str] | None:
    """The trace of the first of dlight's CPU rules (in a random order) that applies, and its name."""
    for name in rng.sample(RULES, len(RULES)):
        items = apply_rule(name, func, num_cores)
        if items is not None:
            return items, name
    return None
