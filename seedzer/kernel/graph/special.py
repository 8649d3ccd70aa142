"""The special-values oracle: a graph case fed NaN, +-Inf, -0, denormals, extremes and out-of-range
indices (:mod:`seedzer.kernel.graph.inputs`), judged by the ONNX specification (TVM-free).

TVM's outputs are compared with onnxruntime's; on a difference (NaN and infinity positions and signs,
signed zeros, finite values beyond the tolerances), ``onnx.reference`` is asked. The difference is a
``mismatch`` of comparison :data:`SPECIAL_VALUES` only when onnxruntime and the reference agree with
each other (on every NaN and infinity; a signed zero counts where both give it) and TVM does not (its
own oracle, ``special-values`` in ``oracles.enabled``). Otherwise nothing is judged: the reference
rejecting the input (an out-of-range index) leaves nothing to judge (the graph kernel does not even run
TVM on it); a zero whose sign alone differs at an operator that sums (:data:`SUMMING`) is not judged;
the engines disagreeing, or an operator whose result the specification leaves undefined on such values
or disputes (:data:`seedzer.kernel.onnx.undefined.UNDEFINED`: a float-to-integer cast, NaN ordering, NaN
quantized into an integer, interpolation beside a NaN), make the case ``invalid``; so does a sum whose
overflowed partial sums make it NaN in one engine and an infinity in another (:func:`overflowed_sum`).
Each output is judged on its own: the engines disagreeing on one output, or an undefined operator on
which only other outputs depend, leaves the rest judged (an audit of campF found three NaN bugs of TVM's
dropped because one side output was not judgeable). Both engines run in a forked
child (:func:`~seedzer.kernel.onnx.validity.isolated`): an engine that crashes on the input makes the
case ``invalid``, never TVM's finding.

Depends on numpy, onnx and the kernel modules before it only (copied verbatim into repro.py).
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from typing import Any

import numpy as np
import onnx

from seedzer.kernel.common import SPECIAL_VALUES, Observation, Stage, Symptom
from seedzer.kernel.comparison import SPECIAL_REASONS, Difference, compare, differing, signed_zero_difference
from seedzer.kernel.graph.model_mutations import FLOAT_TYPES
from seedzer.kernel.onnx.conditioning import PERTURBATION, has_floating_input, ill_conditioned, moved_inputs
from seedzer.kernel.onnx.model import LOSSY_ILL_CONDITIONED, upstream
from seedzer.kernel.onnx.runtime import onnxruntime_outputs
from seedzer.kernel.onnx.undefined import undefined_on_specials
from seedzer.kernel.onnx.validity import EngineCrash, first_line, isolated, reference_run

# --- kernel code (everything below is copied verbatim into repro.py) ---
ACCUMULATING = frozenset({"Conv", "ConvTranspose", "Gemm", "MatMul", "Einsum", "ReduceSum", "ReduceMean",
                          "ReduceSumSquare", "ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceProd",
                          "CumSum", "AveragePool", "GlobalAveragePool", "LpPool", "GlobalLpPool", "LpNormalization",
                          "MeanVarianceNormalization", "InstanceNormalization", "LayerNormalization",
                          "GroupNormalization"})
"""Operators that sum many terms: IEEE 754 leaves the order of the sum to the implementation, and once
finite terms overflow (extremes multiplied by weights) a partial sum becomes +inf or -inf depending on
that order, so the result is NaN in one engine and an infinity in another (the study's audit: a 1x1 Conv
of +FLT_MAX and -FLT_MAX channels, -inf in onnxruntime and the reference, NaN in TVM, +inf exactly)."""
SUMMING = ACCUMULATING | {"Sum", "Mean"}
"""Operators whose result is a sum: the sign of a zero result is the accumulator's start (+0 + -0 = +0), which
the specification leaves open and the engines do not agree on (the d53 audit: Mean of -0 is +0 in TVM, -0 in
onnxruntime; onnx.reference gives +0 for Sum, ReduceSum and ReduceMean of -0)."""
SIGNED_ZEROS = "signed zeros"
"""The reason of a difference only in the sign of zeros (:func:`~seedzer.kernel.comparison.signed_zero_difference`)."""
def _differ(expected: list[np.ndarray], actual: list[np.ndarray], limits: dict[str, Any],
            witness: list[np.ndarray] | None = None) -> Difference | None:
    """NaN- and infinity-aware :func:`compare`, then signed zeros (only those ``witness`` confirms)."""
    return compare(expected, actual, limits) or signed_zero_difference(expected, actual, witness)


def guarded(fn: Callable[..., Any], model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> Any:
    """``fn(model, feeds)`` in a forked child: its value, or the :class:`EngineCrash` (returned, not
    raised) when the child died; its error is raised."""
    try:
        return isolated(fn, model, feeds)
    except EngineCrash as exc:
        return exc


def _engine(step: str, fn: Callable[..., Any], model: onnx.ModelProto, feeds: dict[str, np.ndarray],
            trace: Any) -> Any:
    """An engine's outputs as the step ``step``: the outputs, an :class:`EngineCrash`, or the
    :class:`Observation` of the error it raised."""
    return trace.call(step, guarded, fn, model, feeds, stage=Stage.COMPARE)


def judge_special(model: onnx.ModelProto, feeds: dict[str, np.ndarray], actual: list[np.ndarray],
                  rerun: Callable[[], list[np.ndarray]], limits: dict[str, Any], trace: Any,
                  engines: tuple[Callable[..., Any], Callable[..., Any]] = (onnxruntime_outputs, reference_run),
                  tvm_outputs: TvmOutputs | None = None,
                  lossy: Callable[[int, list[np.ndarray], list[np.ndarray]], bool] | None = None) -> Observation:
    """TVM's ``actual`` outputs on special inputs, judged by the specification (see the module
    docstring); ``rerun`` runs TVM's build again (a nondeterministic build is not judged); ``engines``
    are onnxruntime's and the reference's runs; ``tvm_outputs`` builds and runs a model with TVM on the
    same inputs (to name the operator at fault, :func:`locate_operator`); ``lossy(index, actual, spec)``,
    given when a lossy pass ran, says whether output ``index`` is ill-conditioned under its precision loss
    (then it is not judged: ``ill_conditioned_for_lossy_pass``); nor is an output that the finite inputs
    moved a few ulps move beyond the tolerance (:data:`SPECIAL_ILL_CONDITIONED`)."""

    def invalid(why: str) -> Observation:
        return Observation(Symptom.INVALID, Stage.COMPARE, "compare", f"special values: {why}")

    ort = _engine("reference", engines[0], model, feeds, trace)
    if isinstance(ort, EngineCrash):
        return invalid(f"onnxruntime crashed on the input, which is not TVM's failure ({ort})")
    trace.reference = "onnxruntime"
    if not isinstance(ort, Observation) and _differ(ort, actual, limits) is None:
        trace.matched = True
        return Observation.ok()
    trace.matched = False
    spec = _engine("onnx-reference", engines[1], model, feeds, trace)
    if isinstance(spec, EngineCrash):
        return invalid(f"the ONNX reference crashed on the input, which is not TVM's failure ({spec})")
    if isinstance(spec, Observation):
        return invalid("the ONNX reference rejects the input (TVM's run on it is not judged): "
                       f"{spec.message.splitlines()[0][:300]}")
    if spec is None:
        return invalid("the ONNX reference does not implement an operator of the model: not judged")
    if isinstance(ort, Observation):
        return invalid("onnxruntime rejects the input that the ONNX reference runs: "
                       f"{ort.message.splitlines()[0][:200]}")
    locate = (lambda output, reason: locate_node(model, feeds, limits, tvm_outputs, output, reason)) \
        if tvm_outputs is not None else None

    def conditioning(index: int) -> str | None:
        if lossy is not None and lossy(index, actual, spec):
            return f"after a lossy pass output {index} is {LOSSY_ILL_CONDITIONED}: not judged"
        if has_floating_input(feeds) and ill_conditioned(lambda sign: _moved_reference(engines[1], model, feeds, sign,
                                                                                        index),
                                                         spec[index], actual[index], ort[index], limits):
            return f"output {index} is {SPECIAL_ILL_CONDITIONED}: not judged"
        return None

    return _judge_outputs(model, spec, ort, actual, rerun, limits, invalid, locate, conditioning)


SPECIAL_ILL_CONDITIONED = (f"ill-conditioned there (the finite inputs moved by a relative {PERTURBATION:.2g}, the "
                           "extremes spared, move the ONNX reference beyond the tolerance)")
"""Why an output is not judged on special inputs when a few ulps of its finite inputs decide it (``Floor`` of
``Tan`` near its pole: issue 57's A/B audit, 718f9554fdf8)."""


def _moved_reference(reference: Callable[..., Any], model: onnx.ModelProto, feeds: dict[str, np.ndarray], sign: int,
                     index: int) -> Any:
    """The reference's output ``index`` on ``feeds`` moved a few ulps (:func:`moved_inputs`, extremes spared)."""
    outputs = reference(model, moved_inputs(feeds, sign, spare_extremes=True))
    if outputs is None:
        raise LookupError("the reference does not implement an operator of the model")
    return outputs[index]


def _unjudged(model: onnx.ModelProto, index: int, spec: list[np.ndarray], ort: list[np.ndarray],
              limits: dict[str, Any]) -> str | None:
    """Why output ``index`` cannot be judged on special values (None: it can): the engines disagree on
    it, or a node it depends on is undefined on such values or disputed."""
    disagree = compare([spec[index]], [ort[index]], limits)
    if disagree is not None:
        return f"onnxruntime and the ONNX reference disagree on output {index} ({disagree.describe()}): not judged"
    return undefined_on_specials(model, upstream(model, model.graph.output[index].name))


def _judge_outputs(model: onnx.ModelProto, spec: list[np.ndarray], ort: list[np.ndarray], actual: list[np.ndarray],
                   rerun: Callable[[], list[np.ndarray]], limits: dict[str, Any],
                   invalid: Callable[[str], Observation],
                   locate: Callable[[str, str], tuple[str, str] | None] | None,
                   conditioning: Callable[[int], str | None]) -> Observation:
    """Output by output: TVM against the specification where both engines agree on that output and
    nothing it depends on is undefined on special values (one output the engines disagree on, or an
    undefined operator on a side branch, leaves the others judged)."""
    reasons = []
    for index, (expected, got) in enumerate(zip(spec, actual, strict=False)):
        diff = _differ([expected], [got], limits, [ort[index]] if index < len(ort) else None)
        if diff is None:
            continue
        why = _unjudged(model, index, spec, ort, limits)
        if why is not None:
            reasons.append(why)
            continue
        if _differ(actual, rerun(), {}) is not None:
            return invalid("the TVM build is nondeterministic")
        ill = conditioning(index)
        if ill is not None:  # a few ulps of the inputs (or a lossy pass's rounding) decide the output there
            reasons.append(ill)
            continue
        name = model.graph.output[index].name
        producer = next((n.op_type for n in model.graph.node if name in n.output), None)
        located = locate(name, diff.reason) if locate is not None else None
        operator = located[0] if located is not None else producer
        if diff.reason == SIGNED_ZEROS and operator in SUMMING:
            reasons.append(f"{operator} sums, and output {index} differs only in the sign of zeros, which the start "
                           "of the sum decides: not judged")
            continue
        if overflowed_sum(operator, expected, got, limits):
            reasons.append(f"{operator} sums terms in an order IEEE 754 leaves open, and output {index} differs only "
                           "between NaN and infinities (an overflowed partial sum): not judged")
            continue
        diff = dataclasses.replace(diff, output=index, operator=operator, name=name)
        diff = diff.located(*located) if located is not None else diff
        return Observation(Symptom.MISMATCH, Stage.COMPARE, "compare", f"{diff.describe()}; onnxruntime and the ONNX "
                           "reference agree with each other, not with TVM", comparison=SPECIAL_VALUES, difference=diff)
    return invalid(reasons[0]) if reasons else Observation.ok()


def overflowed_sum(operator: str | None, expected: np.ndarray, got: np.ndarray, limits: dict[str, Any]) -> bool:
    """Whether the difference of ``got`` (TVM) from ``expected`` is one the order of a sum decides:
    ``operator`` (the one located at fault) is :data:`ACCUMULATING` and every differing element is
    non-finite on both sides (NaN against an infinity, or infinities of opposite signs). A NaN lost to a
    finite value, or a finite value wrong, is still judged."""
    e, a = np.asarray(expected), np.asarray(got)
    if operator not in ACCUMULATING or e.shape != a.shape or e.dtype.kind != "f" or a.dtype.kind != "f":
        return False
    rtol, atol = limits.get(str(e.dtype), (0.0, 0.0))
    bad = differing(e, a, rtol, atol)
    return bool(bad.any()) and bool(np.all(~np.isfinite(e[bad]) & ~np.isfinite(a[bad])))


TvmOutputs = Callable[[onnx.ModelProto], list[np.ndarray]]
"""TVM's outputs of a model, built and run on a case's inputs (:func:`locate_operator` probes with it)."""


def _with_outputs(model: onnx.ModelProto, nodes: list[onnx.NodeProto],
                  outputs: list[onnx.ValueInfoProto]) -> onnx.ModelProto:
    """A copy of ``model`` with ``nodes`` added and ``outputs`` appended to its outputs."""
    probe = onnx.ModelProto()
    probe.CopyFrom(model)
    probe.graph.node.extend(nodes)
    probe.graph.output.extend(outputs)
    return probe


def probe_model(model: onnx.ModelProto) -> onnx.ModelProto | None:
    """``model`` with every floating-point tensor its nodes compute (typed by shape inference) as a
    graph output too, or None when shape inference fails or there is none to add."""
    try:
        inferred = onnx.shape_inference.infer_shapes(model)
    except Exception:  # shape inference raises several types
        return None
    typed = {vi.name: vi for vi in inferred.graph.value_info}
    present = {o.name for o in model.graph.output}
    added: list[onnx.ValueInfoProto] = []
    for node in model.graph.node:
        for name in node.output:
            info = typed.get(name)
            if info is not None and name not in present and info.type.tensor_type.elem_type in FLOAT_TYPES \
                    and info.type.tensor_type.HasField("shape"):
                added.append(info)
                present.add(name)
    return _with_outputs(model, [], added) if added else None


def locate_operator(model: onnx.ModelProto, feeds: dict[str, np.ndarray], limits: dict[str, Any],
                    tvm_outputs: TvmOutputs, output: str | None = None, reason: str | None = None) -> str | None:
    """The operator :func:`locate_node` locates, or None."""
    located = locate_node(model, feeds, limits, tvm_outputs, output, reason)
    return located[0] if located is not None else None


def locate_node(model: onnx.ModelProto, feeds: dict[str, np.ndarray], limits: dict[str, Any],
                tvm_outputs: TvmOutputs, output: str | None = None,
                reason: str | None = None) -> tuple[str, str] | None:
    """The operator and the reason its own output differs, of the first node (in graph order) whose
    floating-point output TVM computes differently from onnxruntime on ``feeds`` while every input it
    reads agrees: where a NaN or an infinity is lost, not where the difference surfaces. With ``output``,
    only the nodes that output depends on (a difference on a side branch is another output's); with ``reason`` (a
    :class:`~seedzer.kernel.comparison.Difference`'s, e.g. ``nan positions``), a node that differs that
    way first, its inputs neither that way nor by another special value (a product's signed zero upstream
    of a lost NaN is not where the NaN was lost; a Max that gave -FLT_MAX for -inf, whose product with 0 is
    then -0 instead of NaN, is), else any difference. Both runs are of :func:`probe_model`, each in a forked
    child (a crash names nothing); None when nothing is located that way. A node reading a sequence another
    node made wrongly names that maker (:func:`sequence_maker`)."""
    probe = probe_model(model)
    if probe is None:
        return None
    try:
        theirs, ours = guarded(onnxruntime_outputs, probe, feeds), isolated(tvm_outputs, probe)
    except Exception:  # TVM or onnxruntime refusing the probe, or TVM's child dying: nothing located
        return None
    names = [o.name for o in probe.graph.output]
    if isinstance(theirs, EngineCrash) or len(theirs) != len(names) or len(ours) != len(names):
        return None
    found = {name: d for name, e, a in zip(names, theirs, ours, strict=True) if (d := _differ([e], [a], limits))}
    nodes = upstream(model, output) if output is not None else list(model.graph.node)
    special = {name for name, d in found.items() if d.reason in SPECIAL_REASONS}
    for wanted in (reason, None) if reason else (None,):
        differs = {name for name, d in found.items() if wanted is None or d.reason == wanted}
        blocked = differs | special  # an input with another special value wrong is wrong too (not a signed zero)
        first = next((n for n in nodes if differs & set(n.output) and not blocked & set(n.input)), None)
        if first is not None:
            made = sequence_maker(model, feeds, limits, tvm_outputs, first, nodes)
            return made or (first.op_type, next(found[o].reason for o in first.output if o in differs))
    return None


SEQUENCE_MAKERS = frozenset({"SequenceConstruct", "SequenceInsert", "SequenceErase", "SplitToSequence"})
"""Operators that make an ONNX sequence: a tensor read out of one (SequenceAt, ConcatFromSequence) may be wrong
because the sequence was made wrongly (c53, d53: SequenceInsert's negative position off by one, filed to SequenceAt,
which read the right slot of a wrong sequence)."""


def _sequence_types(model: onnx.ModelProto) -> dict[str, int]:
    """The sequence-valued names of ``model`` (shape inference's), with their elements' tensor type."""
    try:
        inferred = onnx.shape_inference.infer_shapes(model)
    except Exception:  # shape inference raises several types
        return {}
    infos = [*inferred.graph.value_info, *inferred.graph.output]
    return {vi.name: vi.type.sequence_type.elem_type.tensor_type.elem_type for vi in infos
            if vi.type.HasField("sequence_type")}


def sequence_maker(model: onnx.ModelProto, feeds: dict[str, np.ndarray], limits: dict[str, Any],
                   tvm_outputs: TvmOutputs, reader: onnx.NodeProto, nodes: list[onnx.NodeProto]
                   ) -> tuple[str, str] | None:
    """When ``reader`` (the node located so far) reads a sequence that nodes of :data:`SEQUENCE_MAKERS` made:
    the first of them (in graph order) whose sequence TVM makes differently from onnxruntime while the sequence
    it was given (if any) agrees, with the reason; None otherwise. The sequences are probed element by element
    (SequenceAt at each position onnxruntime's SequenceLength gives), each run in a forked child; a probe TVM
    cannot import (a sequence of another length) decides nothing."""
    types = _sequence_types(model)
    if not any(name in types for name in reader.input):
        return None
    makers = [n for n in nodes if n.op_type in SEQUENCE_MAKERS and n.output and n.output[0] in types]
    made = [n.output[0] for n in makers]
    if not made:
        return None
    counted = _with_outputs(model, [onnx.helper.make_node("SequenceLength", [m], [f"{m}#length"]) for m in made],
                            [onnx.helper.make_tensor_value_info(f"{m}#length", onnx.TensorProto.INT64, [])
                             for m in made])
    lengths = guarded(onnxruntime_outputs, counted, feeds)
    if isinstance(lengths, EngineCrash):
        return None
    added: list[onnx.NodeProto] = []
    outputs: list[onnx.ValueInfoProto] = []
    slots: dict[str, list[int]] = {}
    for name, length in zip(made, lengths[-len(made):], strict=True):
        for k in range(int(length)):
            at, out = f"{name}#at{k}", f"{name}#{k}"
            position = onnx.numpy_helper.from_array(np.array(k, np.int64))
            added += [onnx.helper.make_node("Constant", [], [at], value=position),
                      onnx.helper.make_node("SequenceAt", [name, at], [out])]
            outputs.append(onnx.helper.make_tensor_value_info(out, types[name], None))
            slots.setdefault(name, []).append(len(model.graph.output) + len(outputs) - 1)
    probe = _with_outputs(model, added, outputs)
    try:
        theirs, ours = guarded(onnxruntime_outputs, probe, feeds), isolated(tvm_outputs, probe)
    except Exception:  # TVM refusing the probe (a sequence of another length), or its child dying
        return None
    if isinstance(theirs, EngineCrash) or len(theirs) != len(ours):
        return None
    wrong = {name: d for name, at in slots.items()
             if (d := next((x for i in at if (x := _differ([theirs[i]], [ours[i]], limits))), None)) is not None}
    first = next((n for n in makers if n.output[0] in wrong and not set(n.input) & set(wrong)), None)
    return (first.op_type, wrong[first.output[0]].reason) if first is not None else None


def rejected_input(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> str | None:
    """Why the ONNX reference rejects ``feeds`` (one line), or None when it runs them; where it implements
    not every operator of the model (a contrib operator such as EmbedLayerNormalization), onnxruntime
    decides. A crash of the engine's child decides nothing (None)."""
    try:
        ran = guarded(reference_run, model, feeds)
        if ran is None:
            guarded(functools.partial(onnxruntime_outputs, quiet=True), model, feeds)
    except Exception as exc:  # the engine's error, re-raised from its child
        return first_line(exc)
    return None
