"""The Relax (graph-level) pass catalogue: names, argument samplers and weights (every step the
catalogue holds has a contract: :data:`seedzer.passes.graph.contracts.CONTRACTS`).

TVM-free. A pass is named ``"relax.<X>"`` where ``X`` is an attribute of ``tvm.relax.transform``; the
kernel builds it as ``getattr(tvm.relax.transform, X)(**args)`` inside ``with tvm.target.Target("llvm")``
and runs the sequence before ``tvm.compile``'s default pipeline. The catalogue holds every pass of the
installed wheel a user could apply before ``tvm.compile`` on a CPU module; :data:`EXCLUDED` lists the
others with the reason, and :data:`NOT_PASSES` the module's other public names (pass infrastructure),
so a test checks that every name of ``tvm.relax.transform`` is accounted for.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from seedzer.passes.catalog import ArgSpec, PassInfo, catalog_of, choice, coin, draw
from seedzer.passes.graph.contracts import CONTRACTS
from seedzer.seed import PassSpec

_LAYOUTS: tuple[dict[str, list[str]], ...] = (
    {"relax.nn.conv2d": ["NHWC", "OHWI"]},
    {"relax.nn.conv2d": ["NHWC", "HWIO"]},
    {"relax.nn.conv2d": ["NCHW", "OIHW"]},
    {"relax.nn.conv2d": ["NCHW4c", "OIHW4o"]},
    {"relax.nn.conv2d": ["NHWC4c", "OHWI4o"]},
    {"relax.nn.conv2d": ["NCHW4c", "OIHW4o", "NCHW4c"]},
    {"relax.nn.conv2d": ["NCHW2n4c", "OIHW2i4o"]},
    {"relax.nn.conv2d": ["NHWC", "OHWI"], "relax.nn.conv1d": ["NWC", "OWI"],
     "relax.nn.conv2d_transpose": ["NHWC", "HWOI"]},
)
"""``ConvertLayout`` targets, from ``tests/python/relax/test_transform_convert_layout*.py``: every layout is
explicit (Relay's ``"default"`` kernel layout is not understood by Relax: ``InternalError: Invalid layout
default``), a third entry is the output layout (else the data layout)."""


def _layouts(rng: random.Random) -> dict[str, list[str]]:
    chosen = rng.choice(_LAYOUTS)
    return {op: list(layouts) for op, layouts in chosen.items()}


_SKIP_OPS = ("relax.nn.conv2d", "relax.matmul", "relax.add", "relax.reshape", "relax.nn.relu",
             "relax.concat", "relax.permute_dims")


def _skip_ops(rng: random.Random) -> list[str]:
    return sorted(rng.sample(_SKIP_OPS, rng.randint(1, 2)))


def _seed(rng: random.Random) -> int:
    """An index seed: the mutation takes it modulo its number of sites."""
    return rng.randrange(0, 1 << 16)


MUTATION_ARGS: dict[str, tuple[ArgSpec, ...]] = {
    "mutate.SymbolicShapes": (ArgSpec("input", choice(-1, 0, 0, 1, 2), required=True),
                              ArgSpec("axes", _seed, required=True), ArgSpec("share", coin)),
    "mutate.SplitDataflow": (ArgSpec("index", _seed, required=True),),
    "mutate.DuplicateFunction": (ArgSpec("mode", choice("call", "outline"), required=True),
                                 ArgSpec("index", _seed, required=True), ArgSpec("length", choice(1, 2, 3, 5))),
    "mutate.TupleOutputs": (ArgSpec("depth", choice(0, 1, 2, 3)), ArgSpec("unpack", coin)),
    "mutate.PrimArgs": (ArgSpec("index", _seed, required=True),),
    "mutate.LiftConstants": (ArgSpec("index", _seed, required=True), ArgSpec("all", coin)),
}
"""Argument samplers by mutation name (every value JSON-able)."""

MUTATION_WEIGHTS: dict[str, float] = {
    "mutate.SymbolicShapes": 1.5,
    "mutate.SplitDataflow": 0.75,
    "mutate.DuplicateFunction": 1.0,
    "mutate.TupleOutputs": 0.5,
    "mutate.PrimArgs": 0.75,
    "mutate.LiftConstants": 1.0,
}
"""Sampling weights: symbolic shapes reach the most new code (dynamic-shape legalization and VM shape
lowering); tuple repacking only touches main's tail."""

ARGS: dict[str, tuple[ArgSpec, ...]] = {
    "relax.LegalizeOps": (ArgSpec("skip_ops", _skip_ops), ArgSpec("enable_warning", coin)),
    "relax.FuseOps": (ArgSpec("fuse_opt_level", choice(-1, 0, 1, 2, 3, 4)),),
    "relax.EliminateCommonSubexpr": (ArgSpec("call_only", coin),),
    "relax.ConvertToDataflow": (ArgSpec("min_size", choice(1, 2, 3, 5)),),
    "relax.TopologicalSort": (ArgSpec("order", choice("depth-first", "breadth-first")),
                              ArgSpec("direction", choice("from-inputs", "from-outputs"))),
    "relax.DeadCodeElimination": (ArgSpec("entry_functions", choice(["main"])),),
    "relax.DecomposeOpsForInference": (ArgSpec("func_name", choice("main")),),
    "relax.ConvertLayout": (ArgSpec("desired_layouts", _layouts, required=True),),
    "relax.ToMixedPrecision": (ArgSpec("out_dtype", choice("float32")),),
    **MUTATION_ARGS,
}
"""Argument samplers by pass name (passes not listed take no arguments we can express in JSON)."""

