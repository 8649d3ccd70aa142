"""The inputs a graph case feeds, and their specs: the case's own (random or special values) and the
index inputs its insertions add (:mod:`seedzer.kernel.graph.inputs`).

Depends on numpy, onnx and the kernel modules before it only (copied verbatim into repro.py).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx

from seedzer.kernel.graph.case import GraphCase
from seedzer.kernel.graph.inputs import SPECIAL_INPUTS, bounded_inputs, integer_arithmetic, special_values
from seedzer.kernel.graph.insertion import added_inputs
from seedzer.kernel.onnx.model import random_inputs

# --- kernel code (everything below is copied verbatim into repro.py) ---


def case_inputs(case: GraphCase) -> dict[str, np.ndarray]:
    """The case's random inputs (those the validity check and PIOC's profile run on), the index inputs
    its insertions add included."""
    added = added_inputs(case.model_mutations)
    return {**random_inputs(case.specs, case.input_seed), **bounded_inputs(added, case.input_seed, "random")}


def fed_inputs(case: GraphCase, model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The inputs the case feeds ``model`` (its mutant): ``feeds`` in ``random`` mode, special values in
    ``special`` mode (no integer extremes when the model does integer arithmetic)."""
    if case.input_mode != SPECIAL_INPUTS:
        return feeds
    extremes = not integer_arithmetic([n.op_type for n in model.graph.node])
    own = {name: feeds[name] for name, _, _ in case.specs}
    return {**special_values(own, case.input_seed, extremes),
            **bounded_inputs(added_inputs(case.model_mutations), case.input_seed, case.input_mode)}


def input_specs(case: GraphCase, model: onnx.ModelProto) -> tuple[Any, ...]:
    """The case's input specs and those of the index inputs its insertions add to ``model``."""
    present = {i.name for i in model.graph.input}
    added = [(str(s["name"]), str(s["dtype"]), tuple(int(d) for d in s["shape"]))
             for s in added_inputs(case.model_mutations) if s["name"] in present]
    return tuple(case.specs) + tuple(added)
