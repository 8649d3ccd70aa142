"""The importer's operators per arm and bugs by operator (seedzer.report.operators)."""

from __future__ import annotations

import pandas as pd

from seedzer.report.operators import OPERATOR_COLUMNS, ROOT_OPERATOR_COLUMNS, bugs_by_operator, reach_by_arm

IMPORTER = ("Add", "Conv", "Relu", "TopK")


def test_reach_per_arm_counts_the_importers_operators_only() -> None:
    ops = pd.DataFrame([("e", "basic", 1, "Relu"), ("e", "basic", 1, "Shape"), ("e", "basic", 2, "Relu"),
                        ("e", "basic", 2, "TopK"), ("e", "reach", 1, "Add")], columns=OPERATOR_COLUMNS)
    trials = pd.DataFrame({"heuristic": ["basic", "basic", "reach", "reach"], "trial": [1, 2, 1, 2]})
    table = reach_by_arm(ops, trials, IMPORTER).set_index("heuristic")
    assert table.loc["basic", "exercised"] == 2 and table.loc["basic", "median_exercised"] == 1.5
    assert table.loc["basic", "never_exercised"] == "Add, Conv" and table.loc["basic", "share"] == 50.0
    assert table.loc["reach", "median_exercised"] == 0.5  # its second trial exercised none


def test_bugs_by_operator_count_distinct_roots() -> None:
    roots = pd.DataFrame([("e", "basic", 1, "r1", "TopK"), ("e", "basic", 2, "r1", "TopK"),
                          ("e", "basic", 2, "r2", "TopK"), ("e", "basic", 2, "r3", "Conv")],
                         columns=ROOT_OPERATOR_COLUMNS)
    table = bugs_by_operator(roots)
    assert table.values.tolist() == [["basic", "TopK", 2], ["basic", "Conv", 1]]
    assert bugs_by_operator(pd.DataFrame(columns=ROOT_OPERATOR_COLUMNS)).empty
