"""The graph kernel: an ONNX model through TVM's importer and a Relax pass sequence, built, run and
compared with TVM's default pipeline (and onnxruntime).

:func:`observe_graph` runs a :class:`~seedzer.kernel.graph.case.GraphCase`:

0. ``mutate-model``: the case's model mutations (:mod:`seedzer.kernel.graph.mutant`: MT-DLComp's
   UOC and PIOC relations, spec-edge changes, operator insertions) applied to the seed model, PIOC
   profiled on the case's inputs (a record that no longer applies is ``invalid``); then, when a
   mutation changed what the model computes, ``validate``: the specification's verdict on the mutant
   (:mod:`seedzer.kernel.onnx.validity`: onnx.checker's full check, onnxruntime, onnx.reference on
   the nodes the mutations made), a refusal making the case ``invalid`` with the refusal as reason;
1. ``import``: ``from_onnx`` (a failure of the seed model there is ``invalid``: it happens before any
   step, and the loader files it; a mutated model's is this case's exception);
2. each step of the sequence: a Relax pass ``relax.X`` (``tvm.relax.transform.X(**args)`` under the
   target) or a Relax IR mutation ``mutate.X`` (:mod:`seedzer.kernel.graph.relax_mutations`), then
   ``relax.analysis.well_formed`` on its output: an error is an ``exception`` at that step, a
   violation ``illformed`` after it (in or after a Relax mutation, Seedzer's own rewrite of IR that
   was well-formed, either is ``invalid``); after a Relax mutation also the consistency of the program
   it made (:mod:`seedzer.kernel.graph.relax_consistency`: call_tir arguments that fit their
   PrimFuncs, types TVM's inference derives), a problem it added making the case ``invalid``;
3. ``build``: ``tvm.compile``, which runs the rest of TVM's default pipeline for the target;
4. ``run`` on the Relax VM;
5. the reference. Without a spec-edge change it is TVM's default pipeline alone on the *seed* model
   (``<default>:build`` and ``<default>:run``; a failure there is the load kind's finding, so the case
   is ``invalid``), compared with the NNSmith tolerances (looser after a pass that changes floating
   results by design); the UOC/PIOC relations keep the seed's outputs, so this is both the pipeline
   and the metamorphic oracle. On a difference, onnxruntime is asked: the relations must hold there
   (the mutant's outputs equal the seed's, else ``invalid``); when it agrees with the fuzzed build,
   the default pipeline is the wrong one (a load finding: ``invalid``); after a lossy pass, an output
   ill-conditioned under float16 rounding is ``invalid`` too (``ill_conditioned_for_lossy_pass``, also for
   special inputs); else
   the case is a ``mismatch`` (comparison ``mutant-vs-seed`` for a mutated model, ``opt-vs-reference`` otherwise).
   A spec-edge change makes a new model: its reference is onnxruntime on it (``model-vs-onnxruntime``;
   after a lossy pass an ill-conditioned output is ``invalid`` there too, c53 audit d759a1482a56);
   on a difference ONNX's own reference implementation (``onnx.reference``) breaks the tie on the
   differing output: when it agrees with TVM, onnxruntime departs from the specification; when it
   agrees with neither, no two engines agree there, and when inputs moved a few ulps move the
   reference beyond the tolerance, the output is ill-conditioned there (Tan a few ulps from its
   pole, Round of a sum at a tie: :mod:`seedzer.kernel.onnx.conditioning`); all are ``invalid`` (a
   mismatch needs onnxruntime, or it alone where the reference cannot run the model); so is a
   difference on values the specification defines no result for at a node the output depends on
   (:mod:`seedzer.kernel.onnx.undefined`: DynamicQuantizeLinear of an all-zero tensor, NaN quantized
   into an integer). Every output is compared, and named as well as numbered. Differences only where
   the reference is NaN/Inf, or a build that disagrees with itself, are
   ``invalid``. A case of ``special`` inputs (:mod:`seedzer.kernel.graph.inputs`: NaN, infinities,
   signed zeros, extremes, index ends) is judged by the specification instead
   (:mod:`seedzer.kernel.graph.special`): a ``special-values`` mismatch only where onnxruntime and
   onnx.reference agree and TVM does not; an input the reference rejects (an index out of range, which
   the specification calls an error) is ``invalid``: integer inputs are checked before TVM runs them,
   for TVM's compiled indexing does not check bounds (``take``'s default fast mode is documented to
   crash on one), so no error, crash or hang on them is TVM's (the d53 audit: an
   EmbedLayerNormalization fed word ids past its table); float inputs after an error.

A :class:`~seedzer.kernel.graph.memo.GraphMemo` keeps a worker's imported modules and default outputs
across cases of one model, and builds the fuzzed module (a worker's may reuse an equal module's build).
Made of the ONNX plumbing (:mod:`seedzer.kernel.onnx.model`); depends on tvm, onnx, onnxruntime, numpy
and the kernel modules only (copied verbatim into repro.py after the ONNX plumbing, the graph case, the
model mutations and the Relax mutations).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import time
from typing import Any

import numpy as np
import onnx
from tvm import relax

from seedzer.kernel.common import (
    EXIT_DIFFERENT,
    EXIT_GONE,
    EXIT_PRESENT,
    GONE_LINE,
    MODEL_VS_ONNXRUNTIME,
    OPT_VS_REFERENCE,
    PRESENT_LINE,
    Observation,
    Stage,
    Symptom,
    arm_watchdog,
    disarm_watchdog,
    step_label,
)
from seedzer.kernel.comparison import compare, named
from seedzer.kernel.graph.case import (
    CONSISTENT,
    DEFAULT_BUILD,
    INEXACT_SLACK,
    MUTANT_VS_SEED,
    MUTATION_PREFIX,
    WELL_FORMED,
    GraphCase,
    GraphPass,
)
from seedzer.kernel.graph.feeds import case_inputs, fed_inputs, input_specs
from seedzer.kernel.graph.inputs import SPECIAL_INPUTS
from seedzer.kernel.graph.memo import GraphMemo
from seedzer.kernel.graph.mutant import apply_model_mutations
from seedzer.kernel.graph.relax_consistency import added_inconsistency
from seedzer.kernel.graph.relax_mutations import apply_mutation
from seedzer.kernel.graph.special import judge_special, locate_node, rejected_input
from seedzer.kernel.messages import moved_failure, normalize, same_failure
from seedzer.kernel.onnx.model import (
    LOSSY_ILL_CONDITIONED,
    TOLERANCES,
    Trace,
    build,
    describe,
    ill_conditioned_for_lossy_pass,
    import_model,
    make_target,
    model_bytes,
    onnx_reference_verdict,
    output_names,
    run,
)
from seedzer.kernel.onnx.runtime import JUDGED_SYMPTOMS, onnxruntime_outputs, onnxruntime_refusal, refused
from seedzer.kernel.onnx.undefined import UNDEFINED_HERE, undefined_on_values
from seedzer.kernel.onnx.validity import Validity, changed_nodes, model_validity, reference_run


# --- kernel code (everything below is copied verbatim into repro.py) ---
def make_pass(step: GraphPass) -> Any:
    """The Relax pass ``step`` names (``relax.X`` is ``tvm.relax.transform.X(**args)``)."""
    namespace, _, name = step.name.partition(".")
    if namespace != "relax" or not name or not hasattr(relax.transform, name):
        raise ValueError(f"no Relax pass {step.name!r} in tvm.relax.transform")
    return getattr(relax.transform, name)(**step.args)


def apply_pass(mod: Any, step: GraphPass, target: Any) -> Any:
    """``mod`` after the pass or Relax IR mutation ``step`` (``mutate.X``,
    :mod:`seedzer.kernel.graph.relax_mutations`), a pass run under ``target`` as ``tvm.compile`` runs its own."""
    if step.name.startswith(MUTATION_PREFIX):
        return apply_mutation(mod, step)
    with make_target(target):
        return make_pass(step)(mod)


def well_formed(mod: Any) -> None:
    """Raise TVM's own error when ``mod`` is not well-formed Relax (``relax.analysis.well_formed``)."""
    relax.analysis.well_formed(mod)


