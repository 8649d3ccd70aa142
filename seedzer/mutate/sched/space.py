"""MetaSchedule's design space for an llvm target: a schedule a tuning run could pick.

``PostOrderApply`` with MetaSchedule's default llvm schedule rules (``ScheduleRule.create("llvm")``:
ApplyCustomRule, InlineConstantScalars, AutoInline, AddRFactor, MultiLevelTiling,
ParallelizeVectorizeUnroll, RandomComputeLocation) generates the design spaces of a PrimFunc, each
with its sampling decisions drawn from the given random state; one of them is the trace, and the
llvm postprocessors (``Postproc.create("llvm")``) run after it in the kernel, as a tuning run
applies them to a sampled candidate.

Two workarounds, both for TVM's Python layer, not for what is fuzzed: the space generator is given
no mutators (``mutator_probs={}``), because initializing the default llvm mutators serializes the
module with ``ToJSONGraph``, which segfaults with apache-tvm-ffi 0.1.15
(:mod:`seedzer.mutate.sched.environment`; the design space does not use them); and the
``TuneContext`` is made through its FFI constructor, because ``TuneContext.__init__`` first
imports ``tvm.s_tir.tensor_intrin`` (every target's tensor intrinsics, CUDA's included: ~10 s of
TVMScript parsing, measured 158 s on a loaded machine), which the llvm rules do not use. Imports TVM.
"""

from __future__ import annotations

import random
from typing import Any

from seedzer.kernel.sched.case import LLVM_POSTPROCS
from seedzer.kernel.sched.trace import Instruction
from seedzer.mutate.sched.tvm_trace import items_of

RULE_MARKS = {
    "AutoInline": ("ComputeInline", "ReverseComputeInline"),
    "AddRFactor": ("RFactor",),
    "MultiLevelTiling": ("meta_schedule.tiling_structure",),
    "ParallelizeVectorizeUnroll": ("meta_schedule.parallel", "meta_schedule.vectorize",
                                   "meta_schedule.unroll_explicit"),
    "RandomComputeLocation": ("SampleComputeLocation",),
}
"""What each of MetaSchedule's llvm rules leaves in a trace (an instruction kind or an annotation key)."""


def llvm_target(num_cores: int) -> Any:
    """The llvm target MetaSchedule's rules see (``num-cores`` sets parallel extents)."""
    import tvm

    return tvm.target.Target({"kind": "llvm", "num-cores": num_cores})


def tune_context(func: Any, num_cores: int, seed: int, space_generator: Any = None) -> Any:
    """A ``TuneContext`` for ``func`` (see the module docstring for why not through its ``__init__``)."""
    import tvm
    from tvm.s_tir.meta_schedule import TuneContext
    from tvm.s_tir.meta_schedule import _ffi_api as ms_api
    from tvm.s_tir.meta_schedule.logging import get_logger, get_logging_func

    context = TuneContext.__new__(TuneContext)
    context.__init_handle_by_constructor__(
        ms_api.TuneContext, tvm.IRModule({"main": func}), llvm_target(num_cores), space_generator, None, "main",
        1, seed, get_logging_func(get_logger(__name__)))
    ms_api.TuneContextInitialize(context)
    return context


def design_spaces(func: Any, num_cores: int, seed: int) -> list[Any]:
    """MetaSchedule's design spaces of ``func`` (schedules, decisions drawn from ``seed``)."""
    from tvm.s_tir.meta_schedule.space_generator import PostOrderApply

    generator = PostOrderApply(mutator_probs={})
    context = tune_context(func, num_cores, seed, generator)
    return list(context.generate_design_space())


def sample_space(func: Any, rng: random.Random, num_cores: int) -> tuple[list[Instruction], tuple[str, ...]] | None:
    """One design space's trace, its decisions drawn from ``rng``, and the llvm postprocessors
    (None: no space can be written as JSON here)."""
    spaces = design_spaces(func, num_cores, rng.randrange(1, 1 << 30))
    rng.shuffle(spaces)
    for space in spaces:
        items = items_of(space.trace)
        if items is not None:
            return items, LLVM_POSTPROCS
    return None


def rules_of(items: list[Instruction]) -> list[str]:
    """The MetaSchedule rules whose marks a trace bears (for the status rows of a design space)."""
    marks = {i.kind for i in items} | {str(a) for i in items if i.kind == "Annotate" for a in i.attrs}
    return [rule for rule, signs in RULE_MARKS.items() if marks & set(signs)]
