"""ONNX model plumbing shared by the load and graph kernels: a model through TVM's importer, build and VM.

A model's bytes (embedded in a case or a file beside the running script), random inputs from a seed,
the TVM target, ``from_onnx``, ``tvm.compile`` and a run on the Relax VM, the references
(onnxruntime, then ``onnx.reference``, then stored outputs) and the :class:`Trace` that announces, times
and runs each step, turning an error into an :class:`~seedzer.kernel.common.Observation`. The load
kernel (:mod:`seedzer.kernel.load.observe`) and the graph kernel (:mod:`seedzer.kernel.graph.observe.observe`)
are made of these.

Depends on tvm, onnx, onnxruntime, numpy and the shared kernel modules only (copied verbatim into repro.py).
"""

from __future__ import annotations

import base64
import contextlib
import dataclasses
import json
import os
import sys
import time
import traceback
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import onnx
import tvm
from tvm import relax
from tvm.relax.frontend.onnx import from_onnx

from seedzer.kernel.common import (
    IMPORTER_LIMIT,
    IMPORTER_LIMITS,
    OUT_OF_MEMORY,
    Observation,
    Stage,
    Symptom,
    error_text,
    tvm_frames,
)
from seedzer.kernel.comparison import compare
from seedzer.kernel.messages import is_out_of_memory, key_line
from seedzer.kernel.onnx.conditioning import (
    LOSSY_PERTURBATION,
    PERTURBATION,
    has_floating_input,
    ill_conditioned,
    moved_constants,
    moved_inputs,
    rounded_to_half,
)
from seedzer.kernel.onnx.inputs import UnsupportedInput, check_input_types
from seedzer.kernel.onnx.runtime import onnxruntime_outputs
from seedzer.kernel.onnx.validity import isolated

# --- kernel code (everything below is copied verbatim into repro.py) ---
TOLERANCES: dict[str, tuple[float, float]] = {"float16": (1e-2, 1e-2), "bfloat16": (1e-2, 1e-2),
                                               "float32": (1e-2, 1e-3), "float64": (1e-5, 1e-7)}
"""``dtype -> (rtol, atol)`` of floating outputs (NNSmith's); integers and booleans must be equal."""
INPUT_SEED = 20240601
"""Default seed of the random inputs."""
Spec = tuple[str, str, tuple[int, ...]]
"""One graph input: name, numpy dtype name, concrete shape."""


def model_bytes(case: Any) -> bytes:
    """The case's model (a loader or graph case): embedded, or the file beside the running script."""
    if case.model:
        return base64.b64decode(case.model)
    here = os.path.dirname(os.path.abspath(sys.argv[0] or "."))
    with open(os.path.join(here, str(case.model_file)), "rb") as handle:
        return handle.read()


def random_inputs(specs: Sequence[Spec], seed: int) -> dict[str, np.ndarray]:
    """Inputs for ``specs`` from ``seed``: floats uniform in [-2, 2), signed integers in [-3, 3],
    unsigned in [0, 3] (index-like inputs stay in range for small tensors), booleans fair coins."""
    rng = np.random.default_rng(seed)
    feeds: dict[str, np.ndarray] = {}
    for name, dtype, shape in specs:
        kind, size = np.dtype(dtype).kind, list(shape)
        value = (rng.random(size) < 0.5 if kind == "b" else rng.integers(0, 4, size=size) if kind == "u"
                 else rng.integers(-3, 4, size=size) if kind == "i" else rng.uniform(-2.0, 2.0, size=size))
        feeds[name] = np.asarray(value).astype(dtype)
    return feeds


def make_target(spec: Any) -> Any:
    """A TVM target from a kind name, a JSON object text or a dict."""
    if isinstance(spec, str) and spec.lstrip().startswith("{"):
        spec = json.loads(spec)
    return tvm.target.Target(spec)


def is_unsupported(exc: BaseException) -> bool:
    """True for an error by which the importer says it does not support something (an operator, an
    attribute value, a dynamic input: :data:`~seedzer.kernel.common.IMPORTER_LIMITS`) and for an input
    type it does not take (:class:`~seedzer.kernel.onnx.inputs.UnsupportedInput`): importer
    limitations, not bugs."""
    if isinstance(exc, (UnsupportedInput, NotImplementedError)) \
            or type(exc).__name__ in ("OpNotImplemented", "OpAttributeUnImplemented"):
        return True
    text = str(exc).lower()
    return any(fragment.lower() in text for fragment in IMPORTER_LIMITS)


