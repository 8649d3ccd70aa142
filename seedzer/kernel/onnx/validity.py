"""The one validity check of an ONNX model: the specification's (TVM-free).

A generated or mutated model is valid when ``onnx.checker`` passes its full check (shape inference
included) and the specification's rules it does not check hold (:data:`UNIDIRECTIONAL`), onnxruntime
runs it, and ``onnx.reference`` (the specification's executable reference) runs the nodes under check
where it implements their operators. :func:`model_validity` says which
refused it, in one line, or gives onnxruntime's outputs (a caller compares with them). The
reference runs only the nodes a mutation made or changed (:func:`changed_nodes`), on the values
onnxruntime computes for their inputs: the rest of the model is the seed's, and the reference is
pure Python (seconds on a large pooling node).

Both engines may be run in a child forked for the purpose (``isolate``), so that an engine that
crashes on a model kills the child, never the caller: such a model is refused ("onnxruntime
crashed"), and the crash is never TVM's. Results are remembered per model and inputs (a worker
re-runs one mutant under many pass sequences).

Depends on numpy, onnx, onnxruntime (:mod:`seedzer.kernel.onnx.runtime`) and the standard library
only (copied verbatim into repro.py).
"""

from __future__ import annotations

import contextlib
import ctypes
import dataclasses
import functools
import hashlib
import os
import pickle
import select
import signal
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import onnx
from onnx import helper

from seedzer.kernel.onnx.runtime import onnxruntime_outputs

# --- kernel code (everything below is copied verbatim into repro.py) ---
ENGINE_TIMEOUT = 120.0
"""Seconds an isolated engine run may take before it is stopped (and the model refused)."""
VALIDITY_MEMORY = 64
"""How many models' verdicts a process remembers."""
UNIMPLEMENTED = ("is unknown", "not implemented", "Unable to find", "No Op registered")
"""Fragments of onnx.reference's errors for an operator it does not implement (not a refusal)."""


def _negative_pads(node: onnx.NodeProto, values: dict[str, np.ndarray]) -> bool:
    """A Pad that removes elements (negative pads, which the specification allows since opset 2)."""
    attr = next((a for a in node.attribute if a.name in ("pads", "paddings")), None)
    if attr is not None:
        return any(v < 0 for v in attr.ints)
    pads = values.get(node.input[1]) if len(node.input) > 1 else None
    return pads is not None and bool((np.asarray(pads) < 0).any())


REFERENCE_GAPS: dict[str, Callable[[onnx.NodeProto, dict[str, np.ndarray]], bool]] = {"Pad": _negative_pads}
"""Nodes onnx.reference cannot run although the specification defines them, by operator (numpy's pad
refuses negative pads): left out of the reference's run like an operator it does not implement."""


def reference_gap(node: onnx.NodeProto, values: dict[str, np.ndarray]) -> bool:
    """Whether ``node`` (its inputs' ``values`` known) is one onnx.reference cannot run."""
    gap = REFERENCE_GAPS.get(node.op_type)
    return gap is not None and gap(node, values)


def _node_attribute(node: onnx.NodeProto, name: str) -> Any:
    attr = next((a for a in node.attribute if a.name == name), None)
    return None if attr is None else helper.get_attribute_value(attr)


class EngineCrash(RuntimeError):
    """An engine run in a forked child died by a signal (or outlived its limit)."""


@dataclasses.dataclass(frozen=True)
class Validity:
    """A model's verdict: ``refusal`` (one line naming the engine that refused it, None when it is
    valid) and onnxruntime's outputs for the inputs it was checked with (None when refused)."""

    refusal: str | None
    outputs: list[np.ndarray] | None = None

    @property
    def valid(self) -> bool:
        """True when no engine refused the model."""
        return self.refusal is None


_REMEMBERED: OrderedDict[str, Validity] = OrderedDict()
"""The verdicts of the last :data:`VALIDITY_MEMORY` models checked by this process."""


