"""ONNX graph surgery for reduction: keep a subset of a model's nodes and repair what that cuts.

:class:`GraphIndex` describes one model once (producers, consumers, value types from shape
inference, topological node order); :meth:`GraphIndex.candidate` builds the model that keeps only
some nodes. A value a removed node produced and a kept node (or a graph output) still reads is
either *rewired* to a value of the same type and shape that the removed node read (``Relu(x)``
becomes ``x``), or *cut*: it becomes a new graph input of its inferred type. A kept node whose
outputs nobody reads any more has them exposed as new graph outputs, so it stays alive. Unused
inputs and initializers go, and the result must pass ``onnx.checker`` with full shape inference,
else no candidate is returned. Only ``onnx`` is needed here.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from enum import StrEnum

import onnx
from onnx import helper

from seedzer.generate.nnsmith_adapter import MAX_IR_VERSION
from seedzer.load.graphs import graph_reads, node_reads


class Cut(StrEnum):
    """How a value whose producer was removed is replaced for its remaining readers."""

    REWIRE = "rewire"  # an input of the removed producer with the same type and shape, else a new input
    INPUT = "input"  # always a new graph input


def _tensor_type(tp: onnx.TypeProto | None) -> tuple[int, tuple[int | str, ...]] | None:
    """``(elem_type, dims)`` of a fully known tensor type (every dim a value or a parameter), else None."""
    if tp is None or not tp.HasField("tensor_type"):
        return None
    tt = tp.tensor_type
    if not tt.elem_type or not tt.HasField("shape"):
        return None
    dims: list[int | str] = []
    for d in tt.shape.dim:
        if d.HasField("dim_value"):
            dims.append(int(d.dim_value))
        elif d.dim_param:
            dims.append(d.dim_param)
        else:
            return None
    return int(tt.elem_type), tuple(dims)


def _initializer_type(t: onnx.TensorProto) -> onnx.TypeProto:
    return helper.make_tensor_type_proto(t.data_type, list(t.dims))


def value_types(model: onnx.ModelProto) -> dict[str, onnx.TypeProto]:
    """Type of every named value of the top-level graph that ONNX shape inference can tell."""
    try:
        inferred = onnx.shape_inference.infer_shapes(model, strict_mode=False, data_prop=True)
    except Exception:  # shape inference raises several types on odd models
        inferred = model
    g = inferred.graph
    types: dict[str, onnx.TypeProto] = {t.name: _initializer_type(t) for t in g.initializer}
    for info in list(g.value_info) + list(g.input) + list(g.output):
        if info.type.HasField("tensor_type") or info.name not in types:
            types[info.name] = info.type
    for node in g.node:  # Constant nodes carry their own type
        if node.op_type == "Constant" and node.output:
            for a in node.attribute:
                if a.name == "value" and a.type == onnx.AttributeProto.TENSOR:
                    types.setdefault(node.output[0], _initializer_type(a.t))
    return types


@dataclass(frozen=True)
class Candidate:
    """A reduced model and what building it did: values rewired, cut into inputs, exposed as outputs."""

    model: onnx.ModelProto
    rewired: int
    cut: int
    exposed: int


class GraphIndex:
    """Producers, consumers and types of one model's top-level graph, nodes in topological order."""

    def __init__(self, model: onnx.ModelProto) -> None:
        self.model = model
        g = model.graph
        self.nodes: list[onnx.NodeProto] = list(g.node)
        self.producer: dict[str, int] = {o: i for i, n in enumerate(self.nodes) for o in n.output if o}
        self.consumers: dict[str, list[int]] = {}
        for i, n in enumerate(self.nodes):
            for name in sorted(node_reads(n)):
                self.consumers.setdefault(name, []).append(i)
        self.outputs: list[str] = [o.name for o in g.output]
        self.types = value_types(model)
        self.used: set[str] = set(self.consumers) | set(self.outputs)

    def __len__(self) -> int:
        return len(self.nodes)

    def all_nodes(self) -> frozenset[int]:
        """Indices of every node."""
        return frozenset(range(len(self.nodes)))

    # --- sub-graphs ------------------------------------------------------------------------
    def exclusive_ancestors(self, keep: frozenset[int], node: int) -> frozenset[int]:
        """``node`` plus the kept nodes that feed only it (directly or through each other)."""
        cone = {node}
        changed = True
        while changed:
            changed = False
            for i in sorted(keep - cone, reverse=True):
                outs = [o for o in self.nodes[i].output if o]
                readers = {c for o in outs for c in self.consumers.get(o, []) if c in keep}
                feeds = any(c in cone for c in readers)
                if feeds and readers <= cone and not any(o in self.outputs for o in outs):
                    cone.add(i)
                    changed = True
        return frozenset(cone)

    def dominated(self, keep: frozenset[int], node: int) -> frozenset[int]:
        """``node`` plus the kept nodes whose every kept producer lies in that set (what only it feeds)."""
        cone = {node}
        for i in sorted(keep):
            if i <= node:
                continue
            producers = {self.producer[v] for v in node_reads(self.nodes[i]) if v in self.producer}
            kept = {p for p in producers if p in keep}
            if kept and kept <= cone:
                cone.add(i)
        return frozenset(cone)

    # --- candidates ------------------------------------------------------------------------
    def candidate(self, keep: Iterable[int], cut: Cut = Cut.REWIRE) -> Candidate | None:
        """The model keeping only nodes ``keep``, repaired as the module doc says; None if invalid."""
        kept = frozenset(keep)
        if not kept:
            return None
        subst: dict[str, str] = {}
        new_inputs: list[onnx.ValueInfoProto] = []

        def resolve(value: str, allow_cut: bool = True) -> str | None:
            if not value or value not in self.producer or self.producer[value] in kept:
                return value
            if value in subst:
                return subst[value]
            want = _tensor_type(self.types.get(value))
            if want is None:
                return None
            if cut is Cut.REWIRE:
                for src in self.nodes[self.producer[value]].input:
                    if src and _tensor_type(self.types.get(src)) == want:
                        target = resolve(src, allow_cut)
                        if target is not None:
                            subst[value] = target
                            return target
            if not allow_cut:
                return None
            subst[value] = value
            new_inputs.append(helper.make_value_info(value, self.types[value]))
            return value

        nodes: list[onnx.NodeProto] = []
        rewired = 0
        for i in sorted(kept):
            node = copy.deepcopy(self.nodes[i])
            inputs = [resolve(v) for v in node.input]
            if any(v is None for v in inputs):
                return None
            rewired += sum(1 for old, new in zip(node.input, inputs, strict=True) if old != new)
            del node.input[:]
            node.input.extend(v or "" for v in inputs)
            outer = node_reads(self.nodes[i]) - set(self.nodes[i].input)
            if any(resolve(v) != v for v in outer):  # sub-graphs read it by name: only a cut keeps it
                return None
            nodes.append(node)
        outputs, exposed, rewired_outputs = self._outputs(kept, nodes, resolve)
        if not outputs:
            return None
        model = self._assemble(nodes, new_inputs, outputs)
        try:
            onnx.checker.check_model(model, full_check=True)
        except Exception:  # ValidationError, InferenceError
            return None
        final = graph_reads(model.graph)
        cuts = sum(1 for i in new_inputs if i.name in final)
        return Candidate(model, rewired + rewired_outputs, cuts, exposed)

    def _outputs(
        self, kept: frozenset[int], nodes: list[onnx.NodeProto], resolve: Callable[[str, bool], str | None]
    ) -> tuple[list[onnx.ValueInfoProto], int, int]:
        """Graph outputs of a candidate: original ones still produced (or rewired), plus exposed values.

        Also returns how many values were exposed and how many original outputs were rewired."""
        produced = {o for n in nodes for o in n.output if o}
        read: set[str] = set()
        for n in nodes:
            read |= node_reads(n)
        names: list[str] = []
        rewired = 0
        for out in self.outputs:
            target = resolve(out, False)
            if target and target in produced and target not in names:
                names.append(target)
                rewired += target != out
        exposed = 0
        live = set(names) | read
        for i in sorted(kept):
            outs = [o for o in self.nodes[i].output if o]
            if any(o in live for o in outs):
                continue
            for o in outs:
                if o in self.used and o not in names:
                    names.append(o)
                    exposed += 1
        infos = []
        for name in names:
            tp = self.types.get(name)
            info = helper.make_value_info(name, tp) if tp is not None else helper.make_empty_tensor_value_info(name)
            infos.append(info)
        return infos, exposed, rewired

    def _assemble(
        self, nodes: list[onnx.NodeProto], new_inputs: list[onnx.ValueInfoProto], outputs: list[onnx.ValueInfoProto]
    ) -> onnx.ModelProto:
        g = self.model.graph
        graph = helper.make_graph(nodes, g.name or "reduced", [], outputs)
        reads = graph_reads(graph)
        graph.input.extend(i for i in g.input if i.name in reads)
        graph.input.extend(i for i in new_inputs if i.name in reads)
        graph.initializer.extend(t for t in g.initializer if t.name in reads)
        graph.sparse_initializer.extend(t for t in g.sparse_initializer if t.values.name in reads)
        model = onnx.ModelProto()
        model.CopyFrom(self.model)
        model.graph.CopyFrom(graph)
        return model