def import_model(model: onnx.ModelProto, specs: Sequence[Spec]) -> Any:
    """The Relax module TVM's ONNX importer makes of ``model`` with the specs' shapes and dtypes (an
    input of a type it does not take is refused first: ``UnsupportedInput``)."""
    check_input_types((name, dtype) for name, dtype, _ in specs)
    return from_onnx(model, shape_dict={n: list(s) for n, _, s in specs}, dtype_dict={n: d for n, d, _ in specs})


def build(mod: Any, target: Any = "llvm") -> Any:
    """``tvm.compile`` of a Relax module (TVM's default pipelines) for ``target``."""
    return tvm.compile(mod, target=make_target(target))


def flatten(value: Any) -> list[np.ndarray]:
    """VM results (a tensor, a scalar or nested tuples of them) as a flat list of numpy arrays."""
    if hasattr(value, "numpy"):
        return [np.asarray(value.numpy())]
    if isinstance(value, (int, float, bool, np.generic)):
        return [np.asarray(value)]
    return [array for item in value for array in flatten(item)]


def run(executable: Any, specs: Sequence[Spec], feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    """Run ``main`` of a built module in the Relax VM on the CPU, inputs in graph order."""
    vm = relax.VirtualMachine(executable, tvm.cpu())
    return flatten(vm["main"](*[tvm.runtime.tensor(np.asarray(feeds[n], order="C")) for n, _, _ in specs]))


def output_names(model: onnx.ModelProto) -> list[str]:
    """The names of ``model``'s outputs, in order (what a difference names its output by)."""
    return [o.name for o in model.graph.output]


def upstream(model: onnx.ModelProto, output: str) -> list[onnx.NodeProto]:
    """The nodes ``output`` depends on (its producer and theirs, in graph order; control-flow
    subgraphs' outer inputs not followed)."""
    producer = {o: i for i, n in enumerate(model.graph.node) for o in n.output if o}
    seen: set[int] = set()
    todo = [output]
    while todo:
        index = producer.get(todo.pop())
        if index is None or index in seen:
            continue
        seen.add(index)
        todo.extend(name for name in model.graph.node[index].input if name)
    return [n for i, n in enumerate(model.graph.node) if i in seen]


def output_model(model: onnx.ModelProto, index: int) -> onnx.ModelProto:
    """``model`` computing its output ``index`` alone: the nodes it depends on (:func:`upstream`), every
    input and initializer kept."""
    sub = onnx.ModelProto()
    sub.CopyFrom(model)
    out = model.graph.output[index]
    del sub.graph.node[:]
    sub.graph.node.extend(upstream(model, out.name))
    del sub.graph.output[:]
    sub.graph.output.append(out)
    return sub


def onnx_reference_outputs(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    """Outputs of ``model`` under ``onnx.reference`` (pure Python: the specification's executable
    reference, slow on big models)."""
    from onnx.reference import ReferenceEvaluator

    names = {i.name for i in model.graph.input}
    return [np.asarray(v) for v in ReferenceEvaluator(model).run(None, {k: v for k, v in feeds.items() if k in names})]


REFERENCE_SIDES = ("tvm", "onnxruntime", "neither", "none")
"""Whom ``onnx.reference`` sides with when TVM and onnxruntime differ: TVM (onnxruntime departs from the
specification), onnxruntime, neither (the outputs are ill-conditioned or unspecified there: the reference
agrees with neither, or moves beyond the tolerance under inputs moved a few ulps, see
:mod:`~seedzer.kernel.onnx.conditioning`), none (it cannot run the model)."""


def onnx_reference_verdict(model: onnx.ModelProto, feeds: dict[str, np.ndarray], actual: list[np.ndarray],
                           expected: list[np.ndarray], limits: dict[str, Any],
                           output: int | None = None) -> tuple[str, str]:
    """TVM's ``actual`` outputs differ from onnxruntime's ``expected``: ask ``onnx.reference``, the tie-breaker
    at the specification's edges (where onnxruntime departs from it too, e.g. a backward Slice whose
    ``ends`` is INT64_MAX). Compared on the differing ``output`` only where it is given (another output
    may be ill-conditioned for all three), computed by its own nodes (:func:`output_model`: an operator
    the reference lacks elsewhere in the model does not keep it from judging). Returns whom it sides
    with (:data:`REFERENCE_SIDES`) and a note on what it said."""
    spec: list[np.ndarray] | None = None
    index = output if output is not None and 0 <= output < min(len(model.graph.output), len(actual),
                                                                len(expected)) else None
    judged = model
    if index is not None:  # the differing output's own nodes: an operator the reference lacks elsewhere does not count
        with contextlib.suppress(Exception):  # the reference implementation raises many types
            alone = output_model(model, index)
            spec = onnx_reference_outputs(alone, feeds)
            judged = alone
        actual, expected = [actual[index]], [expected[index]]
    if spec is None:
        try:
            spec = onnx_reference_outputs(model, feeds)
        except Exception as exc:  # the reference implementation raises many types
            return "none", f"the ONNX reference implementation cannot run the model ({type(exc).__name__})"
        spec = [spec[index]] if index is not None else spec
    if compare(spec, actual, limits) is None:
        return "tvm", "onnxruntime departs from the ONNX reference implementation, which agrees with TVM"
    if compare(spec, expected, limits) is None:
        if index is not None:
            position = 0 if judged is not model else index
            if has_floating_input(feeds) and ill_conditioned(
                    lambda sign: onnx_reference_outputs(judged, moved_inputs(feeds, sign))[position],
                    spec[0], actual[0], expected[0], limits):
                return "neither", ("the output is ill-conditioned there: inputs moved by a relative "
                                   f"{PERTURBATION:.2g} move the ONNX reference implementation beyond the tolerance")
        return "onnxruntime", "the ONNX reference implementation agrees with onnxruntime"
    return "neither", "the ONNX reference implementation agrees with neither"


LOSSY_ILL_CONDITIONED = ("ill-conditioned there (inputs and constants moved by a float16 ulp, intermediate values "
                         "rounded to float16, move the ONNX reference beyond the tolerance)")
"""Why an output :func:`ill_conditioned_for_lossy_pass` finds ill-conditioned is not judged."""


def ill_conditioned_for_lossy_pass(model: onnx.ModelProto, feeds: dict[str, np.ndarray], index: int,
                                   actual: list[np.ndarray], expected: list[np.ndarray],
                                   limits: dict[str, Any]) -> bool:
    """After a lossy pass (``ToMixedPrecision`` rounds inputs and constants to float16), whether output
    ``index``, where the fuzzed build's ``actual`` and the default pipeline's ``expected`` differ, is
    ill-conditioned: inputs and constants moved by a float16 ulp (:data:`LOSSY_PERTURBATION`), and every
    intermediate value rounded to float16 (:func:`rounded_to_half`), move ``onnx.reference``'s output beyond
    the tolerance there (``Round`` of a constant near a ``.5`` tie, or of a sum float16 holds as one).
    False when the reference cannot compute it."""
    if not (0 <= index < min(len(model.graph.output), len(actual), len(expected))):
        return False
    try:
        alone = output_model(model, index)
        spec = onnx_reference_outputs(alone, feeds)[0]
    except Exception:  # the reference implementation raises many types
        return False
    half = rounded_to_half(alone)  # the Cast pairs it adds are the same whichever way the constants move

    def moved(sign: int) -> Any:
        return onnx_reference_outputs(moved_constants(half, sign, LOSSY_PERTURBATION),
                                      moved_inputs(feeds, sign, LOSSY_PERTURBATION))[0]

    return ill_conditioned(moved, spec, actual[index], expected[index], limits)


def reference_outputs(model: onnx.ModelProto, feeds: dict[str, np.ndarray], stored: dict[str, np.ndarray] | None = None
                      ) -> tuple[list[np.ndarray] | None, str | None, dict[str, str]]:
    """The first reference that runs: onnxruntime, ``onnx.reference``, then the stored outputs.
    Returns the outputs (None when none could), the engine's name and the errors of those that failed."""
    errors: dict[str, str] = {}
    for engine, fn in (("onnxruntime", onnxruntime_outputs), ("onnx.reference", onnx_reference_outputs)):
        try:
            return fn(model, feeds), engine, errors
        except Exception as exc:  # both engines raise many types
            errors[engine] = f"{type(exc).__name__}: {key_line(str(exc))}"
    names = ["output:" + o.name for o in model.graph.output]
    if stored and all(n in stored for n in names):
        return [stored[n] for n in names], "stored", errors
    return None, None, errors


SMALL_SHARE = 64
"""A model is *small* when every tensor it has, together, takes at most this share of the address space
(1/64: 128 MiB under the workers' 8 GiB): a TVM worker's own peak on kilobyte models is about 1.7 GiB,
and TVM and onnxruntime each hold a few copies of a model's tensors, so such a model cannot exhaust the
address space by its size. A failed allocation (``std::bad_alloc``, ``MemoryError``) on a small model is
an allocation TVM asked for wrongly (ConvertLayout's InferLayoutSqueeze indexing a layout string at
-1): TVM's failure, judged like any error."""


def tensor_bytes(model: onnx.ModelProto) -> int | None:
    """The bytes of every tensor of ``model``'s main graph together (inputs, initializers, outputs and
    the intermediate tensors shape inference types, shapes computed from constants propagated), or None
    when one of them has no static shape (its size is not known: such a model is never *small*)."""
    try:
        inferred = onnx.shape_inference.infer_shapes(model, data_prop=True)
    except Exception:  # shape inference raises several types
        return None
    infos = {vi.name: vi for vi in [*inferred.graph.input, *inferred.graph.value_info, *inferred.graph.output]}
    names = {o for n in model.graph.node for o in n.output if o} | {i.name for i in model.graph.input} | \
        {o.name for o in model.graph.output}
    typed: list[tuple[int, list[int]]] = [(i.data_type, list(i.dims)) for i in model.graph.initializer]
    for name in names - {i.name for i in model.graph.initializer}:
        tensor = infos[name].type.tensor_type if name in infos else None
        if tensor is None or not tensor.HasField("shape") or not tensor.elem_type:
            return None
        typed.append((tensor.elem_type, [d.dim_value if d.HasField("dim_value") else -1 for d in tensor.shape.dim]))
    if any(d < 0 for _, dims in typed for d in dims):
        return None
    return sum(int(np.prod(dims, dtype=np.int64)) * onnx.helper.tensor_dtype_to_np_dtype(elem).itemsize
               for elem, dims in typed)


def measured_bytes(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> int | None:
    """The bytes of every tensor of ``model``'s main graph together as onnxruntime computes them on ``feeds`` (each
    node's outputs made graph outputs, run in a forked child): the size of a model whose shapes only its data
    decides (an Expand to a computed shape). None when onnxruntime cannot run it (a child past the address space
    dies: such a model is never *small*)."""
    try:
        inferred = onnx.shape_inference.infer_shapes(model)
    except Exception:  # shape inference raises several types
        return None
    typed = {vi.name: vi.type.tensor_type.elem_type for vi in [*inferred.graph.value_info, *inferred.graph.output]}
    probe = onnx.ModelProto()
    probe.CopyFrom(model)
    present = {o.name for o in model.graph.output}
    for name in (o for n in model.graph.node for o in n.output if o and o not in present):
        if not typed.get(name):
            return None
        probe.graph.output.append(onnx.helper.make_tensor_value_info(name, typed[name], None))
        present.add(name)
    try:
        outputs = isolated(onnxruntime_outputs, probe, feeds, True)
    except Exception:  # onnxruntime's refusal, or its child dying
        return None
    return sum(int(np.asarray(a).nbytes) for a in [*outputs, *feeds.values()]) + \
        sum(int(np.prod(list(i.dims), dtype=np.int64)) * onnx.helper.tensor_dtype_to_np_dtype(i.data_type).itemsize
            for i in model.graph.initializer)


def address_space() -> int:
    """This process's address-space limit (RLIMIT_AS), else the machine's physical memory."""
    import resource

    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    if soft not in (resource.RLIM_INFINITY, -1) and soft > 0:
        return int(soft)
    return int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))


def model_bytes_known(model: onnx.ModelProto | None, feeds: dict[str, np.ndarray] | None = None) -> int | None:
    """The bytes of ``model``'s tensors: by their static shapes (:func:`tensor_bytes`), else as onnxruntime computes
    them on ``feeds`` (:func:`measured_bytes`); None when unknown (no model, or shapes not static and no feeds)."""
    if model is None:
        return None
    size = tensor_bytes(model)
    return measured_bytes(model, feeds) if size is None and feeds is not None else size


def small_model(model: onnx.ModelProto | None, feeds: dict[str, np.ndarray] | None = None) -> bool:
    """Whether ``model``'s tensors together (on ``feeds`` when its shapes are not all static) take at most
    1/:data:`SMALL_SHARE` of the address space (False when unknown)."""
    return fits(model_bytes_known(model, feeds))


def fits(size: int | None) -> bool:
    """Whether tensors of ``size`` bytes take at most 1/:data:`SMALL_SHARE` of the address space (None: unknown, no)."""
    return size is not None and size * SMALL_SHARE <= address_space()


def out_of_memory_text(exc: BaseException, size: int | None) -> str:
    """The reason of a failed allocation on a model of ``size`` bytes of tensors (None: not known) that is not
    small (:func:`small_model`)."""
    what = f"{size} bytes of tensors" if size is not None else "tensors of sizes not known"
    return (f"{OUT_OF_MEMORY} ({error_text(exc)[:300]}) on a model of {what}, under an address space of "
            f"{address_space()} bytes: the input's size, not a TVM bug")


@dataclasses.dataclass
class Trace:
    """What :func:`observe_all` saw besides failures: the steps it completed, seconds per step, the
    reference engine, whether the outputs matched, ``invalid`` notes that are no failure (an
    onnxruntime fallback, a reference input that does not fit) and the traceback of each error.
    ``on_step`` is called with each step's name before it runs, ``on_stage`` with its stage and name."""

    on_step: Callable[[str], None] | None = None
    on_stage: Callable[[Stage, str], None] | None = None
    reached: list[str] = dataclasses.field(default_factory=list)
    timings: dict[str, float] = dataclasses.field(default_factory=dict)
    reference: str | None = None
    matched: bool | None = None
    notes: list[Observation] = dataclasses.field(default_factory=list)
    tracebacks: dict[str, str] = dataclasses.field(default_factory=dict)
    operators: list[str] = dataclasses.field(default_factory=list)
    """The operator types of the model handed to TVM's importer (what the case exercised of it)."""
    model: onnx.ModelProto | None = None
    """The model the steps run (a failed allocation on a small one is TVM's failure, :func:`small_model`)."""
    feeds: dict[str, np.ndarray] | None = None
    """The inputs the model runs on (its size when its shapes are not all static)."""

    def call(self, step: str, fn: Callable[..., Any], *args: Any, stage: Stage = Stage.LOAD) -> Any:
        """Announce, time and run step ``step`` of ``stage`` (``fn(*args)``): its value, or the
        :class:`Observation` of the error it raised (traceback kept; an unsupported operator at
        import is ``invalid``, and so is a failed allocation on a model that is not small)."""
        if self.on_step is not None:
            self.on_step(step)
        if self.on_stage is not None:
            self.on_stage(stage, step)
        start = time.perf_counter()
        try:
            value = fn(*args)
        except Exception as exc:  # TVM and the engines raise many types
            self.tracebacks[step] = traceback.format_exc()[-4000:]
            limit = step == "import" and is_unsupported(exc)
            size = model_bytes_known(self.model, self.feeds) if is_out_of_memory(exc) else None  # measured once
            oversized = is_out_of_memory(exc) and not fits(size)
            symptom = Symptom.INVALID if limit or oversized else Symptom.EXCEPTION
            text = f"{IMPORTER_LIMIT}: {error_text(exc)}" if limit and not isinstance(exc, UnsupportedInput) \
                else out_of_memory_text(exc, size) if oversized else error_text(exc)
            return Observation(symptom, stage, step, text[:4000], frames=tvm_frames(exc))
        finally:
            self.timings[step] = self.timings.get(step, 0.0) + time.perf_counter() - start
        self.reached.append(step)
        return value


def describe(observation: Observation) -> str:
    """``symptom at stage/step: the line of the message that identifies it`` (in full)."""
    if observation.symptom is Symptom.OK:
        return "no failure"
    return f"{observation.symptom.value} at {observation.where()}: {key_line(observation.message)}"
