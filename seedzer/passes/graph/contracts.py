"""Relax pass contracts: the IR form each graph-level pass needs, as phases earlier passes establish.

A graph test case runs an ONNX model imported by ``tvm.relax.frontend.onnx.from_onnx`` through a
fuzzed sequence of Relax passes, then ``tvm.compile``'s default pipeline (library dispatch,
LegalizeOps, AnnotateTIROpPattern, FoldConstant, FuseOps, FuseTIR, dataflow lowering, finalization).
Unlike the TIR level there is no fixed pipeline to insert into: the fuzzed passes run first, in their
order, so a pass's contract is stated over the *phases* the earlier kept passes established:

- :data:`LEGALIZED`: LegalizeOps ran (high-level ``relax.*`` ops became ``call_tir``);
- :data:`ANNOTATED`: AnnotateTIROpPattern ran (PrimFuncs carry ``op_pattern``);
- :data:`GROUPED`: FuseOps ran and FuseTIR has not yet (primitive Relax functions wait for FuseTIR);
- :data:`NO_DATAFLOW`: ToNonDataflow ran and ConvertToDataflow has not since (no dataflow blocks).

An imported model starts in no phase (high-level ops inside one dataflow block). Each contract was
read from TVM's source (``python/tvm/relax/transform/transform.py`` docstrings, ``src/relax/transform``,
the backend pipelines, ``tests/python/relax``) and is recorded in its ``source``. TVM-free.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from seedzer.kernel.graph.case import MUTATION_PREFIX
from seedzer.seed import PassSpec

LEGALIZED = "legalized"
ANNOTATED = "annotated"
GROUPED = "grouped"
NO_DATAFLOW = "no_dataflow"
PHASES = (LEGALIZED, ANNOTATED, GROUPED, NO_DATAFLOW)
"""Every phase a contract may refer to."""

INITIAL: frozenset[str] = frozenset()
"""The phases of a freshly imported ONNX model (none)."""

PREFIX = "relax."
"""Prefix of every Relax pass name (``"relax.FoldConstant"``)."""


@dataclass(frozen=True)
class RelaxContract:
    """What a Relax pass needs (phases that must hold, phases that must not), what it does to the
    phases, whether it keeps floating results bit-for-bit comparable (``exact``), and where in TVM's
    source the contract comes from."""

    name: str
    needs: frozenset[str] = frozenset()
    forbids: frozenset[str] = frozenset()
    establishes: frozenset[str] = frozenset()
    clears: frozenset[str] = frozenset()
    exact: bool = True
    source: str = ""

    def violation(self, phases: frozenset[str]) -> str | None:
        """Why the pass is out of contract on IR in ``phases`` (None: it is in contract)."""
        missing = sorted(self.needs - phases)
        if missing:
            return f"{self.name} needs {', '.join(missing)} (established by {', '.join(_BY[m] for m in missing)})"
        present = sorted(self.forbids & phases)
        if present:
            return f"{self.name} must run before {', '.join(_BY[p] for p in present)} ({', '.join(present)})"
        return None

    def after(self, phases: frozenset[str]) -> frozenset[str]:
        """The phases once the pass ran on IR in ``phases``."""
        return (phases - self.clears) | self.establishes


_BY = {
    LEGALIZED: "relax.LegalizeOps",
    ANNOTATED: "relax.AnnotateTIROpPattern",
    GROUPED: "relax.FuseOps without relax.FuseTIR",
    NO_DATAFLOW: "relax.ToNonDataflow",
}

_HIGH = frozenset({LEGALIZED})
_DF = frozenset({NO_DATAFLOW})


def _c(name: str, source: str, *, needs: frozenset[str] = frozenset(), forbids: frozenset[str] = frozenset(),
       establishes: frozenset[str] = frozenset(), clears: frozenset[str] = frozenset(), exact: bool = True,
       grouped_ok: bool = False) -> RelaxContract:
    """A contract; unless ``grouped_ok``, the pass may not run between FuseOps and FuseTIR."""
    full = PREFIX + name
    return RelaxContract(full, needs, forbids | (frozenset() if grouped_ok else {GROUPED}), establishes, clears,
                         exact, source)


_T = "python/tvm/relax/transform/transform.py"
_CPU = "python/tvm/relax/backend/cpu_generic/pipeline.py legalize_passes"
_HIGH_SRC = "acts on high-level relax ops (pattern on relax.* ops): before LegalizeOps"

_CONTRACTS: tuple[RelaxContract, ...] = (
    # TVM's own legalization chain (cpu_generic legalize_passes, zero_pipeline).
    _c("LegalizeOps", f"{_CPU}: first of the chain; legalize_ops.cc", establishes=_HIGH, grouped_ok=True),
    _c("AnnotateTIROpPattern", f"{_CPU}: after LegalizeOps; annotate_tir_op_pattern.cc reads PrimFuncs",
       needs=_HIGH, establishes=frozenset({ANNOTATED}), grouped_ok=True),
    _c("FuseOps", f"{_CPU}: after AnnotateTIROpPattern; {_T}: groups bindings in dataflow blocks",
       needs=frozenset({ANNOTATED}), forbids=_DF, establishes=frozenset({GROUPED})),
    _c("FuseTIR", f"{_CPU}: right after FuseOps; fuse_tir.cc fuses the primitive functions FuseOps made",
       needs=frozenset({GROUPED}), clears=frozenset({GROUPED}), grouped_ok=True),
    _c("FoldConstant", f"{_CPU}: between AnnotateTIROpPattern and FuseOps; any form (evaluates call_tir too), "
       "but not between FuseOps and FuseTIR: it folds inside the primitive functions FuseOps made, and "
       "fuse_tir.cc rejects them ('Relax.Constant is not supported in primitive functions')"),
    # Module hygiene passes: any form.
    _c("CanonicalizeBindings", "static_shape_tuning_pipeline: before zero_pipeline; any form", grouped_ok=True),
    _c("DeadCodeElimination", "adreno legalize_passes: after FuseTIR; any form", grouped_ok=True),
    _c("EliminateCommonSubexpr", "eliminate_common_subexpr.cc: any function; any form", grouped_ok=True),
    _c("Normalize", "adreno legalize_passes: before and after legalization; any form", grouped_ok=True),
    _c("NormalizeGlobalVar", f"{_T}: renames GlobalVars; any form"),
    _c("TopologicalSort", "topological_sort.cc: reorders bindings of dataflow blocks; any form", grouped_ok=True),
    _c("RealizeVDevice", "realize_vdevice.cc: propagates vdevice annotations; any form", grouped_ok=True),
    _c("ConvertToDataflow", f"{_T}: wraps pure bindings in dataflow blocks (undoes ToNonDataflow)",
       clears=_DF),
    _c("ToNonDataflow", "dataflow_lower_passes: after FuseTIR; removes dataflow blocks (later dataflow-only "
       "passes become no-ops until ConvertToDataflow)", establishes=_DF),
    # Passes on internal (private) functions: never change main's signature.
    _c("InlinePrivateFunctions", "inline_functions.cc: inlines private relax functions; before FuseOps groups"),
    _c("LambdaLift", "lambda_lift.cc: lifts local functions to the module; any form"),
    _c("ExpandTupleArguments", "expand_tuple_arguments.cc: internal functions only"),
    _c("RemoveUnusedOutputs", "remove_unused_outputs.cc: internal functions only"),
    _c("RemoveUnusedParameters", "remove_unused_parameters.cc: internal functions only"),
    # High-level graph rewrites: before legalization (they match relax.* ops).
    _c("DecomposeOpsForInference", f"static_shape_tuning_pipeline and adreno: first; {_HIGH_SRC}", forbids=_HIGH),
    _c("ConvertLayout", f"adreno legalize_passes: before LegalizeOps; a DataflowBlockPass; {_HIGH_SRC}",
       forbids=_HIGH | _DF),
    _c("ToMixedPrecision", f"{_T}: fp32 relax ops in dataflow blocks; {_HIGH_SRC}", forbids=_HIGH | _DF,
       exact=False),
    _c("FoldBatchnormToConv2D", f"fold_batch_norm_to_conv2d_for_inference.py: conv2d+batch_norm; {_HIGH_SRC}",
       forbids=_HIGH, exact=False),
    _c("CombineParallelMatmul", f"combine_parallel_matmul.cc: relax.matmul in dataflow blocks; {_HIGH_SRC}",
       forbids=_HIGH | _DF, exact=False),
    _c("FuseTransposeMatmul", f"fuse_transpose_matmul.py: permute_dims+matmul; {_HIGH_SRC}", forbids=_HIGH | _DF),
    _c("ReorderPermuteDimsAfterConcat", f"reorder_permute_dims_after_concat.cc; {_HIGH_SRC}", forbids=_HIGH),
    _c("ReorderTakeAfterMatmul", f"reorder_take_after_matmul.cc; {_HIGH_SRC}", forbids=_HIGH),
    _c("AdjustMatmulOrder", f"adjust_matmul_order.cc: reassociates matmul chains; {_HIGH_SRC}", forbids=_HIGH,
       exact=False),
    _c("ExpandMatmulOfSum", f"expand_matmul_of_sum.cc: distributes matmul over add; {_HIGH_SRC}",
       forbids=_HIGH, exact=False),
    _c("RemoveRedundantReshape", f"remove_redundant_reshape.py: reshape chains; {_HIGH_SRC}", forbids=_HIGH),
    _c("FastMathTransform", f"fast_math.py: relax.nn.softmax and friends to fast variants; {_HIGH_SRC}. "
       "Known TVM 0.27 bug, not part of the contract: visit_call_ reads call.op.name and raises AttributeError "
       "on any call of a GlobalVar (a Relax function calling another)", forbids=_HIGH, exact=False),
    _c("DataflowUseInplaceCalls", f"{_T}: legalizes elementwise relax ops into call_tir_inplace inside dataflow "
       "blocks itself; before LegalizeOps", forbids=_HIGH | _DF),
    _c("OptimizeLayoutTransform", "optimize_layout_transform.py: relax.layout_transform pairs around call_tir "
       "(after ConvertLayout); any form"),
    # Passes on legalized IR (call_tir and PrimFuncs).
    _c("RewriteDataflowReshape", f"dataflow_lower_passes: after FuseTIR; {_T}: reshape-like call_tir, only in "
       "dataflow blocks", needs=_HIGH, forbids=_DF),
    _c("SpecializePrimFuncBasedOnCallSite", "adreno legalize_passes: after FuseTIR; reads call_tir call sites",
       needs=_HIGH),
    _c("AttachAttrLayoutFreeBuffers", "static_shape_tuning_pipeline (cpu_weight_prepack): after zero_pipeline; "
       "PrimFuncs called with constants", needs=_HIGH),
    _c("SplitLayoutRewritePreproc", "static_shape_tuning_pipeline (cpu_weight_prepack): after tuning; PrimFuncs "
       "with layout-rewrite preprocessing blocks", needs=_HIGH),
)

_SOURCE = "seedzer/kernel/graph/relax_mutations.py"
_BEFORE_LEGALIZE = frozenset({LEGALIZED, GROUPED})


def _mutation(name: str, why: str, forbids: frozenset[str] = _BEFORE_LEGALIZE) -> RelaxContract:
    return RelaxContract(MUTATION_PREFIX + name, forbids=forbids, exact=True, source=f"{_SOURCE}: {why}")


_MUTATION_CONTRACTS: tuple[RelaxContract, ...] = (
    _mutation("SymbolicShapes", "re-normalizes high-level relax ops over symbolic input dims; before LegalizeOps "
              "(call_tir PrimFuncs have static buffers)"),
    _mutation("SplitDataflow", "splits a dataflow block in two; any form with dataflow blocks (a no-op after "
              "ToNonDataflow)", forbids=frozenset({GROUPED, NO_DATAFLOW})),
    _mutation("DuplicateFunction", "main calls a private copy, or a run of bindings is outlined into a private "
              "function; tested on high-level relax: before LegalizeOps"),
    _mutation("TupleOutputs", "appends TupleGetItem/Tuple bindings after main's blocks; any form",
              forbids=frozenset()),
    _mutation("PrimArgs", "a scalar constant operand of a high-level binary op (relax.add, ...) becomes an R.Prim "
              "argument of an outlined function; before LegalizeOps (no such ops after)"),
    _mutation("LiftConstants", "main's constants become parameters of a private copy bound at the call site; "
              "before LegalizeOps"),
)

CONTRACTS: dict[str, RelaxContract] = {c.name: c for c in (*_CONTRACTS, *_MUTATION_CONTRACTS)}
"""Every step the fuzzer may run, by full name: Relax passes (``"relax.FoldConstant"``) and Relax IR
mutations (``"mutate.SplitDataflow"``). The mutations were written and tested on high-level Relax (an
ONNX import): after legalization the calls are ``call_tir`` of PrimFuncs with static buffers, where
symbolic shapes, scalar operands and constants no longer mean what they expect, so most forbid
:data:`LEGALIZED`; none runs between FuseOps and FuseTIR."""


def is_mutation(name: str) -> bool:
    """Whether step ``name`` is a Relax IR mutation (``mutate.<Name>``) rather than a Relax pass."""
    return name.startswith(MUTATION_PREFIX)


def relax_contract(name: str) -> RelaxContract | None:
    """The contract of Relax pass ``name`` (full name; None: the fuzzer never runs it)."""
    return CONTRACTS.get(name)


def phases_after(passes: Sequence[PassSpec], start: frozenset[str] = INITIAL) -> frozenset[str]:
    """The phases established by the placeable passes of ``passes`` starting from ``start``."""
    phases = start
    for _, spec in _walk(passes, start)[0]:
        phases = CONTRACTS[spec.name].after(phases)
    return phases


def _walk(passes: Sequence[PassSpec], start: frozenset[str]
          ) -> tuple[list[tuple[int, PassSpec]], list[tuple[int, str]]]:
    kept: list[tuple[int, PassSpec]] = []
    dropped: list[tuple[int, str]] = []
    phases = start
    for i, spec in enumerate(passes):
        contract = CONTRACTS.get(spec.name)
        why = f"{spec.name} is no Relax pass the fuzzer runs" if contract is None else contract.violation(phases)
        if why is not None:
            dropped.append((i, why))
            continue
        assert contract is not None
        kept.append((i, spec))
        phases = contract.after(phases)
    return kept, dropped


def placeable_relax(passes: Sequence[PassSpec], start: frozenset[str] = INITIAL) -> list[tuple[int, PassSpec]]:
    """``(index, spec)`` of the passes in contract at their position, given the phases established by
    the earlier kept ones (a dropped pass establishes nothing)."""
    return _walk(passes, start)[0]


def plan_relax(passes: Sequence[PassSpec], start: frozenset[str] = INITIAL) -> list[PassSpec]:
    """The passes the kernel runs: the placeable ones, in order."""
    return [spec for _, spec in placeable_relax(passes, start)]


def out_of_contract(passes: Sequence[PassSpec], start: frozenset[str] = INITIAL) -> list[tuple[int, str]]:
    """``(index, one-line reason)`` of every pass a plan drops."""
    return _walk(passes, start)[1]


def exact_sequence(passes: Sequence[PassSpec], start: frozenset[str] = INITIAL) -> bool:
    """Whether no planned pass legitimately changes floating results (else compare loosely)."""
    return all(CONTRACTS[spec.name].exact for spec in plan_relax(passes, start))


def fits_at(passes: Sequence[PassSpec], index: int, spec: PassSpec) -> bool:
    """Whether inserting ``spec`` at ``index`` keeps every pass of ``passes`` and ``spec`` in contract
    (given that ``passes`` were all in contract)."""
    candidate = [*passes[:index], spec, *passes[index:]]
    return not out_of_contract(candidate)


def _p(name: str, **args: object) -> PassSpec:
    return PassSpec(PREFIX + name, tuple(sorted(args.items())))


_LEGALIZE_CHAIN = [_p("LegalizeOps"), _p("AnnotateTIROpPattern"), _p("FoldConstant"), _p("FuseOps"), _p("FuseTIR")]

PIPELINE_ORDERS: dict[str, list[PassSpec]] = {
    "default-legalize": list(_LEGALIZE_CHAIN),
    "zero": list(_LEGALIZE_CHAIN),
    "fold-first": [_p("FoldConstant"), *_LEGALIZE_CHAIN],
    "static-shape-tuning": [_p("DecomposeOpsForInference"), _p("CanonicalizeBindings"), *_LEGALIZE_CHAIN],
    "static-shape-tuning-prepack": [_p("DecomposeOpsForInference"), _p("CanonicalizeBindings"), *_LEGALIZE_CHAIN,
                                    _p("AttachAttrLayoutFreeBuffers"), _p("SplitLayoutRewritePreproc"),
                                    _p("FoldConstant")],
    "adreno-like": [_p("DecomposeOpsForInference"),
                    _p("ConvertLayout", desired_layouts={"relax.nn.conv2d": ["NHWC", "OHWI"]}),
                    _p("Normalize"), _p("FoldConstant"), *_LEGALIZE_CHAIN, _p("DeadCodeElimination"),
                    _p("SpecializePrimFuncBasedOnCallSite"), _p("Normalize")],
    "dataflow-lower": [*_LEGALIZE_CHAIN, _p("RewriteDataflowReshape"), _p("ToNonDataflow")],
}
"""The orders TVM's own pipelines run, as named seed sequences: ``zero`` (``relax.pipeline.zero_pipeline``)
and ``default-legalize`` (``backend.cpu_generic.legalize_passes``) are the same chain; ``fold-first``
folds constants before legalizing; ``static-shape-tuning[-prepack]`` is
``relax.pipeline.static_shape_tuning_pipeline`` without tuning and without LiftTransformParams
(excluded); ``adreno-like`` is ``backend.adreno.legalize_passes`` with CPU layouts and without the
Adreno-only passes; ``dataflow-lower`` adds the in-contract part of ``dataflow_lower_passes``."""
