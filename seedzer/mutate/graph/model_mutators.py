"""Samplers of ONNX model mutations (:class:`~seedzer.kernel.graph.case.ModelMutation` records).

:func:`sample_model_mutation` picks, for a model, a UOC (target, two operands that do not depend on
it, garbage ops), a PIOC (target, garbage ops) or a spec-edge change (an attribute or constant operand
of a node moved to a value the ONNX specification allows and generators rarely choose, from the
per-op table of :func:`edge_candidates`). Shapes and dtypes come from onnx shape inference. A
spec-edge record is returned only when the specification accepts the mutated model
(:func:`mutation_refusal`: onnx.checker's full check, onnxruntime, and onnx.reference on the changed
node: the one validity check of :mod:`seedzer.kernel.onnx.validity`); that check applies the record
with the kernel (:mod:`seedzer.kernel.graph.mutant`, which needs no TVM, nor does this module).
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import onnx
from onnx import TensorProto, numpy_helper

from seedzer.kernel.graph.case import MODEL_MUTATION_KINDS, ModelMutation
from seedzer.kernel.graph.model_mutations import (
    TensorType,
    broadcast,
    descendants,
    opset_version,
    tensor_types,
)
from seedzer.kernel.graph.mutant import apply_model_mutations
from seedzer.kernel.onnx.validity import changed_nodes, first_line, model_validity

__all__ = ["GARBAGE_KINDS", "MODEL_MUTATION_KINDS", "edge_candidates", "sample_model_mutation"]

GARBAGE_KINDS = ("Conv", "MatMul", "Gemm", "Add", "Sub", "Mul")
"""Garbage op kinds (MT-DLComp's Conv, Dense and three arithmetic ops)."""
EDGE_TRIES = 24
"""Spec-edge candidates tried (applied and checked) before giving up."""
MAX_WEIGHT_DIM = 256
"""Largest channel/feature count a generated garbage weight is made for."""
FLOATS = frozenset({TensorProto.FLOAT, TensorProto.DOUBLE, TensorProto.FLOAT16})
NUMERIC = FLOATS | {TensorProto.INT8, TensorProto.INT16, TensorProto.INT32, TensorProto.INT64, TensorProto.UINT8}
REDUCES = {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
           "ReduceLogSumExp", "ReduceSumSquare", "ReduceLogSum"}
BROADCASTS = {"Add", "Sub", "Mul", "Div", "Pow", "Min", "Max", "Sum", "Mean", "PRelu", "Equal", "Less", "Greater",
              "LessOrEqual", "GreaterOrEqual", "Where", "And", "Or", "Xor", "Mod", "MatMul"}
FREE_AXIS = {"Softmax", "LogSoftmax", "Hardmax", "Flatten", "ArgMax", "ArgMin", "CumSum"}
ALPHAS = {"LeakyRelu": [0.0, 1.0, -1.0, 100.0, 1e-30], "Elu": [0.0, -1.0, 5.0], "Celu": [1e-3, 10.0],
          "ThresholdedRelu": [0.0, -1.0, 1e3], "HardSigmoid": [0.0, -1.0, 10.0], "Selu": [0.0, -2.0]}
RESIZE_ATTRS: dict[str, list[Any]] = {"mode": ["nearest", "linear", "cubic"],
                "coordinate_transformation_mode": ["half_pixel", "pytorch_half_pixel", "align_corners",
                                                   "asymmetric", "tf_crop_and_resize"],
                "nearest_mode": ["round_prefer_floor", "round_prefer_ceil", "floor", "ceil"],
                "cubic_coeff_a": [-0.5, -0.75, 0.0], "exclude_outside": [0, 1]}
CASTS = [TensorProto.FLOAT, TensorProto.DOUBLE, TensorProto.FLOAT16, TensorProto.INT32, TensorProto.INT64,
         TensorProto.INT8, TensorProto.UINT8, TensorProto.BOOL]
INT64_MAX = 2**63 - 1
TypeMap = dict[str, TensorType]


def _garbage(rng: random.Random, shapes: list[tuple[int, ...]]) -> tuple[str, ...]:
    """1-3 garbage op kinds that fit a target of ``shapes[0]`` (Conv: some 4-D shape among ``shapes``)."""
    target = shapes[0]
    kinds = ["Add", "Sub", "Mul"]
    if target and target[-1] <= MAX_WEIGHT_DIM:
        kinds.append("MatMul")
        if len(target) == 2:
            kinds.append("Gemm")
    four = [s for s in shapes if len(s) == 4 and 0 not in s]
    if four and (target if len(target) == 4 else four[0])[1] <= MAX_WEIGHT_DIM and 0 not in target:
        kinds.append("Conv")
    return tuple(rng.choice(kinds) for _ in range(rng.randint(1, 3)))


def _condition(model: onnx.ModelProto, kind: str, rng: random.Random) -> ModelMutation | None:
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
    if kind == "pioc":
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


def _constant(graph: onnx.GraphProto, name: str) -> np.ndarray | None:
    """The value of an initializer or Constant-node output ``name``, else None."""
    for init in graph.initializer:
        if init.name == name:
            return numpy_helper.to_array(init)
    for node in graph.node:
        if node.op_type == "Constant" and name in node.output:
            return next((numpy_helper.to_array(a.t) for a in node.attribute if a.name == "value"), None)
    return None


def _set(index: int, value: Any, dtype: Any = np.int64) -> dict[str, Any]:
    """A change replacing input ``index`` by a fresh constant (or dropping it when ``value`` is None)."""
    if value is None:
        return {"input": index, "value": None}
    array = np.asarray(value, dtype=dtype)
    return {"input": index, "value": array.tolist(), "dtype": str(array.dtype), "shape": list(array.shape)}


def _attr(name: str, value: Any) -> dict[str, Any]:
    return {"attr": name, "value": value}


def _node_edges(graph: onnx.GraphProto, node: onnx.NodeProto, types: TypeMap, rng: random.Random
                ) -> list[list[dict[str, Any]]]:
    """Spec-edge change lists for one node (the per-op table)."""
    op, attrs = node.op_type, {a.name: helper_value(a) for a in node.attribute}
    shape = types.get(node.input[0], (0, None))[1] if node.input else None
    rank = len(shape) if shape is not None else None
    consts = [_constant(graph, i) if i else None for i in node.input]
    out: list[list[dict[str, Any]]] = []
    if rank and isinstance(attrs.get("axis"), int):
        axis = attrs["axis"]
        out.append([_attr("axis", axis - rank if axis >= 0 else axis + rank)])
    if rank and op in FREE_AXIS:
        out.append([_attr("axis", rng.randrange(-rank, rank))])
    if op in REDUCES:
        out.append([_attr("keepdims", 1 - int(attrs.get("keepdims", 1)))])
        if rank and isinstance(attrs.get("axes"), list):
            out += [[_attr("axes", [a - rank if a >= 0 else a for a in attrs["axes"]])], [_attr("axes", None)]]
        if rank and len(consts) > 1 and consts[1] is not None:
            out += [[_set(1, [a - rank if a >= 0 else a for a in consts[1].tolist()])], [_set(1, None)],
                    [_set(1, np.zeros(0, np.int64)), _attr("noop_with_empty_axes", 1)]]
    if op == "Slice" and shape and len(consts) >= 3 and consts[1] is not None and consts[2] is not None:
        starts, n = consts[1].astype(np.int64), len(consts[1])
        given = consts[3] if len(consts) > 3 else None
        axes = given.astype(np.int64) if given is not None else np.arange(n, dtype=np.int64)
        dims = np.array([shape[a] for a in axes], np.int64)
        out += [[_set(1, np.where(starts >= 0, starts - dims, starts))], [_set(2, [INT64_MAX] * n)],
                [_set(2, starts)], [_set(1, dims + 5)], [_set(3, axes - len(shape))],
                [_set(1, [-1] * n), _set(2, [-INT64_MAX - 1] * n), _set(3, axes), _set(4, [-1] * n)],
                [_set(4, [rng.choice([2, 3, -2]) for _ in range(n)]), _set(3, axes)]]
    if op == "Resize":
        for name, values in RESIZE_ATTRS.items():
            out.append([_attr(name, rng.choice(values))])
        if rank:
            out.append([_attr("coordinate_transformation_mode", "tf_crop_and_resize"),
                        _set(1, [0.0] * rank + [1.0] * rank, np.float32)])
        if rank and len(consts) > 2 and consts[2] is not None and consts[2].size == rank:
            spatial = [rng.choice([0.5, 0.75, 1.5, 2.3, 0.34, 3.0, 1.0]) for _ in range(rank - 2)]
            out.append([_set(2, [1.0, 1.0, *spatial], np.float32)])
            full = list(shape or ())
            sizes = full[:2] + [max(1, int(d * s)) for d, s in zip(full[2:], spatial, strict=True)]
            out.append([_set(2, None), _set(3, sizes)] if len(node.input) == 3 else [_set(3, sizes)])
    if op == "Pad":
        out.append([_attr("mode", rng.choice(["constant", "reflect", "edge"]))])
        if rank and len(consts) > 1 and consts[1] is not None:
            out += [[_set(1, [0] * (2 * rank))], [_set(1, [0, 0] + [-1] * (rank - 2) + [0, 0] + [-1] * (rank - 2))]]
    if op == "Clip" and node.input:
        dtype = np.float16 if types.get(node.input[0], (0,))[0] == TensorProto.FLOAT16 else np.float32
        out += [[_set(1, 1.0, dtype), _set(2, -1.0, dtype)], [_set(1, 0.5, dtype), _set(2, 0.5, dtype)],
                [_set(1, -np.inf, dtype), _set(2, np.inf, dtype)], [_set(1, None)], [_set(2, None)]]
    for name in ("alpha", "beta"):
        if op in ALPHAS:
            out.append([_attr(name if op == "HardSigmoid" else "alpha", rng.choice(ALPHAS[op]))])
    if op == "Gather" and shape and len(consts) > 1 and consts[1] is not None:
        dim = shape[int(attrs.get("axis", 0)) % len(shape)]
        out.append([_set(1, np.where(consts[1] >= 0, consts[1] - dim, consts[1]), consts[1].dtype)])
        if consts[1].size == 1:
            out.append([_set(1, consts[1].reshape(()), consts[1].dtype)])
    if op in BROADCASTS:
        for k, value in enumerate(consts):
            if value is not None and value.ndim >= 1 and value.size:
                out += [[_set(k, value.reshape(-1)[0], value.dtype)], [_set(k, value[0], value.dtype)]]
    if op == "Trilu":
        out += [[_attr("upper", 1 - int(attrs.get("upper", 1)))], [_set(1, rng.choice([-1000, 1000, -1, 0, 2]))]]
    if op == "Transpose" and rank:
        out += [[_attr("perm", list(range(rank)))], [_attr("perm", list(range(rank))[::-1])]]
    if op == "Cast":
        out.append([_attr("to", rng.choice(CASTS))])
    if op in ("Squeeze", "Unsqueeze"):
        listed = attrs.get("axes") or (consts[1].tolist() if len(consts) > 1 and consts[1] is not None else None)
        out_rank = len(types.get(node.output[0], (0, ()))[1] or ())
        r = out_rank if op == "Unsqueeze" else rank or 0
        if listed is not None and r:
            negative = [a - r if a >= 0 else a for a in listed]
            out.append([_attr("axes", negative)] if "axes" in attrs else [_set(1, negative)])
        if op == "Squeeze":
            out.append([_attr("axes", None)] if "axes" in attrs else [_set(1, None)])
    if op in ("AveragePool", "MaxPool", "Conv"):
        out += [[_attr("auto_pad", rng.choice(["SAME_UPPER", "SAME_LOWER", "VALID"])), _attr("pads", None)],
                [_attr("ceil_mode", 1 - int(attrs.get("ceil_mode", 0)))] if op != "Conv" else []]
        if op == "AveragePool":
            out.append([_attr("count_include_pad", 1 - int(attrs.get("count_include_pad", 0)))])
    if op == "Gemm":
        out += [[_attr("alpha", rng.choice([0.0, -1.0, 1e-3]))], [_attr("beta", rng.choice([0.0, 2.0]))],
                [_attr("transA", 1 - int(attrs.get("transA", 0)))], [_set(2, None)]]
    if op == "Reshape" and shape and len(consts) > 1 and consts[1] is not None and consts[1].size:
        target = consts[1].astype(np.int64)
        copy = [0 if k < len(shape) and d == shape[k] else d for k, d in enumerate(target.tolist())]
        minus = target.copy()
        minus[rng.randrange(target.size)] = -1
        out += [[_set(1, copy)], [_set(1, minus)]]
    if op == "Expand" and len(consts) > 1 and consts[1] is not None:
        out += [[_set(1, [1])], [_set(1, consts[1][1:])], [_set(1, np.ones_like(consts[1]))]]
    return [c for c in out if c]


def helper_value(attribute: onnx.AttributeProto) -> Any:
    """An attribute's Python value (lists for repeated fields)."""
    value = onnx.helper.get_attribute_value(attribute)
    return list(value) if isinstance(value, (list, tuple)) or type(value).__name__.startswith("Repeated") else value


def edge_candidates(model: onnx.ModelProto, rng: random.Random) -> list[ModelMutation]:
    """Every spec-edge record the per-op table proposes for ``model`` (unchecked), seeds from ``rng``."""
    graph, types = model.graph, tensor_types(model)
    found = []
    for node in graph.node:
        if node.op_type == "Constant" or not node.output:
            continue
        for changes in _node_edges(graph, node, types, rng):
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


def sample_model_mutation(model: onnx.ModelProto, kind: str, rng: random.Random,
                          feeds: dict[str, np.ndarray] | None = None, isolate: bool = False) -> ModelMutation | None:
    """A random ``kind`` record (``uoc``, ``pioc`` or ``edge``) valid for ``model``, or None when none fits.

    ``feeds`` (default: :func:`random_feeds` from ``rng``) are the inputs a spec-edge result must run
    on; UOC and PIOC records need none here (a PIOC profiles when applied). ``isolate``: see
    :func:`mutation_refusal`. Insertions are :func:`seedzer.mutate.graph.insertion.sample_insertion`'s."""
    if kind in ("uoc", "pioc"):
        return _condition(model, kind, rng)
    if kind != "edge":
        raise ValueError(f"unknown model mutation kind {kind!r} (one of {MODEL_MUTATION_KINDS})")
    candidates = edge_candidates(model, rng)
    rng.shuffle(candidates)
    feeds = feeds if feeds is not None else random_feeds(model, rng.getrandbits(31))
    for mutation in candidates[:EDGE_TRIES]:
        if edge_is_valid(model, mutation, feeds, isolate):
            return mutation
    return None
