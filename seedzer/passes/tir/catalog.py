"""The TIR pass catalogue: names, argument samplers and sampling weights.

TVM-free on purpose (the campaign process may sample and mutate pass sequences without importing
TVM). Where a pass may run is its contract (:mod:`seedzer.passes.tir.contracts`, which also turns a
sequence into flat steps); :func:`seedzer.kernel.tir.observe.make_pass` binds a name to
``tvm.tirx.transform`` / ``tvm.s_tir.transform``, and a unit test checks that :data:`PASS_NAMES` is
exactly what enumerating those two modules yields, minus :data:`EXCLUDED`.

A pass is named ``"<module>.<Function>"`` (``"tirx.UnrollLoop"``), which is also its
``PassInfo.name`` inside TVM, so the same names work in ``PassContext(disabled_pass=...)``.
Arguments are either constructor arguments or fields of a ``PassContext`` config object.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from seedzer.passes.catalog import ArgSpec, PassInfo, Sampler, catalog_of, choice, coin, draw
from seedzer.seed import PassSpec

PASS_NAMES: tuple[str, ...] = (
    "s_tir.AnnotateIrregularLoop",
    "s_tir.CanonicalizeLoop",
    "s_tir.CompactBufferAllocation",
    "s_tir.ConvertBlocksToOpaque",
    "s_tir.ConvertSSA",
    "s_tir.DecorateDeviceScope",
    "s_tir.HoistExpression",
    "s_tir.HoistIfThenElse",
    "s_tir.InferFragment",
    "s_tir.InjectDoubleBuffer",
    "s_tir.InjectPermutedLayout",
    "s_tir.InjectSoftwarePipeline",
    "s_tir.InjectVirtualThread",
    "s_tir.InstrumentBoundCheckers",
    "s_tir.InstrumentProfileIntrinsics",
    "s_tir.LiftThreadBinding",
    "s_tir.LoopPartition",
    "s_tir.LowerAsyncDMA",
    "s_tir.LowerAutoCopy",
    "s_tir.LowerCrossThreadReduction",
    "s_tir.LowerInitBlock",
    "s_tir.LowerMatchBuffer",
    "s_tir.LowerOpaqueBlock",
    "s_tir.LowerThreadAllreduce",
    "s_tir.LowerVtcmAlloc",
    "s_tir.ManifestSharedMemoryLocalStage",
    "s_tir.MergeSharedMemoryAllocations",
    "s_tir.PlanAndUpdateBufferAllocationLocation",
    "s_tir.RemoveStoreUndef",
    "s_tir.RemoveWeightLayoutRewriteBlock",
    "s_tir.RenormalizeSplitPattern",
    "s_tir.RewriteUnsafeSelect",
    "s_tir.StmtSimplify",
    "s_tir.ThreadSync",
    "s_tir.TransformMmaBufferLayout",
    "s_tir.UnifyThreadBinding",
    "s_tir.UseAssumeToReduceBranches",
    "s_tir.VerifyVTCMLimit",
    "tirx.AnnotateEntryFunc",
    "tirx.BF16ComputeLegalize",
    "tirx.CommonSubexprElim",
    "tirx.ConvertSSA",
    "tirx.FP8ComputeLegalize",
    "tirx.FlattenBuffer",
    "tirx.ForceNarrowIndexToInt32",
    "tirx.InlinePrivateFunctions",
    "tirx.LowerIntrin",
    "tirx.LowerTIRx",
    "tirx.LowerTIRxOpaque",
    "tirx.LowerTVMBuiltin",
    "tirx.LowerWarpMemory",
    "tirx.NarrowDataType",
    "tirx.PointerValueTypeRewrite",
    "tirx.RemoveAssume",
    "tirx.RemoveNoOp",
    "tirx.SkipAssert",
    "tirx.SplitHostDevice",
    "tirx.StmtSimplify",
    "tirx.StorageRewrite",
    "tirx.TilePrimitiveDispatch",
    "tirx.UnrollLoop",
    "tirx.VectorizeLoop",
    "tirx.VerifyMemory",
)
"""Every catalogue pass (all of ``tvm.tirx.transform`` and ``tvm.s_tir.transform`` but EXCLUDED)."""


def _cfg(key: str, fld: str, sample: Sampler, name: str | None = None) -> ArgSpec:
    return ArgSpec(name or fld, sample, key, fld)


UNROLL = "tirx.UnrollLoop"
SIMPLIFY = "tirx.StmtSimplify"
_SIMPLIFY_ARGS = tuple(
    _cfg(SIMPLIFY, f, coin)
    for f in (
        "transitively_prove_inequalities",
        "convert_boolean_to_and_of_ors",
        "apply_constraints_to_boolean_branches",
    )
)

ARGS: dict[str, tuple[ArgSpec, ...]] = {
    "tirx.UnrollLoop": (
        # TVM's default pipeline asks for 0 (no auto-unrolling), meta-schedule's CPU rules for 16 at
        # the least; larger steps grow the code past seedzer.mutate.tir.bounds (docs/measurements.md,
        # 'Mutant bounds')
        _cfg(UNROLL, "auto_max_step", choice(0, 4, 16)),
        _cfg(UNROLL, "auto_max_depth", choice(1, 2, 4, 8)),
        _cfg(UNROLL, "auto_max_extent", choice(0, 2, 4, 8)),
        _cfg(UNROLL, "explicit_unroll", choice(0, 1)),
        _cfg(UNROLL, "unroll_local_access", choice(0, 1)),
    ),
    "tirx.StmtSimplify": _SIMPLIFY_ARGS,
    "s_tir.StmtSimplify": _SIMPLIFY_ARGS,
    "tirx.RemoveNoOp": (
        _cfg("tirx.RemoveNoOp", "max_simplification_steps", choice(0, 100, 1000, 100000)),
        _cfg("tirx.RemoveNoOp", "ignore_profiler_call", coin),
    ),
    "s_tir.LoopPartition": tuple(
        _cfg("s_tir.LoopPartition", f, coin)
        for f in (
            "partition_const_loop",
            "no_unroll_loop_with_extent_one",
            "unroll_loop_with_partition_hint_no_interval",
        )
    ),
    "s_tir.HoistIfThenElse": (
        ArgSpec("variant", choice(None, "basic")),
        _cfg("s_tir.HoistIfThenElse", "support_block_scope_hoisting", coin),
    ),
    "s_tir.HoistExpression": (
        _cfg("s_tir.HoistExpression", "hoisted_conditionals", lambda r: r.randrange(16)),
        _cfg("s_tir.HoistExpression", "hoisted_let_bindings", lambda r: r.randrange(8)),
    ),
    "s_tir.InjectDoubleBuffer": (_cfg("s_tir.InjectDoubleBuffer", "split_loop", choice(0, 1, 2, 4)),),
    "tirx.VectorizeLoop": (
        ArgSpec("enable_vectorize", coin),
        ArgSpec("predication", coin, "tirx.enable_buffer_level_predication"),
    ),
    "tirx.NarrowDataType": (ArgSpec("target_bits", choice(16, 32, 64)),),
    "tirx.FP8ComputeLegalize": (ArgSpec("promote_dtype", choice("float16", "float32")),),
    "s_tir.CompactBufferAllocation": (ArgSpec("is_strict", coin),),
    "s_tir.ThreadSync": (ArgSpec("storage_scope", choice("shared", "shared.dyn", "warp", "global")),),
    "s_tir.RemoveWeightLayoutRewriteBlock": (ArgSpec("skip_tensor_rewrite", coin),),
}
"""Argument samplers by pass name (passes not listed take no arguments)."""

REQUIRED_ARG_DEFAULTS: dict[str, dict[str, Any]] = {
    "tirx.NarrowDataType": {"target_bits": 32},
    "s_tir.ThreadSync": {"storage_scope": "shared"},
}
"""Values for required constructor arguments a spec leaves out."""

EXCLUDED: dict[str, str] = {
    "tirx.Apply": "takes a Python callback, not a pass of its own",
    "tirx.Filter": "takes a Python callback, not a pass of its own",
    "tirx.BindTarget": "applied automatically (llvm with llvm host) before the sequence",
    "s_tir.InjectPTXAsyncCopy": "CUDA only (rewrites shared-memory copies to cp.async)",
    "s_tir.InjectPTXLDG32": "CUDA only (ptx.ldg.32 intrinsics)",
    "s_tir.DefaultGPUSchedule": "GPU only (binds threads; no-op for llvm functions)",
    "tirx.MakePackedAPI": "the build pipeline runs it again and fails on packed IR "
    "('Cannot treat type `ir.Call` as type `ir.Expr`'): a sequence containing it never builds",
    "tirx.BF16StorageLegalize": "must run after MakePackedAPI (excluded, see there)",
    "tirx.FP8StorageLegalize": "must run after MakePackedAPI (excluded, see there)",
}
"""Passes of both modules deliberately left out, with the reason."""

LOW_WEIGHT = 0.25
GPU_ORIENTED = frozenset(
    {
        "s_tir.LowerCrossThreadReduction",
        "s_tir.LiftThreadBinding",
        "s_tir.ManifestSharedMemoryLocalStage",
        "s_tir.LowerAutoCopy",
        "s_tir.UnifyThreadBinding",
        "s_tir.InjectPermutedLayout",
        "s_tir.TransformMmaBufferLayout",
        "s_tir.InjectSoftwarePipeline",
        "s_tir.InjectVirtualThread",
        "s_tir.VerifyVTCMLimit",
        "s_tir.LowerVtcmAlloc",
        "s_tir.ThreadSync",
        "s_tir.InferFragment",
        "s_tir.LowerThreadAllreduce",
        "s_tir.MergeSharedMemoryAllocations",
        "s_tir.LowerAsyncDMA",
        "tirx.LowerWarpMemory",
        "s_tir.DecorateDeviceScope",
        "tirx.LowerTIRx",
        "tirx.TilePrimitiveDispatch",
        "tirx.LowerTIRxOpaque",
        "s_tir.RemoveWeightLayoutRewriteBlock",
    }
)
"""Passes that only act on GPU/Hexagon/TIRx constructs our mutators never create: sampled less."""

CATALOG: dict[str, PassInfo] = catalog_of(PASS_NAMES, ARGS, lambda name: LOW_WEIGHT if name in GPU_ORIENTED
                                           else 1.0)
"""Every catalogue pass by name."""


def sample_pass(rng: random.Random, names: Sequence[str] | None = None) -> PassSpec:
    """A random pass (weighted by :attr:`PassInfo.weight`) with sampled arguments."""
    return draw(CATALOG, names or PASS_NAMES, rng)


def random_sequence(rng: random.Random, min_len: int = 1, max_len: int = 50) -> list[PassSpec]:
    """A random pass sequence of length uniform in ``[min_len, max_len]``."""
    return [sample_pass(rng) for _ in range(rng.randint(min_len, max_len))]