def first_line(exc: BaseException) -> str:
    """``Type: first line of the message`` (at most 300 characters)."""
    text = next((ln.strip() for ln in str(exc).splitlines() if ln.strip()), "")
    return f"{type(exc).__name__}: {text}"[:300]


def bound_child(timeout: float) -> None:
    """In a forked engine child: end it by SIGALRM once it outlives ``timeout`` (plus a margin) and,
    on Linux, with its parent, so that it cannot run on when the caller that would stop it is gone (a
    worker killed at a campaign's end left its children running the ONNX reference for minutes)."""
    signal.signal(signal.SIGALRM, signal.SIG_DFL)
    signal.alarm(int(timeout) + 5)
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG


@functools.cache
def warm_reference() -> None:
    """Import ``onnx.reference``'s operators and build its table of them in this process, once: every
    child forked afterwards inherits both. An engine child used to do it anew for each model it ran
    (about 53 of the 59 ms an isolated reference run of a one-node model took; in a profile of a graph
    worker on a basic pool, 14% of the samples)."""
    from onnx.reference import ReferenceEvaluator

    node = helper.make_node("Identity", ["x"], ["y"])
    graph = helper.make_graph([node], "warm", [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [1])],
                              [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [1])])
    ReferenceEvaluator(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]))


def isolated(fn: Callable[..., Any], *args: Any, timeout: float = ENGINE_TIMEOUT) -> Any:
    """``fn(*args)`` in a child forked for the purpose: its value, or its exception re-raised here;
    :class:`EngineCrash` when the child dies by a signal or outlives ``timeout``. The reference is
    made ready first (:func:`warm_reference`), so the child starts with it."""
    warm_reference()
    read_fd, write_fd = os.pipe()
    parent = os.getpid()
    pid = os.fork()
    if pid == 0:  # the child: run, send the pickled outcome, leave without cleanup
        os.close(read_fd)
        bound_child(timeout)
        if os.getppid() != parent:  # the caller was gone before the child could ask to die with it
            os._exit(1)
        try:
            try:
                outcome: tuple[bool, Any] = (True, fn(*args))
            except Exception as exc:  # the engines raise many types
                outcome = (False, RuntimeError(first_line(exc)))
            data = pickle.dumps(outcome)
            with os.fdopen(write_fd, "wb") as out:
                out.write(data)
        finally:
            os._exit(0)
    os.close(write_fd)
    chunks, deadline = [], time.monotonic() + timeout
    with os.fdopen(read_fd, "rb") as pipe:
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                raise EngineCrash(f"the engine outlived {timeout:.0f} s")
            ready, _, _ = select.select([pipe], [], [], min(remaining, 1.0))
            if not ready:
                continue
            chunk = os.read(pipe.fileno(), 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        raise EngineCrash(f"the engine died by signal {number} ({signal.Signals(number).name})")
    if not chunks:
        raise EngineCrash("the engine exited without an answer")
    ok, value = pickle.loads(b"".join(chunks))
    if not ok:
        raise value
    return value


def changed_nodes(base: onnx.ModelProto, model: onnx.ModelProto) -> list[str]:
    """The first output of every node of ``model`` that ``base`` has not (made or changed by a mutation)."""
    known = {n.SerializeToString() for n in base.graph.node}
    return [n.output[0] for n in model.graph.node if n.output and n.SerializeToString() not in known]


def _tensor_inputs(model: onnx.ModelProto, nodes: Sequence[onnx.NodeProto]) -> list[str]:
    """The tensors ``nodes`` read that none of them computes, in first-use order (subgraph inputs
    of control flow not included)."""
    made = {o for n in nodes for o in n.output if o}
    needed: list[str] = []
    for node in nodes:
        for name in node.input:
            if name and name not in made and name not in needed:
                needed.append(name)
    return needed


def _constants(model: onnx.ModelProto) -> dict[str, np.ndarray]:
    """Initializers and Constant-node values (``value`` attributes) by name."""
    out = {i.name: onnx.numpy_helper.to_array(i) for i in model.graph.initializer}
    for node in model.graph.node:
        if node.op_type == "Constant" and node.output:
            value = next((a.t for a in node.attribute if a.name == "value"), None)
            if value is not None:
                out[node.output[0]] = onnx.numpy_helper.to_array(value)
    return out


def _probe(model: onnx.ModelProto, names: Sequence[str]) -> onnx.ModelProto:
    """``model`` with ``names`` added as (untyped) graph outputs."""
    probe = onnx.ModelProto()
    probe.CopyFrom(model)
    present = {o.name for o in probe.graph.output}
    for name in names:
        if name not in present:
            probe.graph.output.append(helper.make_empty_tensor_value_info(name))
    return probe


def local_model(model: onnx.ModelProto, nodes: Sequence[onnx.NodeProto], values: dict[str, np.ndarray],
                constants: Sequence[str] = ()) -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    """A model of ``nodes`` alone, whose graph inputs are the tensors they read (typed from
    ``values``), and its feeds. A tensor named in ``constants`` stays a constant (an initializer), as
    it is in ``model``: onnx.reference expands a function operator (GroupNormalization-21) by what it
    knows of its inputs, and refused one whose constant scale and bias had become graph inputs."""
    read = _tensor_inputs(model, nodes)
    fixed = set(constants)
    inputs = [name for name in read if name not in fixed]
    feeds = {name: np.asarray(values[name]) for name in inputs}
    infos = [helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(feeds[name].dtype),
                                           list(feeds[name].shape)) for name in inputs]
    initializers = [onnx.numpy_helper.from_array(np.asarray(values[name]), name) for name in read if name in fixed]
    outputs = [helper.make_empty_tensor_value_info(o) for n in nodes for o in n.output if o]
    graph = helper.make_graph(list(nodes), "local", infos, outputs, initializer=initializers)
    local = helper.make_model(graph, opset_imports=list(model.opset_import))
    local.ir_version = model.ir_version
    del local.functions[:]
    local.functions.extend(model.functions)
    return local, feeds