LOW_WEIGHT = 0.25
RARELY_ACTIVE = frozenset({
    "relax.SplitLayoutRewritePreproc",  # needs meta-schedule layout-rewrite blocks
    "relax.OptimizeLayoutTransform",  # needs layout_transform pairs (after ConvertLayout)
    "relax.RealizeVDevice",  # needs vdevice annotations, which imports never make
    "relax.NormalizeGlobalVar",
    "relax.SpecializePrimFuncBasedOnCallSite",  # vdevice-driven: a no-op on one CPU device
    "relax.LambdaLift",  # ONNX imports have no local functions (If/Loop aside)
})
"""Passes that seldom find something to do on an imported ONNX model: sampled less."""

HEAVY_WEIGHT = 2.0
CORE = frozenset({"relax.LegalizeOps", "relax.AnnotateTIROpPattern", "relax.FuseOps", "relax.FuseTIR",
                  "relax.FoldConstant"})
"""TVM's own legalization chain: sampled more, so later passes find their phases established."""


def _weight(name: str) -> float:
    """A step's sampling weight: a mutation's own, else by how often the pass finds something to do."""
    return MUTATION_WEIGHTS.get(name, LOW_WEIGHT if name in RARELY_ACTIVE else HEAVY_WEIGHT if name in CORE else 1.0)


RELAX_CATALOG: dict[str, PassInfo] = catalog_of(sorted(CONTRACTS), ARGS, _weight)
"""Every catalogue step by full name: the Relax passes and the Relax IR mutations (``mutate.*``)."""

RELAX_PASS_NAMES: tuple[str, ...] = tuple(RELAX_CATALOG)
"""Every catalogue pass name, sorted."""

_CALLABLE = "takes Python objects (callables, tensors, PrimFuncs, patterns) JSON cannot express"
_VM = "VM lowering/finalize phase: tvm.compile runs it; running it before would run it twice"
_SIGNATURE = "changes main's signature: the VM could not call it with the model's inputs"
_BYOC = "BYOC: acts only on composite/external functions FuseOpsByPattern or RunCodegen make"
_GPU = "GPU only"

EXCLUDED: tuple[tuple[str, str], ...] = (
    ("AlterOpImpl", _CALLABLE),
    ("AttachExternModules", _CALLABLE + " (runtime modules)"),
    ("BindParams", _CALLABLE + " (weights)"),
    ("BindSymbolicVars", "binds symbolic shape vars by name: narrows the shapes main accepts"),
    ("FuseOpsByPattern", _CALLABLE + " (fusion patterns)"),
    ("SplitCallTIRByPattern", _CALLABLE + " (PrimFunc patterns, codegen callback)"),
    ("UpdateParamType", _CALLABLE + " (a type callback); changes main's signature"),
    ("UpdateVDevice", _CALLABLE + " (a VDevice)"),
    ("CallTIRRewrite", _VM),
    ("StaticPlanBlockMemory", _VM),
    ("LowerAllocTensor", _VM),
    ("KillAfterLastUse", _VM),
    ("VMShapeLower", _VM),
    ("LowerRuntimeBuiltin", _VM),
    ("ComputePrimValue", _VM),
    ("AttachGlobalSymbol", _VM),
    ("VMBuiltinLower", _VM),
    ("RemovePurityChecking", "dataflow lowering phase (dataflow_lower_passes, right before CallTIRRewrite)"),
    ("RewriteCUDAGraph", _GPU + " (CUDA graphs)"),
    ("IPCAllReduceRewrite", _GPU + " (multi-GPU all-reduce)"),
    ("LowerGPUIPCAllocStorage", _GPU + " (multi-GPU IPC memory)"),
    ("Gradient", "training (needs a function name and gradient targets; adds functions)"),
    ("DecomposeOpsForTraining", "training form of batch_norm/layer_norm"),
    ("LiftTransformParams", _SIGNATURE),
    ("BundleModelParams", _SIGNATURE),
    ("LazyGetInput", _SIGNATURE),
    ("LazySetOutput", _SIGNATURE),
    ("LazyTransformParams", _SIGNATURE),
    ("AllocateWorkspace", _BYOC + " (workspace of external functions); changes their signature"),
    ("MergeCompositeFunctions", _BYOC),
    ("RunCodegen", _BYOC + " (external codegen)"),
    ("MetaScheduleApplyDatabase", "meta-schedule: needs a tuning database on disk"),
    ("MetaScheduleTuneIRMod", "meta-schedule tuning: minutes per task, needs params and a work dir"),
    ("MetaScheduleTuneTIR", "meta-schedule tuning: minutes per task, needs a work dir"),
)
"""Passes of ``tvm.relax.transform`` deliberately left out (attribute name, one-line reason)."""

NOT_PASSES: tuple[str, ...] = ("DataflowBlockPass", "FunctionPass", "FusionPattern", "PatternCheckContext",
                               "dataflowblock_pass", "function_pass")
"""Public names of ``tvm.relax.transform`` that are pass infrastructure, not passes."""


def sample_relax_pass(rng: random.Random, names: Sequence[str] | None = None) -> PassSpec:
    """A random catalogue pass (weighted by :attr:`PassInfo.weight`), or one of ``names``, with
    sampled arguments."""
    return draw(RELAX_CATALOG, names or RELAX_PASS_NAMES, rng)
