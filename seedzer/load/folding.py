"""ONNX constant folding: evaluate constant sub-graphs with ``onnx.reference`` and store the results.

Many of NNSmith's exported models compute ``Pad`` amounts (and similar shape tensors) through
sub-graphs of constants that TVM's ONNX importer cannot handle (it loses the shape of the
intermediate tensors; how many: docs/measurements.md, 'Loading'). Folding makes those models
importable, in rounds until nothing changes:

* every node whose inputs are all constant becomes an initializer holding its value (evaluated one
  node at a time, so a node ``onnx.reference`` cannot compute just stays);
* ``Shape``/``Size`` of a tensor whose shape ONNX shape inference knows statically become constants
  (after the caller's bindings of symbolic input dimensions are written into the graph);
* an ``If`` whose condition became constant is replaced by the nodes of the branch it takes;
* nodes no graph output depends on any more are dropped.

Only ``onnx`` and ``numpy`` are needed here, no TVM.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import onnx
from onnx import helper, numpy_helper
from onnx.reference import ReferenceEvaluator

from seedzer.load.graphs import dead_code_elimination, inline_if, node_reads, set_input_shapes

NONDETERMINISTIC_OPS = frozenset(
    {"RandomNormal", "RandomNormalLike", "RandomUniform", "RandomUniformLike", "Bernoulli", "Multinomial"}
)
"""Ops whose output must never be frozen into a constant."""

CONTROL_FLOW_OPS = frozenset({"If", "Loop", "Scan", "SequenceMap"})
"""Ops with sub-graphs; never evaluated (a constant-condition ``If`` is inlined instead)."""

DEFAULT_MAX_FOLDED_BYTES = 256 * 1024 * 1024
"""Folded tensors larger than this (in total) abort folding: the model would balloon."""

MAX_ROUNDS = 8


class FoldError(Exception):
    """Constant folding cannot proceed (the folded constants would be too large)."""


@dataclass
class FoldResult:
    """A folded model and how many nodes were folded away (constants, shapes, inlined ``If``s)."""

    model: onnx.ModelProto
    folded_nodes: int
    new_initializers: int


def _is_foldable(node: onnx.NodeProto, constants: dict[str, np.ndarray]) -> bool:
    if node.domain not in ("", "ai.onnx"):
        return False
    if node.op_type in NONDETERMINISTIC_OPS or node.op_type in CONTROL_FLOW_OPS:
        return False
    if any(a.type in (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS) for a in node.attribute):
        return False
    return all(name == "" or name in constants for name in node.input)


def _inferred(model: onnx.ModelProto) -> onnx.GraphProto:
    try:
        return onnx.shape_inference.infer_shapes(model, data_prop=True).graph
    except Exception:  # inference is best effort; folding still works without it
        return model.graph


def _types_and_shapes(model: onnx.ModelProto) -> tuple[dict[str, int], dict[str, list[int]]]:
    """Element types of every typed value, and the fully static shapes ONNX shape inference finds."""
    g = _inferred(model)
    types: dict[str, int] = {}
    shapes: dict[str, list[int]] = {}
    for vi in [*g.input, *g.value_info, *g.output]:
        if not vi.type.HasField("tensor_type"):
            continue
        tt = vi.type.tensor_type
        if tt.elem_type:
            types[vi.name] = tt.elem_type
        if tt.HasField("shape") and all(d.HasField("dim_value") for d in tt.shape.dim):
            shapes[vi.name] = [int(d.dim_value) for d in tt.shape.dim]
    for t in model.graph.initializer:
        shapes[t.name] = list(t.dims)
    return types, shapes


def _attr(node: onnx.NodeProto, name: str, default: int | None) -> int | None:
    for a in node.attribute:
        if a.name == name:
            return int(helper.get_attribute_value(a))
    return default


def _shape_value(node: onnx.NodeProto, shapes: dict[str, list[int]]) -> np.ndarray | None:
    """Value of a ``Shape``/``Size`` node whose input shape is static, else None."""
    if node.domain not in ("", "ai.onnx") or node.op_type not in ("Shape", "Size"):
        return None
    shape = shapes.get(node.input[0])
    if shape is None:
        return None
    if node.op_type == "Size":
        return np.asarray(int(np.prod(shape, dtype=np.int64)), dtype=np.int64)
    start, end = _attr(node, "start", 0), _attr(node, "end", None)
    return np.asarray(shape[start:end], dtype=np.int64)


def _evaluate_node(model: onnx.ModelProto, node: onnx.NodeProto, values: dict[str, np.ndarray]) -> list[np.ndarray]:
    opsets = {o.domain or "": o.version for o in model.opset_import}
    evaluator = ReferenceEvaluator(node, opsets=opsets, functions=list(model.functions) or None)
    feeds = {name: values[name] for name in node.input if name}
    return [np.asarray(v) for v in evaluator.run(None, feeds)]


def _fold_round(model: onnx.ModelProto, max_bytes: int) -> tuple[int, int]:
    """One round of value and shape folding, in place; returns (nodes folded, initializers added)."""
    graph = model.graph
    graph_inputs = {i.name for i in graph.input}
    values = {t.name: numpy_helper.to_array(t) for t in graph.initializer if t.name not in graph_inputs}
    types, shapes = _types_and_shapes(model)
    folded_idx: set[int] = set()
    total = 0
    for idx, node in enumerate(graph.node):
        shape_value = _shape_value(node, shapes)
        if shape_value is not None:
            outs = [shape_value]
        elif _is_foldable(node, values):
            try:
                outs = _evaluate_node(model, node, values)
            except Exception:  # onnx.reference raises many types; keep the node unfolded
                continue
        else:
            continue
        for name, value in zip(node.output, outs, strict=False):
            if not name:
                continue
            want = types.get(name)
            if want:
                value = value.astype(helper.tensor_dtype_to_np_dtype(want), copy=False)
            values[name] = value
            total += value.nbytes
        if total > max_bytes:
            raise FoldError(f"folded constants need over {total} bytes, more than the limit of {max_bytes}")
        folded_idx.add(idx)
    if not folded_idx:
        return 0, 0
    needed: set[str] = {o.name for o in graph.output}
    for idx, node in enumerate(graph.node):
        if idx not in folded_idx:
            needed |= node_reads(node)
    boundary = [n for i in sorted(folded_idx) for n in graph.node[i].output if n and n in needed]
    keep = [n for i, n in enumerate(graph.node) if i not in folded_idx]
    del graph.node[:]
    graph.node.extend(keep)
    existing = {t.name for t in graph.initializer}
    added = 0
    for name in boundary:
        if name not in existing:
            graph.initializer.append(numpy_helper.from_array(values[name], name))
            added += 1
    produced = set(boundary)
    infos = [vi for vi in graph.value_info if vi.name not in produced]
    del graph.value_info[:]
    graph.value_info.extend(infos)
    return len(folded_idx), added


def _inline_constant_ifs(model: onnx.ModelProto) -> int:
    """Replace every ``If`` whose condition is an initializer by its taken branch; return how many."""
    graph = model.graph
    graph_inputs = {i.name for i in graph.input}
    consts = {t.name: t for t in graph.initializer if t.name not in graph_inputs}
    new_nodes: list[onnx.NodeProto] = []
    extra_inits: list[onnx.TensorProto] = []
    count = 0
    for idx, node in enumerate(graph.node):
        cond = consts.get(node.input[0]) if node.op_type == "If" and node.domain in ("", "ai.onnx") else None
        inlined = None
        if cond is not None:
            taken = bool(np.asarray(numpy_helper.to_array(cond)).reshape(-1)[0])
            inlined = inline_if(node, taken, f"inl{idx}")
        if inlined is None:
            new_nodes.append(node)
            continue
        nodes, inits = inlined
        new_nodes.extend(nodes)
        extra_inits.extend(inits)
        count += 1
    if count:
        del graph.node[:]
        graph.node.extend(new_nodes)
        graph.initializer.extend(extra_inits)
    return count


def fold_constants(
    model: onnx.ModelProto,
    max_bytes: int = DEFAULT_MAX_FOLDED_BYTES,
    input_shapes: dict[str, list[int]] | None = None,
) -> FoldResult:
    """Return a folded copy of ``model`` (see the module doc); ``model`` itself is not modified.

    ``input_shapes`` binds the dimensions of the named graph inputs first (the loader passes its
    bindings of symbolic dimensions). Raises :class:`FoldError` when the folded tensors of one
    round exceed ``max_bytes``. A model with nothing to fold comes back unchanged
    (``folded_nodes == 0``).
    """
    work = onnx.ModelProto()
    work.CopyFrom(model)
    if input_shapes:
        set_input_shapes(work.graph, input_shapes)
    folded = added = 0
    for _ in range(MAX_ROUNDS):
        n, a = _fold_round(work, max_bytes)
        m = _inline_constant_ifs(work)
        folded, added = folded + n + m, added + a
        if n == 0 and m == 0:
            break
    if folded == 0:
        return FoldResult(model, 0, 0)
    dead_code_elimination(work.graph)
    return FoldResult(work, folded, added)
