"""Graph-aware reduction of an ONNX model while a predicate (the finding reproduces) holds.

The MT-DLComp idea, in phases over the node set of the model (see :mod:`onnx_graph` for how a
subset of nodes becomes a valid model):

1. ddmin over the nodes in topological order (contiguous chunks are mostly connected sub-graphs),
   ending 1-minimal for single-node removals;
2. whole sub-graphs: for each remaining node, the node with its exclusive ancestors, and the node
   with everything only it feeds; then single nodes again, until nothing changes;
3. initializers of :data:`MIN_INPUT_ELEMENTS` or more elements become graph inputs (a smaller model).

Every candidate is tried first with values rewired to a compatible survivor, then with values cut
into new graph inputs. Each predicate call is memoized on the candidate's bytes; the reduction
stops at a deadline and reports whether it finished. ``on_progress`` sees every new best model,
so a caller can persist it and resume from it later.
"""

from __future__ import annotations

import hashlib
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import onnx

from seedzer.finding.loader.onnx_graph import Cut, GraphIndex, initializer_to_input

MIN_INPUT_ELEMENTS = 16
"""Initializers at least this large are tried as graph inputs in the last phase."""

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
    phases: dict[str, int] = field(default_factory=dict)  # phase -> successful reductions


class _OutOfTime(Exception):
    """The deadline passed; the reduction keeps what it has."""


class OnnxReducer:
    """Reduces one model against one predicate within ``seconds`` (see module doc)."""

    def __init__(
        self,
        predicate: Predicate,
        seconds: float,
        on_progress: Callable[[onnx.ModelProto], None] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.predicate = predicate
        self.seconds = seconds
        self.on_progress = on_progress
        self.clock = clock
        self.cache: dict[str, bool] = {}
        self.evaluations = 0
        self.deadline = math.inf
        self.phases: dict[str, int] = {}

    # --- evaluation ------------------------------------------------------------------------
    def _holds(self, model: onnx.ModelProto) -> bool:
        key = hashlib.sha1(model.SerializeToString(deterministic=True)).hexdigest()
        if key not in self.cache:
            if self.clock() >= self.deadline:
                raise _OutOfTime
            self.evaluations += 1
            self.cache[key] = bool(self.predicate(model))
        return self.cache[key]

    def _try(self, index: GraphIndex, keep: frozenset[int]) -> onnx.ModelProto | None:
        """The first valid candidate keeping ``keep`` for which the predicate holds, else None."""
        tried: set[bytes] = set()
        for cut in (Cut.REWIRE, Cut.INPUT):
            cand = index.candidate(keep, cut)
            if cand is None:
                continue
            raw = cand.model.SerializeToString(deterministic=True)
            if raw in tried:
                continue
            tried.add(raw)
            if self._holds(cand.model):
                return cand.model
        return None

    def _accept(self, phase: str, model: onnx.ModelProto) -> None:
        self.phases[phase] = self.phases.get(phase, 0) + 1
        if self.on_progress is not None:
            self.on_progress(model)

    # --- phases ----------------------------------------------------------------------------
    def _ddmin(
        self, index: GraphIndex, keep: frozenset[int], best: onnx.ModelProto
    ) -> tuple[frozenset[int], onnx.ModelProto]:
        n = 2
        while len(keep) >= 2:
            items = sorted(keep)
            size = math.ceil(len(items) / n)
            chunks = [frozenset(items[i : i + size]) for i in range(0, len(items), size)]
            found = None
            for subset in chunks:  # reduce to one chunk
                got = self._try(index, subset) if subset != keep else None
                if got is not None:
                    found, n = (subset, got), 2
                    break
            if found is None and n > 2:  # reduce to a complement
                for chunk in chunks:
                    got = self._try(index, keep - chunk)
                    if got is not None:
                        found, n = (keep - chunk, got), max(n - 1, 2)
                        break
            if found is None:
                if n >= len(items):
                    break
                n = min(2 * n, len(items))
                continue
            keep, best = found
            self._accept("ddmin", best)
        return keep, best

    def _cones(
        self, index: GraphIndex, keep: frozenset[int], best: onnx.ModelProto
    ) -> tuple[frozenset[int], onnx.ModelProto]:
        changed = True
        while changed:
            changed = False
            for node in sorted(keep, reverse=True):
                if node not in keep:
                    continue
                for phase, cone in (
                    ("ancestors", index.exclusive_ancestors(keep, node)),
                    ("dominated", index.dominated(keep, node)),
                    ("single", frozenset({node})),
                ):
                    rest = keep - cone
                    if not rest or (phase != "single" and len(cone) < 2):
                        continue
                    got = self._try(index, rest)
                    if got is not None:
                        keep, best, changed = rest, got, True
                        self._accept(phase, best)
                        break
        return keep, best

    def _initializers(self, best: onnx.ModelProto) -> onnx.ModelProto:
        sized = sorted(
            ((math.prod(t.dims), t.name) for t in best.graph.initializer),
            reverse=True,
        )
        for elements, name in sized:
            if elements < MIN_INPUT_ELEMENTS:
                break
            cand = initializer_to_input(best, name)
            if cand is not None and self._holds(cand):
                best = cand
                self._accept("initializers", best)
        return best

    def reduce(self, model: onnx.ModelProto) -> ReduceResult:
        """Reduce ``model`` (for which the predicate must hold) as far as the deadline allows."""
        start = self.clock()
        self.deadline = start + self.seconds
        best, complete, reproduced = model, False, True
        index = GraphIndex(model)
        keep = index.all_nodes()
        try:
            reproduced = self._holds(model)
            if reproduced:
                keep, best = self._ddmin(index, keep, best)
                keep, best = self._cones(index, keep, best)
                best = self._initializers(best)
                complete = True
        except _OutOfTime:
            pass
        return ReduceResult(
            best,
            len(model.graph.node),
            len(best.graph.node),
            self.evaluations,
            self.clock() - start,
            complete,
            reproduced,
            dict(self.phases),
        )