def tolerances(case: GraphCase) -> dict[str, tuple[float, float]]:
    """The comparison's ``dtype -> (rtol, atol)``: NNSmith's, loosened after an inexact pass."""
    if case.exact:
        return TOLERANCES
    return {dtype: (r * INEXACT_SLACK, a * INEXACT_SLACK) for dtype, (r, a) in TOLERANCES.items()}


def _lower(case: GraphCase, model: onnx.ModelProto, specs: tuple[Any, ...], trace: Trace, memo: GraphMemo | None,
           key: str) -> Any:
    """The imported module (inputs ``specs``) after the case's passes, or the :class:`Observation` of
    the first failure."""
    mod = memo.get(memo.imported, key) if memo is not None else None
    if mod is None:
        mod = trace.call("import", import_model, model, specs)
        if isinstance(mod, Observation) and not case.model_mutations:  # the load kind's finding
            return Observation(Symptom.INVALID, Stage.LOAD, "import",
                               f"the model does not import (the load kind's finding): {mod.message}")
        if isinstance(mod, Observation):  # a mutated model TVM's importer fails on: this case's
            return mod
        if memo is not None:
            memo.put(memo.imported, key, mod)
    for index, step in enumerate(case.passes):
        got = trace.call(step.name, apply_pass, mod, step, case.target, stage=Stage.PASS)
        if isinstance(got, Observation) and step.name.startswith(MUTATION_PREFIX):  # Seedzer's rewrite, not TVM
            return Observation(Symptom.INVALID, Stage.PASS, step.name, f"the Relax mutation does not apply to "
                               f"this module: {got.message}", step_index=index)
        if isinstance(got, Observation):
            return dataclasses.replace(got, step_index=index)
        bad = trace.call(step.name + WELL_FORMED, well_formed, got, stage=Stage.PASS)
        if isinstance(bad, Observation) and step.name.startswith(MUTATION_PREFIX):  # well-formed in, ill-formed out
            return Observation(Symptom.INVALID, Stage.PASS, step.name, f"the Relax mutation made ill-formed IR "
                               f"(Seedzer's own rewrite, not TVM): {bad.message}", step_index=index)
        if isinstance(bad, Observation):
            return Observation(Symptom.ILLFORMED, Stage.PASS, step.name, bad.message, step_index=index)
        if step.name.startswith(MUTATION_PREFIX):  # a consistent program in, a consistent program out
            wrong = trace.call(step.name + CONSISTENT, added_inconsistency, mod, got, stage=Stage.PASS)
            if wrong is not None:
                why = wrong.message if isinstance(wrong, Observation) else wrong
                return Observation(Symptom.INVALID, Stage.PASS, step.name, "the Relax mutation made an inconsistent "
                                   f"program (Seedzer's own rewrite, not TVM): {why}", step_index=index)
        mod = got
    return mod


