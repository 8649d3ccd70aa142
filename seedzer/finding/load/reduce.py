"""The reduction predicate of a load finding: the candidate model still fails the finding's way.

A candidate becomes the finding's case (``case.json``: input seed, target, differential check,
reference ``.npz``) with the candidate embedded and its own input specs, and runs through the loader
kernel (:func:`seedzer.kernel.load.observe.observe_all`) in a child forked from the reducer's process
(:func:`seedzer.finding.load.check.observe_forked`: a segfault or a hang of the importer is an
observation, not a dead reducer). It holds when one observation is the finding's failure by the
kernel's own :func:`~seedzer.kernel.load.observe.same_load_failure`: what ``repro.py`` and the loader
gate judge by. Creating a predicate imports TVM in this process, once, so that every child forked
afterwards starts with it.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import onnx

from seedzer.finding.load.check import matching, observe_forked, preload
from seedzer.finding.onnx_graph import export
from seedzer.kernel.common import Observation
from seedzer.load.onnx_import import InvalidModel, input_specs


class LoadPredicate:
    """Callable on an ONNX model: does loading it reproduce ``expected``? (see the module docstring)."""

    def __init__(self, expected: Observation, case: dict[str, Any], timeout: float = 60.0) -> None:
        preload()
        from seedzer.kernel.load.observe import LoadCase, reference_arrays

        self.expected = expected
        self.base = dataclasses.replace(LoadCase.from_json(case), expected=expected)
        self.given = {k[len("input:"):]: v for k, v in reference_arrays(self.base).items() if k.startswith("input:")}
        self.timeout = timeout
        self.last_match: Observation | None = None

    def case_for(self, model: onnx.ModelProto) -> Any:
        """The finding's case with ``model`` embedded and its input specs (a ``LoadCase``);
        raises :class:`~seedzer.load.onnx_import.InvalidModel` for a model whose inputs have no shape."""
        specs, _ = input_specs(model, "candidate", self.given)
        case = dataclasses.replace(self.base, specs=tuple(s.as_tuple() for s in specs))
        return case.with_model(export(model))

    def observations(self, model: onnx.ModelProto) -> list[Observation]:
        """Every failure of loading ``model`` as the finding's case does."""
        try:
            case = self.case_for(model)
        except InvalidModel:
            return []
        return observe_forked(case, self.timeout)

    def __call__(self, model: onnx.ModelProto) -> bool:
        """True when loading ``model`` fails the finding's way; remembers the matching observation."""
        self.last_match = matching(self.expected, self.observations(model))
        return self.last_match is not None
