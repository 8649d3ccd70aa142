"""The reduction the tir and sched kinds share: :mod:`seedzer.finding.script_reduce`, on toy cases (tuples
of ints: a case "fails its way" while it holds a 3)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from seedzer.finding.reducer import ReductionPass, Size, Trial
from seedzer.finding.script_reduce import ScriptReducer, lines, reduce_script
from seedzer.kernel.common import Observation, Stage, Symptom

Ints = tuple[int, ...]


def _drop_one(xs: Ints, trial: Trial[Ints]) -> Ints | None:
    for i in range(len(xs)):
        if trial(xs[:i] + xs[i + 1:]):
            return trial.current
    return None


def _size(xs: Ints) -> Size:
    return {"items": len(xs)}


def _reducer(saved: list[Ints], tests: list[int]) -> ScriptReducer[Ints]:
    def holds(xs: Ints) -> bool:
        tests.append(1)
        return 3 in xs

    def unconfirmed(xs: Ints) -> Observation | None:
        return None if holds(xs) else Observation(Symptom.OK, Stage.PASS, None, "")

    def save(folder: Path, xs: Ints, state: dict[str, Any]) -> None:
        saved.append(xs)

    return ScriptReducer([ReductionPass("drop-one", _drop_one)], holds, unconfirmed, _size, save, lambda: len(tests))


def test_a_confirmed_case_is_reduced_saved_and_its_progress_kept(tmp_path: Path) -> None:
    saved: list[Ints] = []
    tests: list[int] = []
    state: dict[str, Any] = {}
    red = reduce_script(_reducer(saved, tests), tmp_path, (1, 3, 5, 7), 60.0, state, time.monotonic())
    assert red.reproduced and red.done and red.case == (3,)
    assert saved[-1] == (3,) and state["confirmed"] and state["rounds"] == red.rounds > 0
    assert red.stats == state["pass_stats"] and red.stats["drop-one"]["successes"] == 3
    assert red.tests == len(tests)


def test_a_case_that_no_longer_fails_its_way_is_not_reproduced_and_nothing_is_saved(tmp_path: Path) -> None:
    saved: list[Ints] = []
    state: dict[str, Any] = {}
    red = reduce_script(_reducer(saved, []), tmp_path, (1, 5), 60.0, state, time.monotonic())
    assert not red.reproduced and red.case == (1, 5) and red.note == Observation(Symptom.OK, Stage.PASS, None,
                                                                                 "").headline()
    assert saved == [] and "confirmed" not in state


def test_lines_counts_code_but_not_the_printer_header_or_blank_lines() -> None:
    script = "# from tvm.script import tir as T\n\n@T.prim_func\ndef main():\n    # a note\n    T.evaluate(0)\n"
    assert lines(script) == 3