def default_outputs(case: GraphCase, model: onnx.ModelProto, feeds: dict[str, np.ndarray], trace: Trace,
                    memo: GraphMemo | None, key: str) -> Any:
    """TVM's default pipeline's outputs on the imported model, or the ``invalid`` observation of its
    failure (a failure of the default pipeline is the load kind's finding, not the sequence's)."""
    cached = memo.get(memo.defaults, key) if memo is not None else None
    if cached is not None:
        return cached
    outputs = _default_run(case, model, feeds, trace, memo.get(memo.imported, key.split("/")[0]) if memo else None)
    if isinstance(outputs, Observation):
        return Observation(Symptom.INVALID, outputs.stage, outputs.pass_name,
                           f"TVM's default pipeline fails on the model (the load kind's finding): {outputs.message}")
    if memo is not None:
        memo.put(memo.defaults, key, outputs)
    return outputs


def _default_run(case: GraphCase, model: onnx.ModelProto, feeds: dict[str, np.ndarray], trace: Trace,
                 imported: Any) -> Any:
    """Import (unless ``imported``), build and run with TVM's default pipeline: the outputs, or the
    :class:`Observation` of the first failure."""
    if imported is None:
        imported = trace.call(step_label("import", DEFAULT_BUILD), import_model, model, case.specs)
        if isinstance(imported, Observation):
            return imported
    executable = trace.call(step_label("build", DEFAULT_BUILD), build, imported, case.target, stage=Stage.BUILD)
    if isinstance(executable, Observation):
        return executable
    return trace.call(step_label("run", DEFAULT_BUILD), run, executable, case.specs, feeds, stage=Stage.RUN)


