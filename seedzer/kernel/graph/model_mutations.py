"""ONNX model mutations (MT-DLComp's UOC and PIOC with garbage nodes, and spec-edge changes).

:func:`apply_uoc`, :func:`apply_pioc` and :func:`apply_edge` replay one
:class:`~seedzer.kernel.graph.case.ModelMutation` record each on a model, deterministically (fresh
names and generated weights derive from the record); :mod:`seedzer.kernel.graph.mutant` applies a
sequence of them. A record that no longer fits (its target or an operand gone, its node changed)
raises ``ValueError`` with a one-line reason, so a reducer that drops an earlier mutation sees it.

- **UOC** (any input): ``t' = t + Cast(zero * garbage)``, where ``zero = Relu(Neg(i*i - 2*i*j + j*j))``
  (``ReduceSum`` to a scalar first when the ``i``/``j`` broadcast does not fit ``t``'s shape). The
  operands are made exact first: cast to float32, NaN replaced by 0, clipped to
  ``[-UOC_BOUND, UOC_BOUND]``, scaled by ``UOC_SCALE`` and rounded, so they are integers of magnitude
  at most 1024; then every product and sum is an integer below 2**22 and so exact in float32, in any
  evaluation order (FMA and reassociation included), and the polynomial equals ``(i-j)**2 >= 0``
  exactly. A ``ReduceSum`` of non-negative floats stays non-negative under rounding, so ``Neg`` makes
  it ``<= 0`` and ``Relu`` gives exactly (signed) zero, never NaN or Inf. The garbage is cast to
  float32, its NaNs replaced by 0 and clipped to ``[-GARBAGE_BOUND, GARBAGE_BOUND]``, so ``zero *
  garbage`` is an exact ±0 and ``t + ±0 == t``. The naive paper form is not exact in floating point
  (``i*i - 2ij + j*j`` can round below 0, and ``Relu(Neg(NaN))``/``0 * Inf`` are NaN).
- **PIOC** (the profiled input only): ``t`` is profiled with onnxruntime (optimizations off, one
  thread) on the model mutated so far, giving ``o``; then ``t' = t + Cast((t - Constant(o)) * g)``
  elementwise, with the garbage ``g`` clipped to ``[-1, 1]``. On onnxruntime ``t`` is computed by the
  same kernels, so ``t - o`` is exactly 0 (elements where ``o`` is NaN or Inf are masked to 0 by a
  constant ``Where``). On TVM, ``t_tvm - o`` is the drift TVM already has on ``t``, so
  ``|t'_tvm - o| <= 2 |t_tvm - o|``: PIOC at most doubles the existing drift at the target (no
  reduction, no amplification by a large garbage). Float tolerances must therefore allow twice the
  drift per PIOC on a path (the paper's only false positives were such drift).
- **edge**: ``params = {"op": <op type>, "changes": [...]}`` where a change is ``{"attr": name,
  "value": v}`` (``None`` removes it) or ``{"input": index, "value": nested list | None, "dtype":
  numpy dtype, "shape": [...]}`` (a fresh initializer; ``None`` makes the input absent). The graph
  outputs' types are re-inferred. Not semantics-preserving: a new model, judged differentially.

Depends on numpy, onnx, onnxruntime (:mod:`seedzer.kernel.onnx.runtime`) and
:mod:`seedzer.kernel.graph.case` only, no TVM (copied verbatim into repro.py).
"""

from __future__ import annotations

import hashlib
import heapq
import json
import random
from collections.abc import Sequence
from typing import Any

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from seedzer.kernel.graph.case import ModelMutation
from seedzer.kernel.onnx.runtime import onnxruntime_outputs

