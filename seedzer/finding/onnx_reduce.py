"""Graph-aware reduction of an ONNX model while a predicate (the finding reproduces) holds.

The MT-DLComp idea, as named passes of the reducer engine (:mod:`seedzer.finding.reducer`) over
the node set of the model (see :mod:`seedzer.finding.onnx_graph` for how a subset of nodes becomes a valid model):

1. ``ddmin-nodes``: ddmin over the nodes in topological order (contiguous chunks are mostly
   connected sub-graphs), ending 1-minimal for single-node removals;
2. ``subgraphs``: for each remaining node (last first), the node with its exclusive ancestors, the
   node with everything only it feeds, then the node alone, until nothing changes;
3. ``initializers-to-inputs``: initializers of :data:`MIN_INPUT_ELEMENTS` or more elements become
   graph inputs (a smaller model).

The passes run in one round: the node passes build their candidates from the original graph, so a
second round would undo the last pass. Every candidate is tried first with values rewired to a
compatible survivor, then with values cut into new graph inputs. Each predicate call is memoized
on the candidate's bytes; the reduction stops at a deadline and reports whether it finished.
``on_progress`` sees every new best model, so a caller can persist it and resume from it later.
"""

from __future__ import annotations

import hashlib
import math
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import onnx

from seedzer.finding.onnx_graph import Cut, GraphIndex, initializer_to_input
from seedzer.finding.reducer import OutOfTime, PassStats, Reducer, Trial, defines_pass, passes_of

MIN_INPUT_ELEMENTS = 16
"""Initializers at least this large are tried as graph inputs in the last pass."""

Predicate = Callable[[onnx.ModelProto], bool]


@dataclass
class ReduceResult:
    """The smallest model found, and how the reduction went."""

    model: onnx.ModelProto
    original_nodes: int
    nodes: int
    evaluations: int
    seconds: float
    complete: bool
    reproduced: bool = True  # False: the predicate did not hold on the model given (nothing reduced)
    stats: dict[str, PassStats] = field(default_factory=dict)  # pass -> its statistics (in pass order)

    @property
    def phases(self) -> dict[str, int]:
        """Pass -> successful reductions, for the passes that made any."""
        return {name: s.successes for name, s in self.stats.items() if s.successes}


@dataclass(frozen=True)
class Graph:
    """The reducer's state: the kept nodes (indices into the original graph) and their model."""

    keep: frozenset[int]
    model: onnx.ModelProto


def _key(g: Graph) -> str:
    return hashlib.sha1(g.model.SerializeToString(deterministic=True)).hexdigest()


def model_size(g: Graph) -> dict[str, int]:
    """A state's size: its nodes and the elements of its initializers."""
    return {"nodes": len(g.model.graph.node),
            "initializer elements": sum(math.prod(t.dims) for t in g.model.graph.initializer)}


class OnnxReducer:
    """Reduces one model against one predicate within ``seconds`` (see module doc); ``stats`` are
    the statistics of an earlier run to add to (a resumed reduction)."""

    def __init__(
        self,
        predicate: Predicate,
        seconds: float,
        on_progress: Callable[[onnx.ModelProto], None] | None = None,
        clock: Callable[[], float] = time.monotonic,
        stats: Mapping[str, PassStats] | None = None,
    ) -> None:
        self.predicate = predicate
        self.seconds = seconds
        self.on_progress = on_progress
        self.clock = clock
        self.earlier = dict(stats or {})
        self.index: GraphIndex | None = None

    def _try(self, keep: frozenset[int], trial: Trial[Graph]) -> Graph | None:
        """The first valid candidate keeping ``keep`` that the trial accepts, else None."""
        assert self.index is not None
        tried: set[bytes] = set()
        for cut in (Cut.REWIRE, Cut.INPUT):
            cand = self.index.candidate(keep, cut)
            if cand is None:
                continue
            raw = cand.model.SerializeToString(deterministic=True)
            if raw in tried:
                continue
            tried.add(raw)
            if trial(Graph(keep, cand.model)):
                return trial.current
        return None

    # --- passes ----------------------------------------------------------------------------
    @defines_pass("ddmin-nodes")
    def ddmin_nodes(self, g: Graph, trial: Trial[Graph]) -> Graph | None:
        """ddmin over the kept nodes: to one chunk, else to a complement, at growing granularity."""
        keep, n = g.keep, 2
        while len(keep) >= 2:
            items = sorted(keep)
            size = math.ceil(len(items) / n)
            chunks = [frozenset(items[i : i + size]) for i in range(0, len(items), size)]
            found = None
            for subset in chunks:  # reduce to one chunk
                got = self._try(subset, trial) if subset != keep else None
                if got is not None:
                    found, n = got, 2
                    break
            if found is None and n > 2:  # reduce to a complement
                for chunk in chunks:
                    got = self._try(keep - chunk, trial)
                    if got is not None:
                        found, n = got, max(n - 1, 2)
                        break
            if found is None:
                if n >= len(items):
                    break
                n = min(2 * n, len(items))
                continue
            keep = found.keep
        return trial.current

    @defines_pass("subgraphs")
    def subgraphs(self, g: Graph, trial: Trial[Graph]) -> Graph | None:
        """Remove, for each node (last first), its exclusive ancestors with it, what only it feeds
        with it, or the node alone; until nothing changes."""
        assert self.index is not None
        keep, changed = g.keep, True
        while changed:
            changed = False
            for node in sorted(keep, reverse=True):
                if node not in keep:
                    continue
                for cut, cone in (
                    ("ancestors", self.index.exclusive_ancestors(keep, node)),
                    ("dominated", self.index.dominated(keep, node)),
                    ("single", frozenset({node})),
                ):
                    rest = keep - cone
                    if not rest or (cut != "single" and len(cone) < 2):
                        continue
                    if self._try(rest, trial) is not None:
                        keep, changed = rest, True
                        break
        return trial.current

    @defines_pass("initializers-to-inputs")
    def initializers_to_inputs(self, g: Graph, trial: Trial[Graph]) -> Graph | None:
        """Turn each initializer of :data:`MIN_INPUT_ELEMENTS` elements or more (largest first)
        into a graph input."""
        best = g.model
        sized = sorted(((math.prod(t.dims), t.name) for t in best.graph.initializer), reverse=True)
        for elements, name in sized:
            if elements < MIN_INPUT_ELEMENTS:
                break
            cand = initializer_to_input(best, name)
            if cand is not None and trial(Graph(g.keep, cand)):
                best = cand
        return trial.current

    def reduce(self, model: onnx.ModelProto) -> ReduceResult:
        """Reduce ``model`` (for which the predicate must hold) as far as the deadline allows."""
        start = self.clock()
        progress = self.on_progress
        engine = Reducer(passes_of(self), lambda g: self.predicate(g.model), model_size, key=_key,
                         deadline=start + self.seconds, clock=self.clock, max_rounds=1,
                         on_improvement=None if progress is None else lambda g: progress(g.model),
                         stats=self.earlier)
        self.index = GraphIndex(model)
        best, complete, reproduced = model, False, True
        state = Graph(self.index.all_nodes(), model)
        try:
            reproduced = engine.holds(state)
        except OutOfTime:
            pass
        else:
            if reproduced:
                outcome = engine.run(state)
                best, complete = outcome.state.model, outcome.complete
        return ReduceResult(
            best,
            len(model.graph.node),
            len(best.graph.node),
            engine.tests,
            self.clock() - start,
            complete,
            reproduced,
            engine.stats,
        )
