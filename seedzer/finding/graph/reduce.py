"""Reduction of a graph finding while it still fails its way: its model mutations, its Relax pass
sequence, then its model.

Three stages, all on the house's reducer engine (:mod:`seedzer.finding.reducer`):

0. ``ddmin-mutations`` (:func:`ddmin_stage`): ddmin over the recorded model mutations (MT-DLComp
   relations, spec-edge changes), passes and model unchanged. A relation that a later one builds on
   stays: without it the later one cannot be applied, the candidate is invalid and does not hold;
1. ``ddmin-passes`` (:func:`ddmin_stage`): ddmin over the pass sequence, the model unchanged, to a
   1-minimal sequence (the filing gate's ``culprit`` rule already did this within its budget; here it
   also covers a finding the gate did not minimize);
2. the house's ONNX graph reduction (:class:`seedzer.finding.onnx_reduce.OnnxReducer`:
   ``ddmin-nodes``, ``subgraphs``, ``initializers-to-inputs``) of the model under the minimal sequence.

The predicate (:class:`GraphPredicate`) runs each candidate case in a child forked from the
reducer's process (:func:`seedzer.finding.graph.check.observe_forked`) and judges it with the
kernel's own ``same_graph_failure``. The statistics of both stages are one table.
"""

from __future__ import annotations

import base64
import dataclasses
import json
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import onnx

from seedzer.finding.ddmin import ddmin
from seedzer.finding.graph.check import matches, observe_forked, preload
from seedzer.finding.onnx_graph import export
from seedzer.finding.onnx_reduce import OnnxReducer
from seedzer.finding.reducer import OutOfTime, PassStats, Reducer, ReductionPass, Trial
from seedzer.kernel.common import Observation
from seedzer.kernel.graph.case import GraphCase, GraphPass, ModelMutation
from seedzer.load.onnx_import import InvalidModel, input_specs

Passes = tuple[GraphPass, ...]
Mutations = tuple[ModelMutation, ...]
OnProgress = Callable[[Passes, onnx.ModelProto], None]
"""Sees every new best (sequence, model), so a caller can persist it and resume from it later."""


class GraphPredicate:
    """Does the finding's case with another sequence (and another model) still fail its way?
    A candidate model gets its own input specs; ``last_match`` is the last observation that did."""

    def __init__(self, expected: Observation, case: GraphCase, timeout: float = 60.0,
                 observe: Callable[[GraphCase, float], Observation] = observe_forked,
                 match: Callable[[Observation, Observation], bool] = matches) -> None:
        if observe is observe_forked:
            preload()
        self.expected = expected
        self.base = dataclasses.replace(case, expected=expected)
        self.timeout = timeout
        self.observe = observe
        self.match = match
        self.last_match: Observation | None = None
        own = base64.b64decode(case.model) if case.model is not None else b""
        self.own = export(onnx.load_model_from_string(own)) if own else b""

    @property
    def mutations(self) -> Mutations:
        """The model mutations every candidate carries (fewer once :meth:`keep_mutations` ran)."""
        return self.base.model_mutations

    def keep_mutations(self, mutations: Mutations) -> None:
        """From now on candidates carry ``mutations`` (the minimal ones the first stage found)."""
        self.base = dataclasses.replace(self.base, model_mutations=tuple(mutations))

    def case_for(self, passes: Passes, model: onnx.ModelProto | None = None,
                 mutations: Mutations | None = None) -> GraphCase:
        """The finding's case with ``passes``, ``mutations`` when given and, when given, ``model``
        embedded with its own input specs (raises :class:`~seedzer.load.onnx_import.InvalidModel`
        for inputs without a shape)."""
        case = self.base.with_passes(passes)
        if mutations is not None:
            case = dataclasses.replace(case, model_mutations=tuple(mutations))
        if model is None:
            return case
        data = export(model)
        if data == self.own:  # the case's own model: run as the case has it
            return case
        specs, _ = input_specs(model, "candidate")
        return dataclasses.replace(case, specs=tuple(s.as_tuple() for s in specs)).with_model(data)

    def __call__(self, passes: Passes, model: onnx.ModelProto | None = None,
                 mutations: Mutations | None = None) -> bool:
        """True when the case with ``passes`` (and ``model``, ``mutations``) fails the finding's way."""
        try:
            case = self.case_for(passes, model, mutations)
        except InvalidModel:
            return False
        observed = self.observe(case, self.timeout)
        ok = self.match(self.expected, observed)
        if ok:
            self.last_match = observed
        return ok


@dataclass
class GraphReduceResult:
    """The smallest (sequence, model) found, and how the reduction went."""

    passes: Passes
    model: onnx.ModelProto
    passes_before: int
    nodes_before: int
    evaluations: int
    seconds: float
    complete: bool
    reproduced: bool = True
    stats: dict[str, PassStats] = field(default_factory=dict)
    mutations: Mutations = ()
    mutations_before: int = 0

    @property
    def nodes(self) -> int:
        """Nodes of the reduced model."""
        return len(self.model.graph.node)


def _key(items: Passes | Mutations) -> str:
    return json.dumps([p.to_json() for p in items], sort_keys=True, default=str)