def _judge(case: GraphCase, models: tuple[onnx.ModelProto, onnx.ModelProto], feeds: dict[str, np.ndarray],
           executable: Any, actual: list[np.ndarray], expected: list[np.ndarray], trace: Trace) -> Observation:
    """Compare the fuzzed build's outputs with TVM's default pipeline's on the seed model ``models[0]``
    (see the module docstring); ``models[1]`` is the model the case built (the mutant)."""
    seed, model = models
    limits = tolerances(case)
    diff = named(trace.call("compare", compare, expected, actual, limits, stage=Stage.COMPARE), output_names(model))
    if isinstance(diff, Observation) or diff is None:
        trace.matched = diff is None
        return diff if isinstance(diff, Observation) else Observation.ok()
    trace.matched = False
    if diff.nonfinite_reference:
        return Observation(Symptom.INVALID, Stage.COMPARE, "compare",
                           f"outputs differ only where the default pipeline gives NaN/Inf: {diff.describe()}")
    if compare(actual, run(executable, case.specs, feeds), {}) is not None:
        return Observation(Symptom.INVALID, Stage.COMPARE, "compare", "the fuzzed build is nondeterministic")
    if not case.exact and ill_conditioned_for_lossy_pass(model, feeds, diff.output, actual, expected, limits):
        return Observation(Symptom.INVALID, Stage.COMPARE, "compare", "after a lossy pass the output is "
                           f"{LOSSY_ILL_CONDITIONED}: {diff.describe()}")
    ort = trace.call("reference", onnxruntime_outputs, model, feeds, stage=Stage.COMPARE)
    if not isinstance(ort, Observation) and model is not seed:  # the relations must hold on both engines
        unsound = compare(onnxruntime_outputs(seed, feeds), ort, limits)
        if unsound is not None:
            return Observation(Symptom.INVALID, Stage.COMPARE, "compare",
                               f"a model mutation changed the outputs on onnxruntime: {unsound.describe()}")
        unsound = _unsound_on_reference(seed, model, feeds, limits)
        if unsound is not None:
            return Observation(Symptom.INVALID, Stage.COMPARE, "compare",
                               f"a model mutation changed the outputs on the ONNX reference: {unsound.describe()}")
    if isinstance(ort, Observation):
        side = "onnxruntime cannot run the model"
    elif compare(ort, expected, limits) is None:
        side = "onnxruntime agrees with the default pipeline"
    elif compare(ort, actual, limits) is None:
        return Observation(Symptom.INVALID, Stage.COMPARE, "compare", "the default pipeline is the build onnxruntime "
                           f"disagrees with (the load kind's finding): {diff.describe()}")
    else:
        side = "onnxruntime agrees with neither build"
    trace.reference = "onnxruntime"
    comparison = MUTANT_VS_SEED if model is not seed else OPT_VS_REFERENCE
    return Observation(Symptom.MISMATCH, Stage.COMPARE, "compare", f"{diff.describe()}; {side}",
                       comparison=comparison, difference=diff)


