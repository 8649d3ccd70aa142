"""Replay of an operator insertion: a few nodes around one operator of TVM's importer, added to a model.

An ``insert`` :class:`~seedzer.kernel.graph.case.ModelMutation` records everything its nodes need,
so :func:`apply_insert` rebuilds the same model from it, deterministically (the sampler,
:mod:`seedzer.mutate.graph.insertion`, chose and validated it):

- ``params["opset"]``: the default-domain opset the model is raised to first (:func:`raise_opset`:
  the opset import alone when no node of the model changes meaning, else onnx's version converter);
- ``params["nodes"]``: the nodes, in order, each ``{"op", "domain", "inputs", "outputs", "attrs"}``;
  an input is ``"$"`` (the record's target tensor), ``"%k"``/``"%k.j"`` (output ``j`` of node ``k``),
  ``"=name"`` (another tensor of the model), ``""`` (an absent optional input), ``{"value", "dtype",
  "shape"}`` (a constant), ``{"fill", "dtype", "shape", "low", "high"}`` (a constant drawn from the
  record's seed) or ``{"input": k}`` (the ``k``-th graph input the record adds);
- ``params["inputs"]``: graph inputs the record adds (``{"name", "dtype", "shape", "low", "high"}``:
  an index input and the range its random values keep to, see :mod:`seedzer.kernel.graph.inputs`);
- ``params["exports"]``: the node outputs that become graph outputs, so the model's outputs depend
  on the inserted operator: their types inferred, else declared by ``params["export_types"]`` (each
  ``[element type, rank]``, dimensions symbolic) where onnx's inference cannot (a contrib operator).

Attribute values are JSON: numbers, strings, lists, ``{"tensor": {"value", "dtype", "shape"}}`` and
``{"type": {"elem", "shape"}}``. A record that no longer fits (its target gone, a tensor it reads
gone) raises ``ValueError`` with one line. Depends on numpy, onnx and the model mutations' graph
helpers only (copied verbatim into repro.py).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

import numpy as np
import onnx
from onnx import helper, numpy_helper

from seedzer.kernel.graph.case import ModelMutation
from seedzer.kernel.graph.model_mutations import GraphBuilder, opset_version, retype_outputs

# --- kernel code (everything below is copied verbatim into repro.py) ---
MAX_IR_VERSION = 10
"""The newest IR version an inserted model is given (onnxruntime reads newer; TVM's importer is older)."""
MS_DOMAIN = "com.microsoft"
"""The domain of onnxruntime's contrib operators (some of which TVM's importer converts)."""


def _since(op: str, version: int, domain: str = "") -> int | None:
    """The version of ``op``'s schema in force at opset ``version`` (None: no schema)."""
    try:
        return int(onnx.defs.get_schema(op, version, domain).since_version)
    except Exception:  # onnx raises SchemaError for an unknown operator or version
        return None


def raise_opset(model: onnx.ModelProto, version: int) -> None:
    """Give ``model`` (in place) the default-domain opset ``version``: the import alone when every node
    of the default domain keeps its schema, else onnx's version converter (ValueError when it fails)."""
    current = opset_version(model)
    if version == current:
        return
    if version < current:
        raise ValueError(f"insert lowers the opset from {current} to {version}: not supported")
    ops = {n.op_type for n in model.graph.node if n.domain in ("", "ai.onnx")}
    if all(_since(op, current) == _since(op, version) for op in ops):
        for entry in model.opset_import:
            if entry.domain in ("", "ai.onnx"):
                entry.version = version
        return
    try:
        converted = onnx.version_converter.convert_version(model, version)
    except Exception as exc:  # the converter raises RuntimeError/ValueError/checker errors
        raise ValueError(f"the model does not convert to opset {version}: {str(exc).splitlines()[0][:200]}") from None
    ir = model.ir_version
    model.CopyFrom(converted)
    model.ir_version = max(ir, min(model.ir_version, MAX_IR_VERSION))


def _fill(spec: dict[str, Any], rng: random.Random) -> np.ndarray:
    """A constant drawn from ``rng``: ``int`` (integers in [low, high]), ``uniform`` (floats in [low,
    high)) or ``bool`` (fair coins), of ``shape`` and ``dtype``."""
    shape = tuple(int(d) for d in spec["shape"])
    size = int(np.prod(shape)) if shape else 1
    method, low, high = spec["fill"], spec.get("low", -1.0), spec.get("high", 1.0)
    if method == "int":
        values: list[Any] = [rng.randint(int(low), int(high)) for _ in range(size)]
    elif method == "bool":
        values = [rng.random() < 0.5 for _ in range(size)]
    else:
        values = [rng.uniform(float(low), float(high)) for _ in range(size)]
    return np.array(values, dtype=spec["dtype"]).reshape(shape)


def _attribute(name: str, value: Any) -> onnx.AttributeProto:
    """An attribute from its JSON value (see the module docstring)."""
    if isinstance(value, dict) and "tensor" in value:
        t = value["tensor"]
        array = np.asarray(t["value"], dtype=t["dtype"]).reshape(tuple(t["shape"]))
        return helper.make_attribute(name, numpy_helper.from_array(array, name))
    if isinstance(value, dict) and "type" in value:
        t = value["type"]
        return helper.make_attribute(name, helper.make_tensor_type_proto(int(t["elem"]), t.get("shape")))
    return helper.make_attribute(name, value)


def added_inputs(mutations: Sequence[ModelMutation]) -> list[dict[str, Any]]:
    """The graph inputs the insertions among ``mutations`` add (their ``params["inputs"]``), in order."""
    return [dict(spec) for m in mutations if m.kind == "insert" for spec in m.params.get("inputs", ())]


def apply_insert(model: onnx.ModelProto, m: ModelMutation) -> None:
    """Apply one insertion record in place (see the module docstring)."""
    known = {o for n in model.graph.node for o in n.output} | {i.name for i in model.graph.input} | \
        {i.name for i in model.graph.initializer}
    if m.target not in known:
        raise ValueError(f"insert target {m.target!r} is gone (no node computes it)")
    if m.params.get("opset"):
        raise_opset(model, int(m.params["opset"]))
    graph = model.graph  # after the opset: a converted model is copied in
    b = GraphBuilder(model, m)
    added = []
    for spec in m.params.get("inputs", ()):
        if spec["name"] in known:
            raise ValueError(f"insert input {spec['name']!r} already names a tensor of the model")
        graph.input.append(helper.make_tensor_value_info(spec["name"], helper.np_dtype_to_tensor_dtype(
            np.dtype(spec["dtype"])), list(spec["shape"])))
        added.append(spec["name"])
    outputs: list[list[str]] = []

    def resolve(ref: Any) -> str:
        if isinstance(ref, dict) and "input" in ref:
            return added[int(ref["input"])]
        if isinstance(ref, dict):
            array = _fill(ref, b.rng) if "fill" in ref else \
                np.asarray(ref["value"], dtype=ref["dtype"]).reshape(tuple(ref["shape"]))
            return b.const(array, array.dtype)
        if ref == "$":
            return m.target
        if ref.startswith("%"):
            node, _, out = ref[1:].partition(".")
            return outputs[int(node)][int(out or 0)]
        if ref.startswith("="):
            if ref[1:] not in known:
                raise ValueError(f"insert operand {ref[1:]!r} is gone")
            return ref[1:]
        return str(ref)

    for spec in m.params.get("nodes", ()):
        domain = str(spec.get("domain", ""))
        if domain and not any(o.domain == domain for o in model.opset_import):
            model.opset_import.append(helper.make_opsetid(domain, 1))
        names = [b.fresh(spec["op"].lower()) for _ in range(int(spec.get("outputs", 1)))]
        node = helper.make_node(spec["op"], [resolve(r) for r in spec.get("inputs", ())], names,
                                name=b.fresh("n_" + spec["op"].lower()), domain=domain or None)
        node.attribute.extend(_attribute(k, v) for k, v in sorted(spec.get("attrs", {}).items()))
        graph.node.append(node)
        outputs.append(names)
    declared = list(m.params.get("export_types", ()))
    for k, ref in enumerate(m.params.get("exports", ())):
        name = resolve(ref)
        if k < len(declared) and declared[k] and declared[k][0]:
            elem, rank = int(declared[k][0]), int(declared[k][1])
            graph.output.append(helper.make_tensor_value_info(name, elem, [f"{name}_d{i}" for i in range(rank)]))
        else:
            graph.output.append(helper.make_empty_tensor_value_info(name))
    retype_outputs(model)