# --- kernel code (everything below is copied verbatim into repro.py) ---
UOC_BOUND = 64.0
"""UOC operands are clipped to ``[-UOC_BOUND, UOC_BOUND]`` before scaling and rounding."""
UOC_SCALE = 16.0
"""UOC operands are multiplied by this and rounded: integers of magnitude at most 1024."""
GARBAGE_BOUND = 1e4
"""A UOC's garbage is clipped to ``[-GARBAGE_BOUND, GARBAGE_BOUND]`` (finite, so ``0 * g == 0``)."""
PIOC_GARBAGE_BOUND = 1.0
"""A PIOC's garbage is clipped to ``[-1, 1]`` (TVM's drift at the target at most doubles)."""
FLOAT_TYPES = frozenset({TensorProto.FLOAT, TensorProto.DOUBLE, TensorProto.FLOAT16})
"""ONNX element types a UOC/PIOC target may have."""
NUMERIC_TYPES = FLOAT_TYPES | {TensorProto.INT8, TensorProto.INT16, TensorProto.INT32, TensorProto.INT64,
                               TensorProto.UINT8, TensorProto.UINT16, TensorProto.UINT32, TensorProto.UINT64}
"""ONNX element types a UOC operand may have (cast to float32)."""
TensorType = tuple[int, "tuple[int, ...] | None"]


def opset_version(model: onnx.ModelProto) -> int:
    """The model's default-domain opset."""
    return next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), 0)


def tensor_types(model: onnx.ModelProto) -> dict[str, TensorType]:
    """``name -> (elem_type, static shape or None)`` of every tensor onnx shape inference knows."""
    inferred = onnx.shape_inference.infer_shapes(model)
    types: dict[str, TensorType] = {}
    graph = inferred.graph
    for vi in list(graph.input) + list(graph.value_info) + list(graph.output):
        tt = vi.type.tensor_type
        dims = [d.dim_value if d.HasField("dim_value") else None for d in tt.shape.dim]
        shape = tuple(int(d) for d in dims if d is not None) if tt.HasField("shape") and None not in dims else None
        types[vi.name] = (tt.elem_type, shape)
    for init in graph.initializer:
        types[init.name] = (init.data_type, tuple(int(d) for d in init.dims))
    return types


def broadcast(a: Sequence[int], b: Sequence[int]) -> tuple[int, ...] | None:
    """The numpy broadcast of two shapes, or None when they do not broadcast."""
    out, rank = [], max(len(a), len(b))
    for x, y in zip([1] * (rank - len(a)) + list(a), [1] * (rank - len(b)) + list(b), strict=True):
        if x != y and 1 not in (x, y):
            return None
        out.append(y if x == 1 else x)
    return tuple(out)


def descendants(graph: onnx.GraphProto, name: str) -> set[str]:
    """Tensors computed from ``name`` (not including it)."""
    seen: set[str] = set()
    frontier = [name]
    while frontier:
        current = frontier.pop()
        for node in graph.node:
            if current in node.input:
                for out in node.output:
                    if out and out not in seen:
                        seen.add(out)
                        frontier.append(out)
    return seen


def toposort(graph: onnx.GraphProto) -> None:
    """Reorder ``graph.node`` topologically, keeping the current order wherever it is valid."""
    nodes = list(graph.node)
    producer = {out: k for k, node in enumerate(nodes) for out in node.output if out}
    waiting = [{producer[i] for i in node.input if i in producer} for node in nodes]
    users: dict[int, list[int]] = {}
    for k, deps in enumerate(waiting):
        for d in deps:
            users.setdefault(d, []).append(k)
    ready = [k for k, deps in enumerate(waiting) if not deps]
    heapq.heapify(ready)
    order: list[int] = []
    while ready:
        k = heapq.heappop(ready)
        order.append(k)
        for u in users.get(k, ()):
            waiting[u].discard(k)
            if not waiting[u]:
                heapq.heappush(ready, u)
    if len(order) != len(nodes):
        raise ValueError("the mutated graph has a cycle")
    del graph.node[:]
    graph.node.extend(nodes[k] for k in order)


