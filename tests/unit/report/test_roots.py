"""Bug roots per arm: distinct over an arm's trials, per trial (0 for a trial without one), exclusive."""

from __future__ import annotations

import pandas as pd

from seedzer.report.mutations import BUG_COLUMNS
from seedzer.report.roots import ROOT_ARM_COLUMNS, roots_by_arm, roots_per_trial


def _bugs(rows: list[tuple[str, int, str]]) -> pd.DataFrame:
    return pd.DataFrame([{"experiment": "e", "heuristic": h, "trial": t, "root": r, "level": "graph",
                          "oracle": "crash", "mutations": ()} for h, t, r in rows], columns=BUG_COLUMNS)


TRIALS = pd.DataFrame({"heuristic": ["a", "a", "a", "b", "b"], "trial": [1, 2, 3, 1, 2]})


def test_roots_per_trial_count_each_root_once_and_trials_without_any() -> None:
    bugs = _bugs([("a", 1, "r1"), ("a", 1, "r1"), ("a", 1, "r2"), ("a", 2, "r1"), ("b", 2, "r3")])
    got = roots_per_trial(bugs, TRIALS)
    assert got.to_dict("records") == [
        {"heuristic": "a", "trial": 1, "value": 2}, {"heuristic": "a", "trial": 2, "value": 1},
        {"heuristic": "a", "trial": 3, "value": 0}, {"heuristic": "b", "trial": 1, "value": 0},
        {"heuristic": "b", "trial": 2, "value": 1}]


def test_roots_by_arm_distinct_median_and_exclusive() -> None:
    bugs = _bugs([("a", 1, "r1"), ("a", 1, "r2"), ("a", 2, "r1"), ("b", 2, "r1"), ("b", 1, "r3"), ("b", 2, "r4")])
    got = roots_by_arm(bugs, TRIALS).set_index("heuristic")
    assert list(got.reset_index().columns) == ROOT_ARM_COLUMNS
    assert got.loc["a", "roots"] == 2 and got.loc["a", "median_per_trial"] == 1.0 and got.loc["a", "exclusive"] == 1
    assert got.loc["b", "roots"] == 3 and got.loc["b", "max_per_trial"] == 2 and got.loc["b", "exclusive"] == 2
    assert list(got.index) == ["b", "a"]  # most roots first


def test_no_bug_at_all_gives_zero_rows_per_arm() -> None:
    got = roots_by_arm(_bugs([]), TRIALS)
    assert got["roots"].tolist() == [0, 0] and got["median_per_trial"].tolist() == [0.0, 0.0]