def _unsound_on_reference(seed: onnx.ModelProto, model: onnx.ModelProto, feeds: dict[str, np.ndarray],
                          limits: dict[str, Any]) -> Any:
    """How the mutant ``model``'s outputs differ from the ``seed``'s under ``onnx.reference`` (a relation whose
    constant was profiled on onnxruntime holds only where onnxruntime rounds as it did: c53 audit 93b3c9dbdcfc, its
    Sigmoid underflowing to 0 where the reference and TVM keep a tiny positive value), or None (they agree, or the
    reference cannot run one of them)."""
    try:
        before, after = reference_run(seed, feeds), reference_run(model, feeds)
    except Exception:  # the reference refusing a model decides nothing here
        return None
    return compare(before, after, limits) if before is not None and after is not None else None


def _judge_differential(case: GraphCase, model: onnx.ModelProto, feeds: dict[str, np.ndarray], executable: Any,
                        actual: list[np.ndarray], trace: Trace, specs: tuple[Any, ...],
                        known: list[np.ndarray] | None) -> Observation:
    """A model a spec-edge change or an insertion changed: its TVM build against onnxruntime on the
    same model (``known``: onnxruntime's outputs from the validity check, else run here)."""
    expected = known if known is not None else \
        trace.call("reference", onnxruntime_outputs, model, feeds, stage=Stage.COMPARE)
    if isinstance(expected, Observation):
        return Observation(Symptom.INVALID, Stage.COMPARE, "reference",
                           f"onnxruntime cannot run the mutated model: {expected.message}")
    trace.reference = "onnxruntime"
    diff = named(trace.call("compare", compare, expected, actual, tolerances(case), stage=Stage.COMPARE),
                 output_names(model))
    trace.matched = diff is None
    if diff is None or isinstance(diff, Observation):
        return diff if isinstance(diff, Observation) else Observation.ok()
    if diff.nonfinite_reference and not diff.flipped_infinities:  # an infinity of the wrong sign is a lost sign
        return Observation(Symptom.INVALID, Stage.COMPARE, "compare",
                           f"outputs differ only where onnxruntime gives NaN/Inf: {diff.describe()}")
    if compare(actual, run(executable, specs, feeds), {}) is not None:
        return Observation(Symptom.INVALID, Stage.COMPARE, "compare", "the TVM build is nondeterministic")
    if not case.exact and ill_conditioned_for_lossy_pass(model, feeds, diff.output, actual, expected, tolerances(case)):
        return Observation(Symptom.INVALID, Stage.COMPARE, "compare", "after a lossy pass the output is "
                           f"{LOSSY_ILL_CONDITIONED}: {diff.describe()}")
    verdict = trace.call("onnx-reference", onnx_reference_verdict, model, feeds, actual, expected, tolerances(case),
                         diff.output, stage=Stage.COMPARE)
    sided, side = verdict if isinstance(verdict, tuple) else ("none", "the ONNX reference implementation failed")
    if sided in ("tvm", "neither"):  # onnxruntime departs, or no two engines agree there
        return Observation(Symptom.INVALID, Stage.COMPARE, "compare", f"{side}: {diff.describe()}")
    undefined = trace.call("undefined", undefined_on_values, model, feeds, diff.output, stage=Stage.COMPARE)
    if isinstance(undefined, str):  # the specification defines no result for the values that reach it
        return Observation(Symptom.INVALID, Stage.COMPARE, "compare",
                           f"{UNDEFINED_HERE}: {undefined}: {diff.describe()}")
    if not case.passes:  # the probe's build is the case's own (TVM's default pipeline): locate the operator
        tvm_outputs = lambda probe: run(build(import_model(probe, specs), case.target), specs, feeds)  # noqa: E731
        located = locate_node(model, feeds, tolerances(case), tvm_outputs, model.graph.output[diff.output].name,
                              diff.reason)
        diff = diff if located is None else diff.located(*located)
    return Observation(Symptom.MISMATCH, Stage.COMPARE, "compare", f"{diff.describe()}; {side}",
                       comparison=MODEL_VS_ONNXRUNTIME, difference=diff)


