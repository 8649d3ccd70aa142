"""Small ONNX graph surgery helpers used by constant folding (onnx only)."""

from __future__ import annotations

import onnx
from onnx import helper


def node_reads(node: onnx.NodeProto) -> set[str]:
    """Names a node reads: its inputs and whatever its sub-graphs read."""
    names = set(node.input)
    for attr in node.attribute:
        if attr.type == onnx.AttributeProto.GRAPH:
            names |= graph_reads(attr.g)
        elif attr.type == onnx.AttributeProto.GRAPHS:
            for sub in attr.graphs:
                names |= graph_reads(sub)
    return names


def graph_reads(graph: onnx.GraphProto) -> set[str]:
    """Names a graph reads, its outputs included (a superset of its outer-scope references)."""
    names: set[str] = {o.name for o in graph.output}
    for node in graph.node:
        names |= node_reads(node)
    return names


def set_input_shapes(graph: onnx.GraphProto, shapes: dict[str, list[int]]) -> None:
    """Make the named graph inputs' shapes static with the given dimensions."""
    for info in graph.input:
        dims = shapes.get(info.name)
        if dims is None or not info.type.HasField("tensor_type"):
            continue
        shape = info.type.tensor_type.shape
        del shape.dim[:]
        for d in dims:
            shape.dim.add().dim_value = int(d)


def dead_code_elimination(graph: onnx.GraphProto) -> int:
    """Drop nodes and initializers no graph output depends on; return how many nodes went."""
    needed: set[str] = {o.name for o in graph.output}
    keep: list[onnx.NodeProto] = []
    for node in reversed(graph.node):
        if any(o and o in needed for o in node.output):
            keep.append(node)
            needed |= node_reads(node)
    dropped = len(graph.node) - len(keep)
    if dropped:
        del graph.node[:]
        graph.node.extend(reversed(keep))
    inputs = {i.name for i in graph.input}
    inits = [t for t in graph.initializer if t.name in needed or t.name in inputs]
    if len(inits) != len(graph.initializer):
        del graph.initializer[:]
        graph.initializer.extend(inits)
    return dropped


def inline_if(
    node: onnx.NodeProto, taken: bool, prefix: str
) -> tuple[list[onnx.NodeProto], list[onnx.TensorProto]] | None:
    """Nodes and initializers replacing ``If`` node ``node`` whose condition is ``taken``.

    Names local to the branch get ``prefix/`` so they cannot clash with the outer graph; each branch
    output feeds the matching ``If`` output through an ``Identity``. Returns None (leave the node)
    when the branch holds nested sub-graphs or its outputs do not match the node's.
    """
    attr_name = "then_branch" if taken else "else_branch"
    branch = next((a.g for a in node.attribute if a.name == attr_name), None)
    if branch is None or len(branch.output) != len(node.output):
        return None
    if any(a.type in (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS) for n in branch.node for a in n.attribute):
        return None
    local = {o for n in branch.node for o in n.output if o} | {t.name for t in branch.initializer}

    def rename(name: str) -> str:
        return f"{prefix}/{name}" if name in local else name

    nodes: list[onnx.NodeProto] = []
    for sub in branch.node:
        copy = onnx.NodeProto()
        copy.CopyFrom(sub)
        copy.name = f"{prefix}/{sub.name}" if sub.name else ""
        del copy.input[:]
        copy.input.extend(rename(i) if i else "" for i in sub.input)
        del copy.output[:]
        copy.output.extend(rename(o) if o else "" for o in sub.output)
        nodes.append(copy)
    inits: list[onnx.TensorProto] = []
    for t in branch.initializer:
        ct = onnx.TensorProto()
        ct.CopyFrom(t)
        ct.name = rename(t.name)
        inits.append(ct)
    for out_info, target in zip(branch.output, node.output, strict=True):
        if target:
            nodes.append(helper.make_node("Identity", [rename(out_info.name)], [target], name=f"{prefix}/out_{target}"))
    return nodes, inits
