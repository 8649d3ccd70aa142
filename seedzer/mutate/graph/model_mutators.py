"""Samplers of ONNX model mutations (:class:`~seedzer.kernel.graph.case.ModelMutation` records).

:func:`sample_model_mutation` picks, for a model, a UOC (target, two operands that do not depend on
it, garbage ops), a PIOC (target, garbage ops) or a spec-edge change (an attribute or constant operand
of a node moved to a value the ONNX specification allows and generators rarely choose, from the
per-operator table of :mod:`seedzer.mutate.graph.spec_edges`). Shapes and dtypes come from onnx shape
inference. A spec-edge record is returned only when the specification accepts the mutated model
(:func:`mutation_refusal`: onnx.checker's full check, onnxruntime, and onnx.reference on the changed
node: the one validity check of :mod:`seedzer.kernel.onnx.validity`); that check applies the record
with the kernel (:mod:`seedzer.kernel.graph.mutant`, which needs no TVM, nor does this module).
"""

from __future__ import annotations

import random

import numpy as np
import onnx
from onnx import TensorProto

from seedzer.kernel.graph.case import MODEL_MUTATION_KINDS, ModelMutation
from seedzer.kernel.graph.model_mutations import (
    broadcast,
    descendants,
    opset_version,
    tensor_types,
)
from seedzer.kernel.graph.mutant import apply_model_mutations
from seedzer.kernel.onnx.validity import changed_nodes, first_line, model_validity
from seedzer.mutate.graph.spec_edges import node_edges

__all__ = ["GARBAGE_OPS", "MODEL_MUTATION_KINDS", "edge_candidates", "sample_model_mutation"]

GARBAGE_OPS = ("Conv", "MatMul", "Gemm", "Add", "Sub", "Mul")
"""Garbage op types (MT-DLComp's Conv, Dense and three arithmetic ops)."""
EDGE_TRIES = 24
"""Spec-edge candidates tried (applied and checked) before giving up."""
MAX_WEIGHT_DIM = 256
"""Largest channel/feature count a generated garbage weight is made for."""
FLOATS = frozenset({TensorProto.FLOAT, TensorProto.DOUBLE, TensorProto.FLOAT16})
NUMERIC = FLOATS | {TensorProto.INT8, TensorProto.INT16, TensorProto.INT32, TensorProto.INT64, TensorProto.UINT8}


def _garbage(rng: random.Random, shapes: list[tuple[int, ...]]) -> tuple[str, ...]:
    """1-3 garbage op types that fit a target of ``shapes[0]`` (Conv: some 4-D shape among ``shapes``)."""
    target = shapes[0]
    ops = ["Add", "Sub", "Mul"]
    if target and target[-1] <= MAX_WEIGHT_DIM:
        ops.append("MatMul")
        if len(target) == 2:
            ops.append("Gemm")
    four = [s for s in shapes if len(s) == 4 and 0 not in s]
    if four and (target if len(target) == 4 else four[0])[1] <= MAX_WEIGHT_DIM and 0 not in target:
        ops.append("Conv")
    return tuple(rng.choice(ops) for _ in range(rng.randint(1, 3)))


def _condition(model: onnx.ModelProto, strategy: str, rng: random.Random) -> ModelMutation | None:
    """A UOC or PIOC record for a random float target."""
    if opset_version(model) < 11:
        return None
    graph, types = model.graph, tensor_types(model)
    outputs = [o for n in graph.node if n.op_type != "Constant" for o in n.output if o]
    targets = [o for o in outputs if o in types and types[o][0] in FLOATS and types[o][1] is not None]
    if not targets:
        return None
    target = rng.choice(targets)
    tshape = types[target][1] or ()
    if strategy == "pioc":
        return ModelMutation("pioc", target, (), _garbage(rng, [tshape]), {}, rng.getrandbits(31))
    live = {i.name for i in graph.input} | {i.name for i in graph.initializer} | set(outputs)
    down = descendants(graph, target)
    operands = [n for n in sorted(live) if n in types and types[n][0] in NUMERIC and types[n][1] is not None
                and n not in down]
    if not operands:
        return None
    i = rng.choice(operands)
    j = rng.choice([n for n in operands if broadcast(types[i][1] or (), types[n][1] or ()) is not None])
    shapes = [tshape] + [types[n][1] or () for n in (i, j)
                         if types[n][0] in FLOATS or broadcast(types[n][1] or (), tshape) == tshape]
    return ModelMutation("uoc", target, (i, j), _garbage(rng, shapes), {}, rng.getrandbits(31))