def ddmin_stage(name: str) -> ReductionPass[Any]:
    """The reduction pass ``name``: ddmin over a sequence (model mutations, or the passes of the
    sequence) to a 1-minimal sub-sequence that still fails."""

    def run(items: Any, trial: Trial[Any]) -> Any:
        ddmin(list(items), lambda keep: trial(tuple(keep)), trial.out_of_time)
        return trial.current

    return ReductionPass(name, run)


MUTATIONS_STAGE, PASSES_STAGE = "ddmin-mutations", "ddmin-passes"
SEQUENCE_STAGES = (MUTATIONS_STAGE, PASSES_STAGE)
STAGE_DOCS = {
    MUTATIONS_STAGE: "ddmin over the recorded model mutations (MT-DLComp relations, spec-edge changes), passes and "
                     "model unchanged; a relation a later one builds on stays.",
    PASSES_STAGE: "ddmin over the Relax step sequence, the model unchanged, to a 1-minimal sequence.",
}
"""What each sequence stage does (the manual's table of reduction passes)."""


class GraphReducer:
    """Reduces a graph finding's (sequence, model) within ``seconds`` (see the module docstring);
    ``stats`` are the statistics of an earlier run to add to (a resumed reduction)."""

    def __init__(self, predicate: GraphPredicate, seconds: float, on_progress: OnProgress | None = None,
                 clock: Callable[[], float] = time.monotonic, stats: Mapping[str, PassStats] | None = None) -> None:
        self.predicate = predicate
        self.seconds = seconds
        self.on_progress = on_progress
        self.clock = clock
        self.earlier = dict(stats or {})

    def _sequence(self, name: str, holds: Callable[[Any], bool], items: Any, unit: str, deadline: float,
                  stats: dict[str, PassStats], saved: Callable[[Any], None] | None) -> tuple[Any, bool, bool, int]:
        """The ddmin stage ``name`` over a sequence: (best items, complete, reproduced, tests)."""
        engine = Reducer([ddmin_stage(name)], holds, lambda p: {unit: len(p)}, key=_key, deadline=deadline,
                         clock=self.clock, max_rounds=1, stats={k: v for k, v in stats.items() if k == name},
                         on_improvement=saved)
        try:
            if not engine.holds(items):
                return items, False, False, engine.tests
        except OutOfTime:
            return items, False, True, engine.tests
        outcome = engine.run(items)
        stats.update(engine.stats)
        return outcome.state, outcome.complete, True, engine.tests

    def _mutations(self, passes: Passes, model: onnx.ModelProto, deadline: float,
                   stats: dict[str, PassStats]) -> tuple[bool, bool, int]:
        """Stage 0 (the predicate keeps what it leaves): (complete, reproduced, tests)."""
        pred, progress = self.predicate, self.on_progress

        def saved(kept: Mutations) -> None:
            pred.keep_mutations(kept)
            if progress is not None:
                progress(passes, model)

        kept, complete, reproduced, tests = self._sequence(MUTATIONS_STAGE, lambda m: pred(passes, model, m),
                                                           pred.mutations, "mutations", deadline, stats, saved)
        pred.keep_mutations(kept)
        return complete, reproduced, tests

    def _passes(self, passes: Passes, model: onnx.ModelProto, deadline: float,
                stats: dict[str, PassStats]) -> tuple[Passes, bool, bool, int]:
        """Stage 1: (best sequence, complete, reproduced, tests)."""
        progress = self.on_progress
        return self._sequence(PASSES_STAGE, lambda p: self.predicate(p), passes, "passes", deadline, stats,
                              None if progress is None else lambda p: progress(p, model))

    def reduce(self, passes: Passes, model: onnx.ModelProto) -> GraphReduceResult:
        """Reduce the predicate's mutations, then ``passes``, then ``model`` as far as the deadline allows."""
        start = self.clock()
        deadline = start + self.seconds
        stats = dict(self.earlier)
        before = len(self.predicate.mutations)
        complete, reproduced, tests = True, True, 0
        if before:
            complete, reproduced, tests = self._mutations(passes, model, deadline, stats)
        best = passes
        if reproduced and complete:
            best, complete, reproduced, more = self._passes(passes, model, deadline, stats)
            tests += more
        result = GraphReduceResult(best, model, len(passes), len(model.graph.node), tests, 0.0, False, reproduced,
                                   stats, self.predicate.mutations, before)
        if reproduced and complete:
            progress = self.on_progress

            def holds(candidate: onnx.ModelProto) -> bool:
                return self.predicate(best, candidate)

            onnx_stats = {k: v for k, v in stats.items() if k not in SEQUENCE_STAGES}
            left = max(0.0, deadline - self.clock())
            graph = OnnxReducer(holds, left, clock=self.clock, stats=onnx_stats,
                                on_progress=None if progress is None else lambda m: progress(best, m)).reduce(model)
            result.model, result.complete = graph.model, graph.complete
            result.evaluations += graph.evaluations
            result.reproduced = graph.reproduced
            stats.update(graph.stats)
        result.seconds = self.clock() - start
        result.stats = stats
        return result
