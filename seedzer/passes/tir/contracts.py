"""Pass contracts: where in TVM's own lowering a pass may run, and the flat steps of a test case.

TVM's default TIR pipeline for llvm (``tvm.s_tir.pipeline.default_s_tir_pipeline`` followed by the
host finalization of ``tvm.tirx.build``) is :data:`PIPELINE`. Every pass the fuzzer may apply has a
:class:`Contract`: the pipeline pass after which its input has the form the pass accepts (SBlocks or
lowered, unflattened or flat, before or after the host/device split and the packed API), the targets
it is meant for, and where that knowledge comes from. Passes TVM's pipeline runs take their own
position; the others take the position their callers and tests in TVM's source give them.

:func:`plan` turns a fuzzed pass sequence into the *flat steps* of a test case: TVM's pipeline, each
pass exactly once, with the fuzzed passes inserted at or after their contract position, in their
order. So a fuzzed pass only ever sees IR in a form TVM's own pipeline hands it, every program
built from a case is "the pipeline plus insertions", and the reference build (the pipeline alone)
and the minimal-lowering build (the pipeline without its optional passes) are sub-lists of it.
TVM-free: the campaign process plans steps without importing TVM; a test checks :data:`PIPELINE`
against the pipeline the installed wheel really runs.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from seedzer.kernel.tir.case import FUZZED, PIPELINE, Step
from seedzer.passes.tir.catalog import CATALOG, REQUIRED_ARG_DEFAULTS
from seedzer.seed import PassSpec


@dataclass(frozen=True)
class PipelinePass:
    """One pass of TVM's default pipeline: name, constructor arguments, whether a minimal-lowering
    build may leave it out, and the IR form it establishes (None for passes that only optimize)."""

    name: str
    args: dict[str, Any] = field(default_factory=dict)
    optional: bool = False
    establishes: str | None = None
    minimal: dict[str, Any] | None = None

    def step(self) -> Step:
        """The pass as a flat step of the pipeline."""
        return Step(self.name, dict(self.args), {}, PIPELINE, self.optional or self.minimal is not None,
                    self.minimal)


_P = PipelinePass
PIPELINE_PASSES: tuple[PipelinePass, ...] = (
    _P("s_tir.CanonicalizeLoop"),
    _P("s_tir.LowerCrossThreadReduction"),
    _P("s_tir.LowerInitBlock", establishes="no_init"),
    _P("s_tir.PlanAndUpdateBufferAllocationLocation", optional=True),
    _P("s_tir.ConvertBlocksToOpaque", establishes="opaque"),
    _P("s_tir.LiftThreadBinding"),
    _P("s_tir.ManifestSharedMemoryLocalStage"),
    _P("s_tir.CompactBufferAllocation", optional=True),
    _P("s_tir.LowerAutoCopy"),
    _P("s_tir.UnifyThreadBinding"),
    _P("s_tir.LowerMatchBuffer", establishes="no_match_buffer"),
    _P("s_tir.StmtSimplify", optional=True),
    _P("s_tir.InjectPermutedLayout"),
    _P("s_tir.AnnotateIrregularLoop"),
    _P("s_tir.InjectSoftwarePipeline"),
    _P("s_tir.TransformMmaBufferLayout"),
    _P("s_tir.LowerOpaqueBlock", establishes="no_blocks"),
    _P("tirx.FlattenBuffer", establishes="flat"),
    _P("tirx.BF16ComputeLegalize"),
    _P("tirx.NarrowDataType", {"target_bits": 32}, optional=True),
    _P("s_tir.LoopPartition", optional=True),
    _P("tirx.VectorizeLoop", {"enable_vectorize": True}, establishes="vectorized",
       minimal={"enable_vectorize": False}),
    _P("s_tir.InjectVirtualThread"),
    _P("s_tir.InjectDoubleBuffer", optional=True),
    _P("tirx.StorageRewrite", optional=True),
    _P("s_tir.HoistIfThenElse", optional=True),
    _P("tirx.UnrollLoop", optional=True),
    _P("s_tir.RenormalizeSplitPattern", optional=True),
    _P("tirx.StmtSimplify", optional=True),
    _P("tirx.RemoveNoOp", optional=True),
    _P("s_tir.RewriteUnsafeSelect"),
    _P("tirx.CommonSubexprElim", optional=True),
    _P("tirx.FP8ComputeLegalize"),
    _P("s_tir.VerifyVTCMLimit"),
    _P("s_tir.LowerVtcmAlloc"),
    _P("tirx.VerifyMemory"),
    _P("tirx.AnnotateEntryFunc"),
    _P("s_tir.ThreadSync", {"storage_scope": "shared"}),
    _P("s_tir.ThreadSync", {"storage_scope": "shared.dyn"}),
    _P("s_tir.ThreadSync", {"storage_scope": "warp"}),
    _P("s_tir.InferFragment"),
    _P("s_tir.LowerThreadAllreduce"),
    _P("s_tir.MergeSharedMemoryAllocations"),
    _P("tirx.SplitHostDevice", establishes="split"),
    _P("tirx.MakePackedAPI", establishes="packed"),
    _P("tirx.FP8StorageLegalize"),
    _P("tirx.BF16StorageLegalize"),
    # tvm.tirx.build then splits host from device functions and finalizes the host module:
    _P("tirx.LowerTVMBuiltin", establishes="builtins"),
    _P("tirx.LowerIntrin"),
)
"""TVM 0.27's default TIR pipeline for llvm with its default configuration, then the host
finalization (``finalize_host_passes``), in order. Optional passes are those a minimal-lowering
build disables (each checked disableable: the build still succeeds and matches); vectorization it
keeps but turns off (``tirx.disable_vectorize``: vectorized loops become serial ones)."""

_INDEX = {p.name: i for i, p in reversed(list(enumerate(PIPELINE_PASSES)))}
"""First position of each pipeline pass."""

SPLIT_AT = _INDEX["tirx.SplitHostDevice"]
PACKED_AT = _INDEX["tirx.MakePackedAPI"]


@dataclass(frozen=True)
class Contract:
    """Where a pass may run: after the pipeline pass ``after`` (its input then has the form the pass
    accepts), on which target kinds, and why (the position in TVM's pipeline or a call site)."""

    name: str
    after: str | None
    targets: frozenset[str] = frozenset({"llvm"})
    source: str = "pipeline"

    @property
    def slot(self) -> int:
        """Index of the pipeline pass after which the pass may first run (-1: right after BindTarget)."""
        return -1 if self.after is None else _INDEX[self.after]

    @property
    def phase(self) -> int:
        """0 before the host/device split, 1 after the packed API: a fuzzed pass stays in its phase."""
        return 0 if self.slot < SPLIT_AT else 1


def _in_pipeline(name: str) -> Contract:
    """The contract of a pass TVM's pipeline runs: right where the pipeline runs it first."""
    index = _INDEX[name]
    return Contract(name, PIPELINE_PASSES[index - 1].name if index else None)


RUN_ONCE = frozenset({"tirx.SplitHostDevice", "tirx.MakePackedAPI"})
"""Pipeline passes that must run exactly once (the pipeline runs them; a second run breaks the IR)."""

_GPU = frozenset({"cuda", "rocm", "vulkan", "metal", "opencl", "webgpu"})
_HEXAGON = frozenset({"hexagon"})

FOR_OTHER_TARGETS: dict[str, frozenset[str]] = {
    # In TVM's llvm pipeline, but they only act on constructs of other targets (thread bindings,
    # shared/warp/wmma scopes, virtual threads, VTCM, software-pipeline annotations): no-ops on llvm.
    **dict.fromkeys(("s_tir.LowerCrossThreadReduction", "s_tir.LiftThreadBinding",
                     "s_tir.ManifestSharedMemoryLocalStage", "s_tir.LowerAutoCopy", "s_tir.UnifyThreadBinding",
                     "s_tir.InjectPermutedLayout", "s_tir.InjectSoftwarePipeline", "s_tir.TransformMmaBufferLayout",
                     "s_tir.InjectVirtualThread", "s_tir.InjectDoubleBuffer", "s_tir.ThreadSync",
                     "s_tir.InferFragment", "s_tir.LowerThreadAllreduce", "s_tir.MergeSharedMemoryAllocations"), _GPU),
    **dict.fromkeys(("s_tir.VerifyVTCMLimit", "s_tir.LowerVtcmAlloc"), _HEXAGON),
}
"""Pipeline passes whose only use is on other targets (they stay in the pipeline, but are not fuzzed)."""


def _elsewhere(name: str, after: str | None, targets: frozenset[str], source: str) -> Contract:
    return Contract(name, after, targets, source)


_PIPELINE_CONTRACTS = {name: _in_pipeline(name) for name in _INDEX if name not in RUN_ONCE}
for _name, _targets in FOR_OTHER_TARGETS.items():
    _PIPELINE_CONTRACTS[_name] = dataclasses.replace(_PIPELINE_CONTRACTS[_name], targets=_targets,
                                                     source="pipeline, acts only on other targets' constructs")

CONTRACTS: dict[str, Contract] = {
    **_PIPELINE_CONTRACTS,
    # Passes TVM runs elsewhere: where their callers and their own tests give them IR (checked by
    # inserting each at every pipeline position of several kernels on the installed wheel).
    "s_tir.HoistExpression": _elsewhere("s_tir.HoistExpression", "s_tir.LowerOpaqueBlock", frozenset({"llvm"}),
                                        "no caller; its tests feed lowered IR without blocks"),
    "s_tir.RemoveStoreUndef": _elsewhere("s_tir.RemoveStoreUndef", "s_tir.LowerOpaqueBlock", frozenset({"llvm"}),
                                         "no caller; its tests feed lowered IR"),
    "s_tir.ConvertSSA": _elsewhere("s_tir.ConvertSSA", None, frozenset({"llvm"}), "a module utility; any form"),
    "tirx.ConvertSSA": _elsewhere("tirx.ConvertSSA", None, frozenset({"llvm"}),
                                  "called by SplitHostDevice and LegalizeOps; any form"),
    "tirx.ForceNarrowIndexToInt32": _elsewhere("tirx.ForceNarrowIndexToInt32", None, frozenset({"llvm"}),
                                               "WebGPU codegen; handles SBlocks, never after the packed API"),
    "tirx.InlinePrivateFunctions": _elsewhere("tirx.InlinePrivateFunctions", None, frozenset({"llvm"}),
                                              "a module utility; any form"),
    "tirx.RemoveAssume": _elsewhere("tirx.RemoveAssume", None, frozenset({"llvm"}), "its tests: lowered IR; any form"),
    "tirx.SkipAssert": _elsewhere("tirx.SkipAssert", None, frozenset({"llvm"}),
                                  "tvm.tirx.build under tirx.disable_assert; any form"),
    "s_tir.UseAssumeToReduceBranches": _elsewhere("s_tir.UseAssumeToReduceBranches", None, frozenset({"llvm"}),
                                                  "a Relax test; acts on SBlocks with an op_pattern"),
    "s_tir.InstrumentProfileIntrinsics": _elsewhere("s_tir.InstrumentProfileIntrinsics", "tirx.CommonSubexprElim",
                                                    frozenset({"llvm"}), "pipeline, config tirx.instrument_lwp"),
}
"""Every pass the fuzzer may insert, by name."""

NOT_ON_LLVM: dict[str, str] = {
    "s_tir.InstrumentBoundCheckers": "reads buffer_bound attributes nothing in TVM emits (dead on every input)",
    "s_tir.DecorateDeviceScope": "makes SplitHostDevice outline a CPU function as a device kernel",
    "tirx.PointerValueTypeRewrite": "Metal/Vulkan/WebGPU codegen: retypes a host function's parameters",
    "tirx.LowerTIRx": "lowers TIRx tile programs (the tirx pipeline, not this one)",
    "tirx.LowerTIRxOpaque": "lowers TIRx tile programs (the tirx and trn pipelines)",
    "tirx.TilePrimitiveDispatch": "lowers TIRx tile primitives (inside LowerTIRx)",
    "s_tir.RemoveWeightLayoutRewriteBlock": "acts on meta-schedule layout-rewrite annotations",
    "tirx.LowerWarpMemory": "GPU device finalization (warp memory)",
    "s_tir.LowerAsyncDMA": "Hexagon: lowers async DMA copy annotations nothing on llvm emits",
}
"""Catalogue passes with no contract on llvm, and why (their IR form never occurs in an llvm lowering)."""


def contract(name: str) -> Contract | None:
    """The contract of pass ``name`` (None: the fuzzer never inserts it)."""
    return CONTRACTS.get(name)


def fuzzable(target_kind: str = "llvm") -> list[str]:
    """Catalogue passes with a contract for ``target_kind``, in catalogue order."""
    return [n for n in CATALOG if n in CONTRACTS and target_kind in CONTRACTS[n].targets]


RESERVED_ATTRIBUTES = ("compute_scope",)
"""Attributes TVM's lowering puts in place itself (MakePackedAPI wraps a function's body in exactly one
``compute_scope``): IR that carries them before that point is a form the pipeline never gives."""


def reserved_attribute(script: str) -> str | None:
    """The first reserved attribute a TVMScript text carries (None: none)."""
    return next((a for a in RESERVED_ATTRIBUTES if f'"{a}"' in script), None)


UNROLL_LIMIT = 1024
"""Most loop iterations a fuzzed UnrollLoop configuration may ask to unroll in one nest."""
UNROLL_DEFAULT_DEPTH = 8
"""UnrollLoop's ``auto_max_depth`` when its configuration leaves it out."""


def bounded(config: dict[str, Any]) -> dict[str, Any]:
    """An UnrollLoop configuration whose size criterion cannot unroll more than :data:`UNROLL_LIMIT`
    iterations of a nest: every loop of extent up to ``auto_max_extent`` is unrolled whatever its body,
    while the unrolled depth is at most ``auto_max_depth`` (so ``auto_max_depth + 1`` levels), and their
    product is what the harness asks for (a 40,320-iteration blow-up was filed as a hang before, and
    with 4,096 a 1,224-iteration one still took LLVM minutes). The step criterion (``auto_max_step``)
    bounds itself."""
    extent = int(config.get("auto_max_extent", 0) or 0)
    if extent <= 1:
        return config
    depth = int(config.get("auto_max_depth", UNROLL_DEFAULT_DEPTH))
    while depth > 0 and extent ** (depth + 1) > UNROLL_LIMIT:
        depth -= 1
    return {**config, "auto_max_depth": depth}


def step_of(spec: PassSpec) -> Step:
    """A fuzzed pass as a flat step: its arguments split into constructor arguments and config
    (an UnrollLoop configuration :func:`bounded`)."""
    info = CATALOG[spec.name]
    known = {a.name: a for a in info.args}
    args: dict[str, Any] = dict(REQUIRED_ARG_DEFAULTS.get(spec.name, {}))
    config: dict[str, Any] = {}
    for key, value in spec.args:
        arg = known.get(key)
        if arg is None:
            raise KeyError(f"pass {spec.name} has no argument {key!r} (known: {sorted(known)})")
        if arg.config_key is None:
            args[key] = value
        elif arg.config_field is None:
            config[arg.config_key] = value
        else:
            config.setdefault(arg.config_key, {})[arg.config_field] = value
    if "tirx.UnrollLoop" in config:
        config["tirx.UnrollLoop"] = bounded(config["tirx.UnrollLoop"])
    return Step(spec.name, args, config, FUZZED, True)


def placeable(passes: Sequence[PassSpec], target_kind: str = "llvm") -> list[tuple[int, PassSpec]]:
    """``(index, spec)`` of the fuzzed passes a plan keeps: those with a contract for the target,
    stably ordered by phase (a pass of the pre-split phase never follows one of the packed phase)."""
    kept = [(i, p) for i, p in enumerate(passes)
            if (c := CONTRACTS.get(p.name)) is not None and target_kind in c.targets]
    return sorted(kept, key=lambda item: CONTRACTS[item[1].name].phase)


def plan(passes: Sequence[PassSpec], target_kind: str = "llvm") -> list[Step]:
    """The flat steps of a test case: TVM's pipeline with ``passes`` inserted within their contracts.

    Each fuzzed pass goes right after the pipeline pass of its contract, or later when an earlier
    fuzzed pass already needed a later position (their order is kept within a phase). Passes without
    a contract for ``target_kind`` are left out.
    """
    out: list[Step] = []
    emitted = 0  # pipeline passes emitted so far
    for _, spec in placeable(passes, target_kind):
        need = CONTRACTS[spec.name].slot + 1
        while emitted < need:
            out.append(PIPELINE_PASSES[emitted].step())
            emitted += 1
        out.append(step_of(spec))
    out.extend(p.step() for p in PIPELINE_PASSES[emitted:])
    return out


def within_contract(step: Step, target_kind: str = "llvm") -> list[Step] | None:
    """TVM's pipeline with ``step`` inserted right after the pipeline pass of its contract, as a fuzzed
    step (None: the pass has no contract for ``target_kind``, so no program TVM builds runs it)."""
    contract = CONTRACTS.get(step.name)
    if contract is None or target_kind not in contract.targets:
        return None
    steps = pipeline_steps()
    need = contract.slot + 1
    return [*steps[:need], dataclasses.replace(step, role=FUZZED, optional=True, minimal=None), *steps[need:]]


def pipeline_steps() -> list[Step]:
    """The reference pipeline alone (what ``tvm.compile`` runs)."""
    return [p.step() for p in PIPELINE_PASSES]


def canonical_lowering(before_slot: int) -> list[Step]:
    """The form-establishing pipeline passes up to and including position ``before_slot`` (never past
    the host/device split, whose passes must run once): what the filing gate inserts right before a
    failing pass to test whether its input was canonical."""
    chosen = PIPELINE_PASSES[: min(before_slot + 1, SPLIT_AT)]
    return [dataclasses.replace(p.step(), role=FUZZED, optional=True, minimal=None)
            for p in chosen if p.establishes is not None]


def slot_of_step(steps: Sequence[Step], index: int) -> int:
    """The pipeline position a flat step stands at: the number of pipeline steps before it, minus one."""
    return sum(1 for s in steps[:index] if s.role == PIPELINE) - 1