def reference_run(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> list[np.ndarray] | None:
    """Outputs of ``model`` under ``onnx.reference``; None when it does not implement an operator of
    it; its error when it refuses the model."""
    from onnx.reference import ReferenceEvaluator

    try:
        evaluator = ReferenceEvaluator(model)
    except Exception as exc:  # the reference raises many types for what it does not implement
        if isinstance(exc, NotImplementedError) or any(text in str(exc) for text in UNIMPLEMENTED):
            return None
        raise
    names = {i.name for i in model.graph.input}
    return [np.asarray(v) for v in evaluator.run(None, {k: v for k, v in feeds.items() if k in names})]


Shape = tuple[int, ...]


def _gemm_output(node: onnx.NodeProto, shapes: dict[str, Shape]) -> Shape | None:
    """Gemm's output shape ``(M, N)`` from A, B and ``transA``/``transB`` (None: a shape unknown)."""
    a, b = (shapes.get(name) for name in node.input[:2])
    if a is None or b is None or len(a) != 2 or len(b) != 2:
        return None
    m = a[1] if _node_attribute(node, "transA") else a[0]
    n = b[0] if _node_attribute(node, "transB") else b[1]
    return (m, n)


UNIDIRECTIONAL: dict[str, tuple[int, Callable[[onnx.NodeProto, dict[str, Shape]], Shape | None]]] = {
    "PRelu": (1, lambda node, shapes: shapes.get(node.input[0])),
    "Gemm": (2, _gemm_output),
}
"""Operators one of whose inputs the specification requires to be *unidirectionally* broadcastable
(Broadcasting.md: of rank at most the target's, each dimension 1 or the target's) to a shape, by
operator: that input's index and the shape (from the known static shapes): PRelu's ``slope`` to ``X``,
Gemm's ``C`` to ``(M, N)``. Neither onnx.checker's shape inference (PRelu's copies X's shape) nor the
engines check it (onnxruntime and onnx.reference broadcast both ways): a ``[1]``-shaped slope on a 0-d
input ran everywhere and TVM's importer rejected it, a false alarm of the audit of issue 53."""


def unidirectional(source: Shape, target: Shape) -> bool:
    """Whether shape ``source`` is unidirectionally broadcastable to shape ``target`` (a dimension
    not known, -1, fits anything)."""
    if len(source) > len(target):
        return False
    return all(s in (1, t) or s < 0 or t < 0 for s, t in zip(reversed(source), reversed(target), strict=False))


def static_shapes(model: onnx.ModelProto) -> dict[str, Shape]:
    """The shape of every tensor of ``model`` that shape inference or the model itself states (an
    unknown dimension is -1); empty when shape inference fails."""
    try:
        inferred = onnx.shape_inference.infer_shapes(model)
    except Exception:  # shape inference raises several types
        return {}
    shapes: dict[str, Shape] = {}
    for vi in [*inferred.graph.input, *inferred.graph.value_info, *inferred.graph.output]:
        tensor = vi.type.tensor_type
        if tensor.HasField("shape"):
            shapes[vi.name] = tuple(d.dim_value if d.HasField("dim_value") else -1 for d in tensor.shape.dim)
    shapes.update({i.name: tuple(int(d) for d in i.dims) for i in model.graph.initializer})
    return shapes


def specification_refusal(model: onnx.ModelProto) -> str | None:
    """Why a rule of the specification onnx.checker does not check (:data:`UNIDIRECTIONAL`) refuses a
    node of ``model``'s main graph, or None."""
    rules = [node for node in model.graph.node if node.op_type in UNIDIRECTIONAL and node.domain in ("", "ai.onnx")]
    shapes = static_shapes(model) if rules else {}
    for node in rules:
        index, target_of = UNIDIRECTIONAL[node.op_type]
        if len(node.input) <= index or not node.input[index]:
            continue
        source, target = shapes.get(node.input[index]), target_of(node, shapes)
        if source is not None and target is not None and not unidirectional(source, target):
            return (f"the specification refuses the model: {node.op_type} {node.name or node.output[0]!r} has input "
                    f"{index} of shape {list(source)}, not unidirectionally broadcastable to {list(target)}")
    return None


def checker_refusal(model: onnx.ModelProto) -> str | None:
    """Why ``onnx.checker``'s full check (shape inference included), or a rule of the specification it
    does not check (:func:`specification_refusal`), refuses ``model``; or None."""
    try:
        onnx.checker.check_model(model, full_check=True)
    except Exception as exc:  # the checker and shape inference raise several types
        return f"onnx.checker refuses the model: {first_line(exc)}"
    return specification_refusal(model)


@dataclasses.dataclass(frozen=True)
class EngineRun:
    """onnxruntime's run of a model probed for the tensors the reference needs: its refusal (None: it
    ran), the model's outputs and every value known (constants, feeds, probed tensors), and the nodes
    the reference is to run (those it cannot run left out), and which values are the model's constants."""

    refusal: str | None
    outputs: list[np.ndarray] | None = None
    values: dict[str, np.ndarray] | None = None
    nodes: tuple[onnx.NodeProto, ...] = ()
    constants: tuple[str, ...] = ()


def runtime_run(model: onnx.ModelProto, feeds: dict[str, np.ndarray], checked: Sequence[str] | None) -> EngineRun:
    """onnxruntime on ``model``, probed for the inputs of the nodes computing ``checked`` (all nodes
    when None)."""
    graph = model.graph
    nodes = list(graph.node) if checked is None else [n for n in graph.node if set(n.output) & set(checked)]
    nodes = [n for n in nodes if n.op_type != "Constant"]
    consts = _constants(model)
    wanted = [name for name in _tensor_inputs(model, nodes) if name not in consts and name not in feeds]
    wanted += [name for n in nodes if n.op_type in REFERENCE_GAPS for name in [*n.input, *n.output]
               if name and name not in consts and name not in feeds]  # to judge and to skip the node
    probe = _probe(model, list(dict.fromkeys(wanted)))
    try:
        ran = onnxruntime_outputs(probe, feeds, quiet=True)
    except Exception as exc:  # onnxruntime raises many types
        return EngineRun(f"onnxruntime refuses the model: {first_line(exc)}")
    values = {**consts, **feeds, **dict(zip([o.name for o in probe.graph.output], ran, strict=True))}
    kept = tuple(n for n in nodes if not reference_gap(n, values))
    return EngineRun(None, list(ran[:len(graph.output)]), values, kept, tuple(consts))


def reference_refusal(model: onnx.ModelProto, run: EngineRun, label: bool) -> tuple[str | None, bool]:
    """onnx.reference on ``run``'s nodes, on the values onnxruntime computed for their inputs: its
    refusal (None: none; ``label`` names the nodes' operators in it) and whether it ran at all (False:
    no node to run, or an operator it does not implement)."""
    if not run.nodes or run.values is None:
        return None, False
    local, local_feeds = local_model(model, run.nodes, run.values, run.constants)
    try:
        outputs = reference_run(local, local_feeds)
    except Exception as exc:  # the reference raises many types
        ops = f" ({', '.join(sorted({n.op_type for n in run.nodes}))})" if label else ""
        return f"onnx.reference refuses the model{ops}: {first_line(exc)}", True
    return None, outputs is not None


def engines_verdict(model: onnx.ModelProto, feeds: dict[str, np.ndarray], checked: Sequence[str] | None
                    ) -> Validity:
    """onnxruntime on ``model``, then onnx.reference on the nodes computing ``checked`` (all nodes
    when None); runs in the caller's process (see :func:`model_validity`)."""
    run = runtime_run(model, feeds, checked)
    if run.refusal is not None:
        return Validity(run.refusal)
    refusal, _ = reference_refusal(model, run, checked is not None)
    return Validity(refusal) if refusal is not None else Validity(None, run.outputs)


def _key(model: onnx.ModelProto, feeds: dict[str, np.ndarray], checked: Sequence[str] | None) -> str:
    digest = hashlib.sha256(model.SerializeToString())
    for name in sorted(feeds):
        digest.update(name.encode() + str(feeds[name].dtype).encode() + np.ascontiguousarray(feeds[name]).tobytes())
    digest.update(repr(sorted(checked) if checked is not None else None).encode())
    return digest.hexdigest()


def model_validity(model: onnx.ModelProto, feeds: dict[str, np.ndarray], checked: Sequence[str] | None = None,
                   isolate: bool = False) -> Validity:
    """The specification's verdict on ``model`` for ``feeds`` (see the module docstring): the full
    onnx check, then onnxruntime on the model, then onnx.reference on the nodes computing
    ``checked`` (every node when None). ``isolate`` runs the engines in a forked child."""
    key = _key(model, feeds, checked)
    if key in _REMEMBERED:
        _REMEMBERED.move_to_end(key)
        return _REMEMBERED[key]
    refused = checker_refusal(model)
    verdict = Validity(refused) if refused is not None else None
    if verdict is None:
        try:
            verdict = isolated(engines_verdict, model, feeds, checked) if isolate else \
                engines_verdict(model, feeds, checked)
        except EngineCrash as exc:
            verdict = Validity(f"an engine crashed on the model (not TVM's failure): {exc}")
    _REMEMBERED[key] = verdict
    while len(_REMEMBERED) > VALIDITY_MEMORY:
        _REMEMBERED.popitem(last=False)
    return verdict