class GraphBuilder:
    """Adds nodes and initializers to a graph under fresh names derived from one mutation record."""

    def __init__(self, model: onnx.ModelProto, mutation: ModelMutation) -> None:
        """Builder for ``mutation`` on ``model`` (modified in place)."""
        self.graph = model.graph
        digest = hashlib.sha1(json.dumps(mutation.to_json(), sort_keys=True).encode()).hexdigest()[:8]
        self.prefix = f"mm_{mutation.kind}_{digest}"
        g = self.graph
        self.names = {n for node in g.node for n in list(node.input) + list(node.output) + [node.name]}
        self.names |= {v.name for v in list(g.input) + list(g.output) + list(g.value_info) + list(g.initializer)}
        self.rng = random.Random(mutation.seed)

    def fresh(self, stem: str) -> str:
        """A name not yet in the graph: ``<prefix>_<stem>`` or with a counter."""
        name, k = f"{self.prefix}_{stem}", 1
        while name in self.names:
            name, k = f"{self.prefix}_{stem}{k}", k + 1
        self.names.add(name)
        return name

    def node(self, op: str, inputs: Sequence[str], output: str | None = None, **attrs: Any) -> str:
        """Append ``op(inputs)`` and return its (fresh unless given) output name."""
        out = output or self.fresh(op.lower())
        self.graph.node.append(helper.make_node(op, list(inputs), [out], name=self.fresh("n_" + op.lower()), **attrs))
        return out

    def const(self, value: Any, dtype: Any = np.float32) -> str:
        """A fresh initializer holding ``value``."""
        name = self.fresh("c")
        self.graph.initializer.append(numpy_helper.from_array(np.asarray(value, dtype=dtype), name))
        return name

    def weight(self, shape: Sequence[int]) -> str:
        """A fresh float32 initializer of ``shape``, uniform in [-1, 1) from the record's seed."""
        values = np.array([self.rng.uniform(-1.0, 1.0) for _ in range(int(np.prod(shape)))], np.float32)
        return self.const(values.reshape(tuple(shape)))

    def sanitize(self, name: str, bound: float) -> str:
        """``Clip(Where(IsNaN(x), 0, x), -bound, bound)`` of ``name`` cast to float32: finite, bounded."""
        x = self.node("Cast", [name], to=TensorProto.FLOAT)
        x = self.node("Where", [self.node("IsNaN", [x]), self.const(0.0), x])
        return self.node("Clip", [x, self.const(-bound), self.const(bound)])


def _attach(model: onnx.ModelProto, mutation: ModelMutation) -> tuple[GraphBuilder, onnx.NodeProto, TensorType, str]:
    """Check a UOC/PIOC record fits; rename the target node's output to a fresh name (returned)."""
    graph, what = model.graph, f"{mutation.kind} target {mutation.target!r}"
    if opset_version(model) < 11:
        raise ValueError(f"{mutation.kind} needs opset >= 11, the model has {opset_version(model)}")
    producer = next((n for n in graph.node if mutation.target in n.output), None)
    if producer is None:
        raise ValueError(f"{what} is gone (no node computes it)")
    types = tensor_types(model)
    ttype = types.get(mutation.target)
    if ttype is None or ttype[0] not in FLOAT_TYPES or ttype[1] is None:
        raise ValueError(f"{what} is not a float tensor of static shape")
    builder = GraphBuilder(model, mutation)
    original = builder.fresh("orig")
    producer.output[list(producer.output).index(mutation.target)] = original
    return builder, producer, ttype, original