def validity(model: onnx.ModelProto, seed: onnx.ModelProto, feeds: dict[str, np.ndarray], trace: Trace,
             memo: GraphMemo | None, key: str) -> Validity | Observation:
    """The specification's verdict on a mutant (remembered per mutant and inputs), or the observation
    of an error in the check itself."""
    found = memo.get(memo.valid, key) if memo is not None else None
    if found is None:
        found = trace.call("validate", model_validity, model, feeds, changed_nodes(seed, model), True,
                           stage=Stage.MUTATE)
        if memo is not None and isinstance(found, Validity):
            memo.put(memo.valid, key, found)
    return found


def observe_graph(case: GraphCase, trace: Trace | None = None, memo: GraphMemo | None = None) -> Observation:
    """Run the case's steps (see the module docstring): the first failure, else ``ok``. A failure on a
    model (the mutant's, else the seed's) that onnxruntime refuses to run on the case's inputs is
    ``invalid`` (:func:`seedzer.kernel.onnx.runtime.refused`).

    A crash kills the process and a hang never returns: callers bound them.
    """
    trace = trace if trace is not None else Trace()
    data = model_bytes(case)
    seed = onnx.load_model_from_string(data)
    seed_key = hashlib.sha256(data).hexdigest()[:32]
    feeds = case_inputs(case)
    model, key = seed, seed_key
    if case.model_mutations:
        model = trace.call("mutate-model", apply_model_mutations, seed, case.model_mutations, feeds,
                           stage=Stage.MUTATE)
        if isinstance(model, Observation):  # a record that no longer fits (e.g. the reducer dropped its base)
            return Observation(Symptom.INVALID, Stage.MUTATE, "mutate-model",
                               f"a model mutation does not apply: {model.message}")
        key = hashlib.sha256(model.SerializeToString()).hexdigest()[:32]
    specs = input_specs(case, model)
    known = None
    if case.mutates_semantics:
        verdict = validity(model, seed, feeds, trace, memo, f"{key}/{case.input_seed}")
        if isinstance(verdict, Observation) or not verdict.valid:
            why = verdict.message if isinstance(verdict, Observation) else verdict.refusal
            return Observation(Symptom.INVALID, Stage.MUTATE, "validate", f"the mutated model is not valid: {why}")
        known = verdict.outputs
    trace.operators = sorted({node.op_type for node in model.graph.node})
    trace.model, trace.feeds = model, feeds
    observed = _run_case(case, (seed, model), (seed_key, key), (feeds, specs, known), trace, memo)
    if observed.symptom not in JUDGED_SYMPTOMS or known is not None:  # a valid mutant: onnxruntime ran it
        return observed
    refusal = memo.get(memo.refusals, key) if memo is not None else None
    if refusal is None:
        refusal = onnxruntime_refusal(model, feeds) or ""
        if memo is not None:
            memo.put(memo.refusals, key, refusal)
    return refused(observed, refusal or None)


