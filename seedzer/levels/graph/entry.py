"""The script of a graph-level corpus entry: the pool model it fuzzes, its input specs and its model
mutations, as a one-line JSON document (``corpus/<id>.graph.json``). TVM-free."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from seedzer.kernel.graph.case import GRAPH_INPUT_SEED, INPUT_MODES, RANDOM_INPUTS, ModelMutation


def model_mutation_name(strategy: str) -> str:
    """How a model mutation of ``strategy`` (``uoc``, ``pioc``, ``edge``, ``insert``) is named among a test
    case's mutations."""
    return f"model_{strategy}"


SPECIAL_MUTATION = "inputs_special"
"""How switching a test case to special input values is named among its mutations."""


@dataclass(frozen=True)
class GraphSeed:
    """The "script" of a graph-level corpus entry: the pool model it fuzzes and its input specs.

    Its pass sequence (Relax passes, ``relax.X``) is the entry's ``passes`` as for the TIR level, so
    one corpus, one scheduler and one keep rule serve both levels.
    """

    model: str
    specs: tuple[tuple[str, str, tuple[int, ...]], ...]
    mutations: tuple[ModelMutation, ...] = ()
    """Model mutations applied before import (MT-DLComp relations, spec-edge changes, insertions), in order."""
    input_mode: str = RANDOM_INPUTS
    """How its inputs are drawn (``random`` or ``special``, :data:`~seedzer.kernel.graph.case.INPUT_MODES`)."""
    input_seed: int = GRAPH_INPUT_SEED
    """The seed of its inputs."""

    def to_text(self) -> str:
        """The entry's script: a one-line JSON document (``{"level": "graph", ...}``; the input mode and
        seed only when not the defaults, so older entries keep their text and their ids)."""
        specs = [[name, dtype, list(shape)] for name, dtype, shape in self.specs]
        data: dict[str, Any] = {"level": "graph", "model": self.model, "specs": specs}
        if self.mutations:
            data["mutations"] = [m.to_json() for m in self.mutations]
        if self.input_mode != RANDOM_INPUTS or self.input_seed != GRAPH_INPUT_SEED:
            data["inputs"] = {"mode": self.input_mode, "seed": self.input_seed}
        return json.dumps(data)

    @staticmethod
    def from_text(text: str) -> GraphSeed:
        """Inverse of :meth:`to_text`; a ValueError names what is wrong with ``text``."""
        try:
            data = json.loads(text)
            specs = tuple((str(n), str(d), tuple(int(x) for x in s)) for n, d, s in data["specs"])
            mutations = tuple(ModelMutation.from_json(m) for m in data.get("mutations") or ())
            inputs = data.get("inputs") or {}
            mode = str(inputs.get("mode", RANDOM_INPUTS))
            if mode not in INPUT_MODES:
                raise ValueError(f"unknown input mode {mode!r}")
            return GraphSeed(str(data["model"]), specs, mutations, mode, int(inputs.get("seed", GRAPH_INPUT_SEED)))
        except (ValueError, KeyError, TypeError) as exc:
            raise ValueError(f"not a graph seed document ({exc})") from None
