"""The reduction of a finding whose case is one PrimFunc's TVMScript (the ``tir`` and ``sched`` kinds), run
in a process forked from the zygote: confirm once that the case still fails its way, then run the kind's
reduction passes with the reducer engine (:mod:`seedzer.finding.reducer`) until they help no more or the
time is up, saving the best case and the per-pass statistics after every improvement. The kind says
how a candidate is judged and what its passes are."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, TypeVar

from seedzer.finding.reducer import Reducer, ReductionPass, Size, stats_from_json, stats_to_json
from seedzer.kernel.common import Observation

CaseT = TypeVar("CaseT")


def lines(script: str) -> int:
    """TVMScript lines that are code (the printer's comment header is not counted)."""
    return sum(1 for ln in script.splitlines() if ln.strip() and not ln.lstrip().startswith("#"))


@dataclass
class Reduction(Generic[CaseT]):
    """What a reduction reached: the best case so far, whether it finished, tests and seconds, the
    rounds it ran and the per-pass statistics (:func:`~seedzer.finding.reducer.stats_to_json`,
    earlier runs included)."""

    case: CaseT
    done: bool
    reproduced: bool
    tests: int = 0
    seconds: float = 0.0
    note: str = ""
    rounds: int = 0
    stats: dict[str, Any] = dataclasses.field(default_factory=dict)


@dataclass(frozen=True)
class ScriptReducer(Generic[CaseT]):
    """A kind's part of one reduction: its passes, how a candidate is judged, sized and saved."""

    passes: Sequence[ReductionPass[CaseT]]
    holds: Callable[[CaseT], bool]
    """Whether a candidate still fails the finding's way."""
    unconfirmed: Callable[[CaseT], Observation | None]
    """What the case shows when it no longer fails the finding's way (None: it does)."""
    size: Callable[[CaseT], Size]
    save_state: Callable[[Path, CaseT, dict[str, Any]], None]
    tests: Callable[[], int]
    """The tests run so far."""


def reduce_script(reducer: ScriptReducer[CaseT], folder: Path, case: CaseT, seconds: float, state: dict[str, Any],
                  start: float) -> Reduction[CaseT]:
    """Reduce ``case`` from ``start`` for ``seconds`` (``state``: the saved progress, updated and saved in
    ``folder``); not reproduced when the case, unconfirmed so far, no longer fails its way."""
    if not state.get("confirmed"):
        got = reducer.unconfirmed(case)
        if got is not None:
            return Reduction(case, False, False, reducer.tests(), time.monotonic() - start, got.headline())
        state["confirmed"] = True

    def save(best: CaseT) -> None:
        state["pass_stats"] = stats_to_json(engine.stats)
        reducer.save_state(folder, best, state)

    engine = Reducer(reducer.passes, reducer.holds, reducer.size, deadline=start + seconds, on_improvement=save,
                     stats=stats_from_json(state.get("pass_stats")))
    outcome = engine.run(case)
    state["rounds"] = state.get("rounds", 0) + outcome.rounds
    save(outcome.state)
    return Reduction(outcome.state, outcome.complete, True, reducer.tests(), time.monotonic() - start,
                     rounds=state["rounds"], stats=state["pass_stats"])
