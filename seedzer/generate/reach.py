"""Pools whose models carry the operators NNSmith alone cannot make: a heuristic's ``generation.insert``
(TVM-free).

Each generated model gets ``operators`` insertions (:func:`seedzer.mutate.graph.insertion.sample_insertion`,
the same the graph level's ``insert`` mutation makes: an operator of TVM's importer, read at run
time, drawn from its schema and kept only when onnx.checker, onnxruntime and onnx.reference accept
the model), uniformly among the operators the model does not have yet (those it has weigh
:data:`PRESENT_WEIGHT`). The draw depends on the attempt's seed alone, never on what a worker made
before, so a pool's content stays the heuristic's, the seed's and the count's whatever ``--jobs``.
A share ``old_opsets`` of the models is made instead from a one-operator model at an opset
between 9 and 13, where operators the specification removed since (``Scatter`` up to opset 10,
``Upsample`` up to 9) and the older versions of the others are reachable (the insertions then keep
to that opset). The engines judge each record in a forked child, so one that crashes on it refuses
it instead of ending the run. The pool's models keep their graph inputs (no insertion adds one), so the reference
inputs stay NNSmith's.
"""

from __future__ import annotations

import random

import numpy as np
import onnx
from onnx import TensorProto, helper

from seedzer.generate.insert_options import InsertOptions
from seedzer.kernel.graph.mutant import apply_model_mutations
from seedzer.load.importer_ops import importer_operators
from seedzer.mutate.graph.insertion import sample_insertion
from seedzer.mutate.graph.model_mutators import random_feeds
from seedzer.mutate.graph.op_table import DEPRECATED_AT

OLD_OPSETS = (9, 10, 11, 12, 13)
"""The opsets a model made for old operator versions may have."""
PRESENT_WEIGHT = 0.1
"""Relative weight of an operator the model already has."""


def _weights(model: onnx.ModelProto, operators: list[str], learned: dict[str, float] | None = None) -> dict[str, float]:
    """Each operator's weight: :data:`PRESENT_WEIGHT` when the model has it, else 1, times its learned
    weight (``learned``, a campaign's epochs: 1 for an operator it does not name)."""
    present = {n.op_type for n in model.graph.node}
    learned = learned or {}
    return {op: (PRESENT_WEIGHT if op in present else 1.0) * learned.get(op, 1.0) for op in operators}


def insert_operators(model: onnx.ModelProto, feeds: dict[str, np.ndarray], count: int, rng: random.Random,
                     top: int | None = None, learned: dict[str, float] | None = None) -> onnx.ModelProto:
    """``model`` with up to ``count`` validated insertions (fewer when none fits), opsets up to ``top``,
    operators weighted by ``learned`` (see :func:`_weights`)."""
    operators = list(importer_operators())
    for _ in range(count):
        record = sample_insertion(model, operators, rng, _weights(model, operators, learned), feeds, top=top,
                                  isolate=True, index_inputs=False)
        if record is None:
            continue
        model = apply_model_mutations(model, [record], feeds)
    return model


def old_opset_model(rng: random.Random) -> tuple[onnx.ModelProto, int, list[str]]:
    """A one-operator model (a Relu of a float input of rank 2 to 4) at an old opset, the opset, and
    the operators to insert first: one the specification removed since, when its opset allows it."""
    removed = [op for op in DEPRECATED_AT if op in importer_operators()]
    first = [rng.choice(removed)] if removed and rng.random() < 0.5 else []
    opset = DEPRECATED_AT[first[0]] - 1 if first else rng.choice(OLD_OPSETS)
    shape = [rng.randint(1, 4) for _ in range(rng.randint(2, 4))]
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "reach",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 7
    return model, opset, first


def old_opset_pool_model(options: InsertOptions, rng: random.Random) -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    """A one-operator model at an old opset with its insertions (one of an operator the specification
    removed since first, when drawn), and the inputs it runs on."""
    model, opset, first = old_opset_model(rng)
    feeds = random_feeds(model, rng.getrandbits(31))
    for op in first:
        record = sample_insertion(model, [op], rng, None, feeds, top=opset, isolate=True, index_inputs=False)
        if record is not None:
            model = apply_model_mutations(model, [record], feeds)
    return insert_operators(model, feeds, options.operators - len(first), rng, top=opset,
                            learned=options.weights), feeds


def wants_old_opset(options: InsertOptions, seed: int) -> tuple[bool, random.Random]:
    """Whether the attempt of NNSmith seed ``seed`` makes an old-opset model, and the attempt's
    insertion rng (both from ``seed`` alone, so a pool stays reproducible)."""
    rng = random.Random(f"reach:{seed}")
    return options.active and rng.random() < options.old_opsets, rng