def edge_candidates(model: onnx.ModelProto, rng: random.Random) -> list[ModelMutation]:
    """Every spec-edge record the per-operator table (:mod:`seedzer.mutate.graph.spec_edges`) proposes for
    ``model`` (unchecked), seeds from ``rng``."""
    graph, types = model.graph, tensor_types(model)
    found = []
    for node in graph.node:
        if node.op_type == "Constant" or not node.output:
            continue
        for changes in node_edges(graph, node, types, rng):
            found.append(ModelMutation("edge", node.output[0], (), (), {"op": node.op_type, "changes": changes},
                                       rng.getrandbits(31)))
    return found


def random_feeds(model: onnx.ModelProto, seed: int) -> dict[str, np.ndarray]:
    """Random inputs for the model's graph inputs (floats in [-2, 2), integers in [-3, 3])."""
    gen, feeds = np.random.default_rng(seed), {}
    inits = {i.name for i in model.graph.initializer}
    for vi in model.graph.input:
        if vi.name in inits:
            continue
        tt = vi.type.tensor_type
        dtype = onnx.helper.tensor_dtype_to_np_dtype(tt.elem_type)
        shape = [d.dim_value or 1 for d in tt.shape.dim]
        kind = np.dtype(dtype).kind
        value = (gen.random(shape) < 0.5 if kind == "b" else gen.integers(-3, 4, size=shape) if kind in "iu"
                 else gen.uniform(-2.0, 2.0, size=shape))
        feeds[vi.name] = np.abs(value).astype(dtype) if kind == "u" else np.asarray(value).astype(dtype)
    return feeds


def mutation_refusal(model: onnx.ModelProto, mutation: ModelMutation, feeds: dict[str, np.ndarray],
                     isolate: bool = False) -> str | None:
    """Why ``mutation`` makes no valid model of ``model`` (one line), or None: it must apply, and the
    specification must accept the result (:func:`~seedzer.kernel.onnx.validity.model_validity`: the full
    onnx check, onnxruntime, onnx.reference on the nodes it made or changed). ``isolate`` runs the
    engines in a forked child (a worker's process, never one that imported torch)."""
    try:
        mutated = apply_model_mutations(model, [mutation], feeds)
    except Exception as exc:  # a record that does not fit, the version converter, shape inference
        return f"the mutation does not apply: {first_line(exc)}"
    return model_validity(mutated, feeds, changed_nodes(model, mutated), isolate).refusal


def edge_is_valid(model: onnx.ModelProto, mutation: ModelMutation, feeds: dict[str, np.ndarray],
                  isolate: bool = False) -> bool:
    """True when the spec-edge ``mutation`` makes a valid model of ``model`` (:func:`mutation_refusal`)."""
    return mutation_refusal(model, mutation, feeds, isolate) is None


def sample_model_mutation(model: onnx.ModelProto, strategy: str, rng: random.Random,
                          feeds: dict[str, np.ndarray] | None = None, isolate: bool = False) -> ModelMutation | None:
    """A random ``strategy`` record (``uoc``, ``pioc`` or ``edge``) valid for ``model``, or None when none fits.

    ``feeds`` (default: :func:`random_feeds` from ``rng``) are the inputs a spec-edge result must run
    on; UOC and PIOC records need none here (a PIOC profiles when applied). ``isolate``: see
    :func:`mutation_refusal`. Insertions are :func:`seedzer.mutate.graph.insertion.sample_insertion`'s."""
    if strategy in ("uoc", "pioc"):
        return _condition(model, strategy, rng)
    if strategy != "edge":
        raise ValueError(f"unknown model mutation strategy {strategy!r} (one of {MODEL_MUTATION_KINDS})")
    candidates = edge_candidates(model, rng)
    rng.shuffle(candidates)
    feeds = feeds if feeds is not None else random_feeds(model, rng.getrandbits(31))
    for mutation in candidates[:EDGE_TRIES]:
        if edge_is_valid(model, mutation, feeds, isolate):
            return mutation
    return None