def initializer_to_input(model: onnx.ModelProto, name: str) -> onnx.ModelProto | None:
    """``model`` with initializer ``name`` turned into a graph input of its type (None if absent/invalid)."""
    found = [t for t in model.graph.initializer if t.name == name]
    if not found:
        return None
    out = onnx.ModelProto()
    out.CopyFrom(model)
    keep = [t for t in out.graph.initializer if t.name != name]
    del out.graph.initializer[:]
    out.graph.initializer.extend(keep)
    if not any(i.name == name for i in out.graph.input):
        out.graph.input.append(helper.make_value_info(name, _initializer_type(found[0])))
    try:
        onnx.checker.check_model(out, full_check=True)
    except Exception:  # ValidationError, InferenceError
        return None
    return out


def export(model: onnx.ModelProto) -> bytes:
    """Serialized ``model`` with an IR version onnxruntime and TVM's importer accept."""
    out = onnx.ModelProto()
    out.CopyFrom(model)
    out.ir_version = min(out.ir_version or MAX_IR_VERSION, MAX_IR_VERSION)
    return bytes(out.SerializeToString())


def node_count(model: onnx.ModelProto) -> int:
    """Nodes of the top-level graph."""
    return len(model.graph.node)


def op_types(model: onnx.ModelProto) -> list[str]:
    """Operator types of the top-level graph's nodes, in order."""
    return [n.op_type for n in model.graph.node]
