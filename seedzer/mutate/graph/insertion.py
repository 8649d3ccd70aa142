"""Operator reach by schema-driven insertion: one node of an operator of TVM's importer, added to a
model at a tensor of a type it accepts, its output made a graph output (TVM-free).

:func:`sample_insertion` picks an operator among those the caller names (TVM's converter map, read
at run time: :func:`seedzer.load.importer_ops.importer_operators`), weighted as the caller says
(toward operators not yet exercised); one of the opsets in which it changed (the model raised to it
when newer, :func:`seedzer.kernel.graph.insertion.raise_opset`); a tensor of the model (cast,
sliced or reshaped to a type, size and rank the operator takes when none fits); its attributes from
its schema (:mod:`seedzer.mutate.graph.schema_draw`) and its other inputs by role
(:mod:`seedzer.mutate.graph.insert_roles`, :mod:`seedzer.mutate.graph.insert_layers`; the per-operator
knowledge is :mod:`seedzer.mutate.graph.op_table`).
A sequence or optional it reads or makes is built or taken apart by the operators of its kind, so
the model's outputs stay tensors. The record is kept only when the specification accepts the
mutated model (:func:`seedzer.mutate.graph.model_mutators.mutation_refusal`); its refusals are counted
(:class:`InsertionStats`).
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import onnx
from onnx import helper

from seedzer.kernel.graph.case import GRAPH_INPUT_SEED, ModelMutation
from seedzer.kernel.graph.inputs import bounded_inputs
from seedzer.kernel.graph.model_mutations import opset_version, tensor_types
from seedzer.kernel.graph.mutant import apply_model_mutations
from seedzer.kernel.onnx.runtime import onnxruntime_max_opset, onnxruntime_outputs
from seedzer.kernel.onnx.validity import first_line
from seedzer.mutate.graph.insert_layers import ROLES
from seedzer.mutate.graph.insert_roles import operand, sanitize
from seedzer.mutate.graph.insert_values import add_node, const
from seedzer.mutate.graph.model_mutators import mutation_refusal, random_feeds
from seedzer.mutate.graph.op_schema import (
    DEFAULT_DOMAIN,
    OPTIONAL,
    SINGLE,
    VARIADIC,
    Formal,
    Schema,
    domain_of,
    newest_opset,
    op_schema,
    versions,
)
from seedzer.mutate.graph.op_table import DEPRECATED_AT, NEVER_INSERTED, USABLE_DTYPES, rule
from seedzer.mutate.graph.schema_draw import Draw, draw_attributes, elements, factor_shape

OPERATOR_TRIES = 4
"""Operators tried (each with :data:`DRAW_TRIES` draws) before a sampler gives up."""
DRAW_TRIES = 3
"""Draws of one operator tried (applied and validated) before the next operator."""
OPTIONAL_OUTPUT = 0.5
"""How often an optional output is asked for."""


@dataclass
class InsertionStats:
    """What a sampler tried: records kept per operator, refusals by reason (the first words of the
    engine's line) and per operator, and operators that could not be drawn at all."""

    kept: Counter[str] = field(default_factory=Counter)
    refused: Counter[str] = field(default_factory=Counter)
    refused_ops: Counter[str] = field(default_factory=Counter)
    undrawable: Counter[str] = field(default_factory=Counter)

    def refusal(self, op: str, reason: str) -> None:
        """Count one refusal of ``op``'s record."""
        self.refused[reason_key(reason)] += 1
        self.refused_ops[op] += 1


def reason_key(reason: str) -> str:
    """A refusal's engine and error type (``onnx.reference refuses the model (Pad): ValueError``)."""
    head, _, rest = reason.partition(": ")
    return f"{head}: {rest.split(':', 1)[0]}" if rest else head


def numpy_name(type_str: str) -> str | None:
    """``tensor(float)`` -> ``float32`` (None for a sequence, an optional or a type numpy lacks)."""
    if not type_str.startswith("tensor("):
        return None
    try:
        code = getattr(onnx.TensorProto, type_str[7:-1].upper())
        return str(np.dtype(helper.tensor_dtype_to_np_dtype(code)))
    except (AttributeError, KeyError, TypeError):
        return None


def element_type(type_str: str) -> str:
    """The tensor type inside a sequence or an optional type (``seq(tensor(float))`` -> ``tensor(float)``)."""
    for prefix in ("seq(", "optional("):
        if type_str.startswith(prefix):
            return type_str[len(prefix):-1]
    return type_str


def allowed_dtypes(schema: Schema, formal: Formal, narrower: tuple[str, ...] | None) -> list[str]:
    """The usable element types a formal input takes (:data:`~seedzer.mutate.graph.op_table.USABLE_DTYPES`),
    a sequence's or an optional's elements' for one of those."""
    names = {numpy_name(element_type(t)) for t in schema.allowed(formal.type_str)}
    if narrower is not None:
        names &= set(narrower) | ({"int16"} & set(narrower))
        return [n for n in narrower if n in names]
    return [n for n in USABLE_DTYPES if n in names]


def _all_of_type(schema: Schema, type_str: str, prefix: str) -> bool:
    allowed = schema.allowed(type_str)
    return bool(allowed) and all(t.startswith(prefix) for t in allowed)


def choose_version(op: str, current: int, top: int, rng: random.Random) -> int | None:
    """The opset the model needs for a version of ``op`` that changed at or after the one in force
    (one of them at random), or None when ``op`` has no usable schema up to ``top``."""
    found = [v for v in versions(op, top) if v <= top]
    if not found:
        return None
    in_force = max((v for v in found if v <= current), default=None)
    reachable = [v for v in found if in_force is None or v >= in_force]
    if not reachable:
        return None
    return max(current, rng.choice(reachable))


def _adapt(d: Draw, target: tuple[str, tuple[int, ...]], allowed: list[str], low: int, high: int,
           limit: int) -> None:
    """Make the data a tensor the operator takes: sliced under ``limit`` elements, reshaped into rank
    ``[low, high]``, cast to an allowed type (a float-to-integer cast sanitized)."""
    dtype, shape = target
    if elements(shape) > limit:
        dims = list(shape)
        while elements(tuple(dims)) > limit:
            i = dims.index(max(dims))
            dims[i] = max(1, dims[i] // 2)
        d.data = add_node(d, "Slice", [d.data, const([0] * len(dims), np.int64), const(dims, np.int64)])
        shape = tuple(dims)
    if not low <= len(shape) <= high:
        shape = factor_shape(elements(shape), d.rng.randint(low, high), d.rng)
        d.data = add_node(d, "Reshape", [d.data, const(list(shape), np.int64)])
    if dtype not in allowed:
        new = d.rng.choice(allowed)
        if np.dtype(new).kind in "iu" and np.dtype(dtype).kind == "f":
            d.dtype = dtype
            d.data = sanitize(d, d.data, new)
        d.data = add_node(d, "Cast", [d.data], to=int(helper.np_dtype_to_tensor_dtype(np.dtype(new))))
        dtype = new
    d.shape, d.dtype = tuple(shape), dtype


def _pick_target(types: dict[str, tuple[str, tuple[int, ...]]], allowed: list[str], low: int, high: int,
                 limit: int, rng: random.Random) -> str:
    """A tensor of the model: one of a type, rank and size the operator takes when there is one."""
    fitting = [n for n, (dt, s) in types.items() if dt in allowed and low <= len(s) <= high and elements(s) <= limit]
    return rng.choice(fitting or sorted(types))


def _role(d: Draw, formal: Formal, data_formal: Formal | None) -> str:
    """The role of a formal input: its rule's, a sequence or optional built from the data, the data
    itself (``$data``), an operand of the data's type, or absent when optional."""
    name = d.rule.roles.get(formal.name)
    if name is not None:
        return name
    if _all_of_type(d.schema, formal.type_str, "seq("):
        return "sequence"
    if _all_of_type(d.schema, formal.type_str, "optional("):
        return "optional"
    if formal is data_formal:
        return "$data"
    if data_formal is not None and formal.type_str == data_formal.type_str:
        return "operand"
    if formal.option == OPTIONAL:
        return "absent"
    raise LookupError(f"no role for input {formal.name} of {d.schema.name}")


def _inputs(d: Draw, data_formal: Formal | None) -> list[Any]:
    """The operator's inputs in order, each by its role (the data's reference last, since a role may
    change it); trailing absent ones dropped."""
    refs: list[Any] = []
    for formal in d.schema.inputs:
        name = _role(d, formal, data_formal)
        if name == "$data":
            refs.append("$data")
            continue
        got = ROLES[name](d, formal)
        if formal is data_formal and name not in ("sequence", "optional"):
            got = ["$data", *(got if isinstance(got, list) else [got])]
        elif formal.option == VARIADIC and name == "operand":
            got = [got] + [ROLES[name](d, formal) for _ in range(d.rng.randint(0, 1))]
        refs.append(got)
    flat: list[Any] = []
    for ref in refs:
        flat.extend(ref if isinstance(ref, list) else [ref])
    while flat and flat[-1] == "":
        flat.pop()
    return [d.data if r == "$data" else r for r in flat]


def _outputs(d: Draw) -> int:
    """How many outputs to ask of the operator: every required one, optional ones at random (a prefix)."""
    if "outputs" in d.scratch:
        return int(d.scratch["outputs"])
    count = 0
    for formal in d.schema.outputs:
        if formal.option in (SINGLE, VARIADIC) or d.rng.random() < OPTIONAL_OUTPUT:
            count += 1
        else:
            break
    return max(min(count, d.rule.outputs or count), 1)


def _exports(d: Draw, op_ref: str, count: int) -> list[str]:
    """The operator's outputs as graph outputs; a sequence or an optional taken apart first."""
    exports = []
    for index in range(count):
        formal = d.schema.outputs[min(index, len(d.schema.outputs) - 1)]
        ref = f"{op_ref}.{index}"
        if _all_of_type(d.schema, formal.type_str, "seq("):
            nonempty = d.schema.name not in ("SequenceEmpty", "SequenceErase")
            if nonempty and d.rng.random() < 0.7:
                ref = add_node(d, "SequenceAt", [ref, const(d.rng.choice([0, -1]), np.int64)])
            else:
                ref = add_node(d, "SequenceLength", [ref])
        elif _all_of_type(d.schema, formal.type_str, "optional("):
            ref = add_node(d, d.rng.choice(["OptionalGetElement", "OptionalHasElement"]), [ref])
        exports.append(ref if "." in ref else f"{ref}.0")
    return exports


def declare_exports(model: onnx.ModelProto, record: ModelMutation, feeds: dict[str, np.ndarray]) -> str | None:
    """Give ``record`` the element type and rank of each export onnx's inference cannot type (run on
    onnxruntime once); why it cannot, or None."""
    try:
        mutated = apply_model_mutations(model, [record], feeds)
    except Exception as exc:  # a record that does not fit, the version converter, shape inference
        return f"the mutation does not apply: {first_line(exc)}"
    exports = list(mutated.graph.output)[-len(record.params["exports"]):]
    if all(o.type.tensor_type.elem_type and o.type.tensor_type.HasField("shape") for o in exports):
        return None
    try:
        values = onnxruntime_outputs(mutated, feeds, quiet=True)[-len(exports):]
    except Exception as exc:  # onnxruntime raises many types
        return f"onnxruntime refuses the model: {first_line(exc)}"
    record.params["export_types"] = [[int(helper.np_dtype_to_tensor_dtype(v.dtype)), int(v.ndim)] for v in values]
    return None


def draw_insertion(model: onnx.ModelProto, op: str, rng: random.Random, top: int,
                   index_inputs: bool = True) -> ModelMutation | None:
    """One insertion record of ``op`` for ``model`` (unvalidated), or None when ``op`` cannot be drawn
    for it (no schema, no usable type, no tensor of a usable static shape). ``index_inputs``: an index
    input may become a graph input."""
    op_rule = rule(op)
    domain = op_rule.domain or domain_of(op, top)
    if domain is None or op in NEVER_INSERTED:
        return None
    current = opset_version(model)
    opset = choose_version(op, current, top, rng) if domain == DEFAULT_DOMAIN else current
    schema = op_schema(op, opset or current, domain) if opset else None
    if schema is None or (opset or current) >= DEPRECATED_AT.get(op, 10**6):
        return None
    data_formal = None
    if op_rule.data is not None:
        data_formal = schema.inputs[0] if op_rule.data == "" else schema.input(op_rule.data)
        if data_formal is None:
            return None
    raw = {n: (helper.tensor_dtype_to_np_dtype(t).name if t else "", s) for n, (t, s) in tensor_types(model).items()
           if s is not None and t}
    types = {n: (dt, s) for n, (dt, s) in raw.items() if dt in USABLE_DTYPES}
    if not types:
        return None
    allowed = allowed_dtypes(schema, data_formal, op_rule.dtypes) if data_formal else \
        list(op_rule.dtypes or ("float32",))
    if not allowed:
        return None
    low, high = op_rule.rank
    target = _pick_target(types, allowed, low, high, op_rule.max_elements, rng)
    d = Draw(rng, schema, op_rule, types[target][1], types[target][0], opset or current,
             operands={n: v for n, v in types.items() if n != target}, index_inputs=index_inputs)
    if data_formal is not None:
        _adapt(d, types[target], allowed, low, high, op_rule.max_elements)
    else:
        d.dtype = rng.choice(allowed)
    draw_attributes(d)
    to = np.dtype(helper.tensor_dtype_to_np_dtype(d.attrs["to"])) if op == "Cast" and "to" in d.attrs else None
    if to is not None and to.kind in "iu" and np.dtype(d.dtype).kind == "f":  # undefined out of range: sanitized
        d.data = sanitize(d, d.data, str(to))
    try:
        inputs = _inputs(d, data_formal)
    except (LookupError, ValueError, IndexError, KeyError):
        return None
    count = _outputs(d)
    op_ref = add_node(d, op, inputs, count, domain, **d.attrs)
    exports = _exports(d, op_ref, count)
    params: dict[str, Any] = {"op": op, "domain": domain, "nodes": d.nodes, "exports": exports, "inputs": d.inputs}
    if opset != current:
        params["opset"] = opset
    return ModelMutation("insert", target, (), (), params, rng.getrandbits(31))


def sample_insertion(model: onnx.ModelProto, operators: list[str], rng: random.Random,
                     weights: dict[str, float] | None = None, feeds: dict[str, np.ndarray] | None = None,
                     top: int | None = None, isolate: bool = False, stats: InsertionStats | None = None,
                     input_seed: int = GRAPH_INPUT_SEED, index_inputs: bool = True) -> ModelMutation | None:
    """A valid insertion record for ``model`` of one of ``operators`` (weighted by ``weights``,
    default uniform), or None when none was found within :data:`OPERATOR_TRIES` operators.

    ``feeds`` are the model's inputs (default: :func:`random_feeds`); the index inputs a record adds
    get the values a case of seed ``input_seed`` gives them. ``top`` bounds the opset (default: the
    newest onnxruntime runs). ``isolate``: see :func:`mutation_refusal`. ``stats`` counts what was tried.
    ``index_inputs`` False keeps the model's graph inputs as they are (a pool model's)."""
    top = top or min(newest_opset(), onnxruntime_max_opset() or newest_opset())
    pool = [op for op in operators if op not in NEVER_INSERTED]
    if not pool:
        return None
    feeds = feeds if feeds is not None else random_feeds(model, rng.getrandbits(31))
    for _ in range(OPERATOR_TRIES):
        op = rng.choices(pool, weights=[(weights or {}).get(op, 1.0) for op in pool])[0]
        for _ in range(DRAW_TRIES):
            record = draw_insertion(model, op, rng, top, index_inputs)
            if record is None:
                if stats is not None:
                    stats.undrawable[op] += 1
                break
            full = {**feeds, **bounded_inputs(record.params.get("inputs", ()), input_seed, "random")}
            refusal = declare_exports(model, record, full) or mutation_refusal(model, record, full, isolate)
            if refusal is None:
                if stats is not None:
                    stats.kept[op] += 1
                return record
            if stats is not None:
                stats.refusal(op, refusal)
    return None


__all__ = ["InsertionStats", "draw_insertion", "operand", "sample_insertion"]