def _garbage(b: GraphBuilder, m: ModelMutation, sources: dict[str, TensorType], shape: tuple[int, ...],
             bound: float) -> str:
    """The garbage subgraph: ``m.garbage`` ops from the target's (float32) value ``g``, mixed with the
    ``sources`` that broadcast to ``shape`` and seeded weights; result finite and broadcastable to
    ``shape``. Conv runs on ``g`` when it is 4-D, else on a 4-D source, reduced to a scalar."""
    names = list(sources)
    g = b.node("Cast", [names[0]], to=TensorProto.FLOAT)
    rank = len(shape)
    fitting = [n for n in names[1:] if broadcast(sources[n][1] or (), shape) == shape]
    for op in m.garbage:
        if op in ("Add", "Sub", "Mul"):
            if fitting and b.rng.random() < 0.5:
                other = b.node("Cast", [fitting[b.rng.randrange(len(fitting))]], to=TensorProto.FLOAT)
            else:
                other = b.weight(shape[-1:] if rank and b.rng.random() < 0.5 else ())
            g = b.node(op, [g, other] if b.rng.random() < 0.5 else [other, g])
        elif op in ("MatMul", "Gemm") and rank >= 1:
            k = shape[-1]
            if op == "Gemm" and rank == 2:
                g = b.node("Gemm", [g, b.weight((k, k)), b.weight((k,))], transB=b.rng.randrange(2),
                           alpha=b.rng.choice([1.0, 0.5]))
            else:
                g = b.node("MatMul", [g, b.weight((k, k))])
        elif op == "Conv":
            four = [n for n in names if len(sources[n][1] or ()) == 4 and 0 not in (sources[n][1] or ())]
            if not four:
                raise ValueError("Conv garbage needs a 4-D tensor among the target and operands")
            src = names[0] if names[0] in four else four[0]
            c = (sources[src][1] or (1, 1))[1]
            k = 3 if c <= 64 and b.rng.random() < 0.5 else 1
            x = g if src == names[0] else b.node("Cast", [src], to=TensorProto.FLOAT)
            y = b.node("Conv", [x, b.weight((c, c, k, k)), b.weight((c,))], kernel_shape=[k, k], pads=[k // 2] * 4)
            g = y if src == names[0] else b.node("Add", [g, b.node("ReduceMean", [y], keepdims=0)])
        else:
            raise ValueError(f"unknown or unfitting garbage op {op!r} for a rank-{rank} target")
    return b.sanitize(g, bound)


def _finish(b: GraphBuilder, m: ModelMutation, ttype: TensorType, original: str, zero: str, garbage: str) -> None:
    """``target = original + Cast(zero * garbage)`` under the target's own name."""
    product = b.node("Mul", [zero, garbage])
    if ttype[0] != TensorProto.FLOAT:
        product = b.node("Cast", [product], to=ttype[0])
    b.node("Add", [original, product], output=m.target)


def apply_uoc(model: onnx.ModelProto, m: ModelMutation) -> None:
    """Apply one UOC record in place (see the module docstring for why the zero is exact)."""
    if len(m.operands) != 2:
        raise ValueError(f"uoc needs two operands, the record has {len(m.operands)}")
    types = tensor_types(model)
    downstream = descendants(model.graph, m.target)
    for op in m.operands:
        if op not in types or types[op][1] is None or types[op][0] not in NUMERIC_TYPES:
            raise ValueError(f"uoc operand {op!r} is gone or not a numeric tensor of static shape")
        if op in downstream:
            raise ValueError(f"uoc operand {op!r} depends on the target {m.target!r}")
    shapes = [types[op][1] or () for op in m.operands]
    both = broadcast(shapes[0], shapes[1])
    if both is None:
        raise ValueError(f"uoc operands {m.operands} do not broadcast")
    b, _, ttype, original = _attach(model, m)
    ref = {m.target: original}
    i, j = (b.node("Round", [b.node("Mul", [b.sanitize(ref.get(op, op), UOC_BOUND), b.const(UOC_SCALE)])])
            for op in m.operands)
    twice = b.node("Mul", [b.node("Mul", [b.const(2.0), i]), j])
    square = b.node("Add", [b.node("Sub", [b.node("Mul", [i, i]), twice]), b.node("Mul", [j, j])])
    shape = ttype[1] or ()
    if broadcast(both, shape) != shape:
        square = b.node("ReduceSum", [square], keepdims=0)
    zero = b.node("Relu", [b.node("Neg", [square])])
    sources = {original: ttype, **{ref.get(op, op): types[op] for op in m.operands}}
    _finish(b, m, ttype, original, zero, _garbage(b, m, sources, shape, GARBAGE_BOUND))


def profile(model: onnx.ModelProto, name: str, feeds: dict[str, np.ndarray]) -> np.ndarray:
    """The value of tensor ``name`` under onnxruntime for ``feeds`` (added as a temporary output)."""
    probe = onnx.ModelProto()
    probe.CopyFrom(model)
    if name not in [o.name for o in probe.graph.output]:
        probe.graph.output.append(helper.make_empty_tensor_value_info(name))
    names = [o.name for o in probe.graph.output]
    return onnxruntime_outputs(probe, feeds)[names.index(name)]


def apply_pioc(model: onnx.ModelProto, m: ModelMutation, feeds: dict[str, np.ndarray]) -> None:
    """Apply one PIOC record in place, profiling the target for ``feeds`` (see the module docstring)."""
    if m.operands:
        raise ValueError("pioc takes no operands")
    if not any(m.target in n.output for n in model.graph.node):
        raise ValueError(f"pioc target {m.target!r} is gone (no node computes it)")
    value = profile(model, m.target, feeds)
    b, _, ttype, original = _attach(model, m)
    finite = np.isfinite(value)
    observed = numpy_helper.from_array(np.where(finite, value, 0).astype(value.dtype), b.fresh("o"))
    constant = b.node("Constant", [], value=observed)
    diff = b.node("Sub", [original, constant])
    if not finite.all():
        diff = b.node("Where", [b.const(finite, np.bool_), diff, b.const(0.0, value.dtype)])
    diff = b.node("Cast", [diff], to=TensorProto.FLOAT)
    _finish(b, m, ttype, original, diff, _garbage(b, m, {original: ttype}, ttype[1] or (), PIOC_GARBAGE_BOUND))


def retype_outputs(model: onnx.ModelProto) -> None:
    """Forget intermediate types and re-infer the graph outputs' element types and shapes (an output
    whose type inference cannot derive keeps its declared one)."""
    del model.graph.value_info[:]
    declared = [onnx.TypeProto() for _ in model.graph.output]
    for out, old in zip(model.graph.output, declared, strict=True):
        old.CopyFrom(out.type)
        out.type.tensor_type.elem_type = 0
        out.type.tensor_type.ClearField("shape")
    inferred = onnx.shape_inference.infer_shapes(model).graph.output
    for out, new, old in zip(model.graph.output, inferred, declared, strict=True):
        known = new.type.tensor_type.elem_type and new.type.tensor_type.HasField("shape")
        out.type.CopyFrom(new.type if known else old)


def apply_edge(model: onnx.ModelProto, m: ModelMutation) -> None:
    """Apply one spec-edge record in place (attribute or operand changes of the target's node)."""
    node = next((n for n in model.graph.node if m.target in n.output), None)
    if node is None:
        raise ValueError(f"edge target {m.target!r} is gone (no node computes it)")
    if node.op_type != m.params.get("op"):
        raise ValueError(f"edge target {m.target!r} is a {node.op_type}, the record is for {m.params.get('op')}")
    b = GraphBuilder(model, m)
    for change in m.params.get("changes", ()):
        if "attr" in change:
            kept = [a for a in node.attribute if a.name != change["attr"]]
            del node.attribute[:]
            node.attribute.extend(kept)
            if change["value"] is not None:
                node.attribute.append(helper.make_attribute(change["attr"], change["value"]))
            continue
        index = int(change["input"])
        while len(node.input) <= index:
            node.input.append("")
        if change["value"] is None:
            node.input[index] = ""
        else:
            array = np.asarray(change["value"], dtype=change["dtype"]).reshape(tuple(change["shape"]))
            node.input[index] = b.const(array, array.dtype)
        while node.input and not node.input[-1]:
            node.input.pop()
    retype_outputs(model)
