"""MetaSchedule's mutators on a trace's decisions: tile sizes, unroll steps, compute locations and
parallel extents, as evolutionary search mutates a candidate.

The trace is replayed on a schedule of its PrimFunc, and MetaSchedule's own mutator
(``MutateTileSize``, ``MutateUnroll``, ``MutateComputeLocation``, ``MutateParallel``) rewrites the
replayed ``Trace``. The last two serialize the module with ``ToJSONGraph`` when they are
initialized, which segfaults with apache-tvm-ffi 0.1.15 (:mod:`seedzer.mutate.sched.environment`);
there their work is done the way they do it, by other means: a compute location is drawn again by
TVM's own sampler (the decision dropped, the trace replayed, the new decision read back), and a
``meta_schedule.parallel`` annotation gets another extent. Each returns the new items and the
mutation's name (``ms.<Mutator>`` or ``resample.<what>``), or None when the trace has nothing it
mutates. Imports TVM.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Callable, Sequence
from typing import Any

from seedzer.kernel.sched.apply import apply_trace
from seedzer.kernel.sched.trace import Instruction
from seedzer.kernel.tir.lowering import StepFailure
from seedzer.mutate.sched.environment import json_graph_works
from seedzer.mutate.sched.space import tune_context
from seedzer.mutate.sched.tvm_trace import items_of, plain

PARALLEL_KEY = "meta_schedule.parallel"
PARALLEL_EXTENTS = (1, 2, 4, 8, 16, 32, 64, 128, 512)
MAX_JOBS_PER_CORE = 16
"""``MutateParallel``'s setting in MetaSchedule's default llvm mutators."""


def _mutator(name: str) -> Any:
    from tvm.s_tir.meta_schedule import mutator

    return mutator.MutateParallel(MAX_JOBS_PER_CORE) if name == "MutateParallel" else getattr(mutator, name)()


def ms_mutate(name: str, func: Any, items: Sequence[Instruction], rng: random.Random,
              num_cores: int) -> list[Instruction] | None:
    """MetaSchedule's mutator ``name`` on the trace ``items`` of ``func`` (None: nothing to mutate,
    or the result cannot be written as JSON here)."""
    from tvm.s_tir.meta_schedule import _ffi_api as ms_api

    applied = apply_trace(func, items, verify_each=False, debug_mask=0)
    mutator = _mutator(name)
    if name in ("MutateComputeLocation", "MutateParallel"):
        mutator._initialize_with_tune_context(tune_context(func, num_cores, rng.randrange(1, 1 << 30)))
    mutated = ms_api.MutatorApply(mutator, applied.schedule.trace, rng.randrange(1, 1 << 30))
    return items_of(mutated) if mutated is not None else None


def resample(func: Any, items: Sequence[Instruction], kind: str, rng: random.Random) -> list[Instruction] | None:
    """One ``kind`` sampler's decision drawn again by TVM's own sampler (None: the trace has none, or
    it no longer applies)."""
    indices = [i for i, inst in enumerate(items) if inst.kind == kind]
    if not indices:
        return None
    chosen = rng.choice(indices)
    dropped = [dataclasses.replace(inst, decision=None) if i == chosen else inst for i, inst in enumerate(items)]
    try:
        applied = apply_trace(func, dropped, verify_each=False, debug_mask=0, seed=rng.randrange(1, 1 << 30))
    except StepFailure:
        return None
    trace = applied.schedule.trace
    sampled = [inst for inst in trace.insts if str(inst.kind.name) == kind]
    decision = plain(trace.get_decision(sampled[indices.index(chosen)]))
    return [dataclasses.replace(inst, decision=decision) if i == chosen else inst for i, inst in enumerate(items)]


def reparallel(func: Any, items: Sequence[Instruction], rng: random.Random) -> list[Instruction] | None:
    """Another extent for one ``meta_schedule.parallel`` annotation (None: the trace has none)."""
    indices = [i for i, inst in enumerate(items) if inst.kind == "Annotate" and inst.attrs[:1] == (PARALLEL_KEY,)]
    if not indices:
        return None
    chosen = rng.choice(indices)
    inst = items[chosen]
    extent = rng.choice([e for e in PARALLEL_EXTENTS if e != inst.inputs[1]])
    out = list(items)
    out[chosen] = dataclasses.replace(inst, inputs=(inst.inputs[0], extent))
    return out


Mutation = Callable[[Any, Sequence[Instruction], random.Random, int], "list[Instruction] | None"]


def mutations() -> dict[str, Mutation]:
    """The decision mutations available here, by the name a status row shows."""
    table: dict[str, Mutation] = {
        "ms.MutateTileSize": lambda f, i, r, c: ms_mutate("MutateTileSize", f, i, r, c),
        "ms.MutateUnroll": lambda f, i, r, c: ms_mutate("MutateUnroll", f, i, r, c),
    }
    if json_graph_works():
        table["ms.MutateComputeLocation"] = lambda f, i, r, c: ms_mutate("MutateComputeLocation", f, i, r, c)
        table["ms.MutateParallel"] = lambda f, i, r, c: ms_mutate("MutateParallel", f, i, r, c)
    else:
        table["resample.compute_location"] = lambda f, i, r, c: resample(f, i, "SampleComputeLocation", r)
        table["resample.parallel"] = lambda f, i, r, c: reparallel(f, i, r)
    table["resample.tile"] = lambda f, i, r, c: resample(f, i, "SamplePerfectTile", r)
    return table