def _run_case(case: GraphCase, models: tuple[onnx.ModelProto, onnx.ModelProto], keys: tuple[str, str],
              inputs: tuple[dict[str, np.ndarray], tuple[Any, ...], list[np.ndarray] | None], trace: Trace,
              memo: GraphMemo | None) -> Observation:
    """Import, the steps, build, run and the comparison of the case's model ``models[1]`` (the seed
    ``models[0]`` mutated; ``keys`` their memo keys; ``inputs``: the feeds, the import's input specs
    and the outputs the validity check already knows): the first failure, else ``ok``."""
    (seed, model), (seed_key, key), (feeds, specs, known) = models, keys, inputs
    fed = fed_inputs(case, model, feeds)
    mod = _lower(case, model, specs, trace, memo, key)
    if isinstance(mod, Observation):
        return mod
    executable = trace.call("build", memo.build if memo is not None else build, mod, case.target, stage=Stage.BUILD)
    if isinstance(executable, Observation):
        return executable
    indexed = case.input_mode == SPECIAL_INPUTS and any(np.asarray(v).dtype.kind in "iu" for v in fed.values())
    if indexed and (refusal := _rejected(model, fed)) is not None:  # an index out of range may crash TVM's run
        return refusal
    actual = trace.call("run", run, executable, specs, fed, stage=Stage.RUN)
    if isinstance(actual, Observation) and case.input_mode == SPECIAL_INPUTS and not indexed:
        actual = _rejected(model, fed) or actual  # a float input the reference refuses (an undefined setting)
    if isinstance(actual, Observation):
        return actual
    if case.input_mode == SPECIAL_INPUTS:
        limits = tolerances(case)
        lossy = None if case.exact else \
            (lambda index, got, spec: ill_conditioned_for_lossy_pass(model, fed, index, got, spec, limits))
        return judge_special(model, fed, actual, lambda: run(executable, specs, fed), limits, trace,
                             tvm_outputs=lambda probe: run(build(import_model(probe, specs), case.target), specs, fed),
                             lossy=lossy)
    if case.differential:
        return _judge_differential(case, model, feeds, executable, actual, trace, specs, known)
    reference_key = f"{seed_key}/{case.input_seed}/{json.dumps(case.target, sort_keys=True)}"
    expected = default_outputs(case, seed, feeds, trace, memo, reference_key)
    if isinstance(expected, Observation):
        return expected
    return _judge(case, (seed, model), feeds, executable, actual, expected, trace)


def _rejected(model: onnx.ModelProto, fed: dict[str, np.ndarray]) -> Observation | None:
    """``invalid`` when the ONNX reference (or onnxruntime, for an operator the reference lacks) rejects the
    special inputs ``fed``: TVM's run on them is not judged."""
    rejected = rejected_input(model, fed)
    if rejected is None:
        return None
    return Observation(Symptom.INVALID, Stage.RUN, "run", f"special values: the ONNX reference rejects the input "
                       f"({rejected}): TVM's run on it is not judged (its compiled indexing does not check bounds: a "
                       "crash, a hang or an error there is not TVM's)")


def same_graph_failure(expected: Observation, observed: Observation) -> bool:
    """Whether ``observed`` is the graph failure ``expected`` describes: the same symptom at the same
    step with the same normalized message; a mismatch must also differ the same way."""
    if observed.symptom is not expected.symptom or observed.pass_name != expected.pass_name:
        return False
    if expected.symptom is Symptom.MISMATCH:
        if not (expected.difference and observed.difference):
            return observed.comparison == expected.comparison
        return expected.difference.reason.split(":")[0] == observed.difference.reason.split(":")[0]
    if expected.symptom is Symptom.INVALID:
        return normalize(observed.message) == normalize(expected.message)
    return same_failure(expected, observed)


def main(case_json: dict[str, Any]) -> int:
    """Reproduce a graph case: exit 1 while the expected failure happens (a crash dies by its signal,
    a hang exits 1 once it outlives ``timeout``), 0 once every step passes and the outputs agree
    with TVM's default pipeline, 2 on a different failure."""
    case = GraphCase.from_json(case_json)
    expected = case.expected or Observation.ok()
    arm_watchdog(expected.symptom, case.timeout)
    start = time.monotonic()
    print("passes: " + (", ".join(p.label() for p in case.passes) or "(none: TVM's default pipeline alone)"))
    observed = observe_graph(case, Trace(on_step=lambda step: print(f"step {step}", flush=True)))
    disarm_watchdog()
    print(f"expected: {describe(expected)}")
    print(f"observed: {describe(observed)}")
    print(f"({time.monotonic() - start:.1f} s)")
    if expected.symptom is not Symptom.OK and same_graph_failure(expected, observed):
        print(PRESENT_LINE)
        return EXIT_PRESENT
    if moved_failure(expected, observed):
        print(f"the same failure now shows at {observed.pass_name} (expected at {expected.pass_name})")
        print(PRESENT_LINE)
        return EXIT_PRESENT
    if observed.symptom is Symptom.OK:
        print(f"{GONE_LINE} every step passed and the outputs agree with TVM's default pipeline")
        return EXIT_GONE
    print("a different failure")
    return EXIT_DIFFERENT
