"""Statistics against known values: scipy's Mann-Whitney U, hand-computed A12, rankings, time series."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.stats import mannwhitneyu

from seedzer.report import stats
from seedzer.report.levels import by_arm
from seedzer.report.table import build_tables
from tests.fixtures.report.synth import make_level_experiment


@pytest.mark.parametrize(("x", "y"), [
    ([1, 2, 3, 4, 5], [6, 7, 8, 9, 10]),                       # exact, complete separation
    ([3.1, 1.2, 5.5, 2.0], [2.5, 4.4, 6.1, 0.3, 7.7]),          # exact, interleaved
    ([120, 131, 140, 150, 155, 160, 170, 180, 190], [100, 125, 126, 135, 145, 149, 152, 158, 159, 161]),
    ([5, 5, 6, 7, 7, 7], [5, 6, 6, 8, 9]),                      # ties: normal approximation
    ([1.0], [2.0]),
    ([4, 4, 4], [4, 4, 4]),                                     # all tied: p = 1
    (list(range(30)), list(range(10, 45))),                     # large samples
])
def test_mann_whitney_matches_scipy_two_sided(x: list[float], y: list[float]) -> None:
    ref = mannwhitneyu(x, y, alternative="two-sided")
    got = stats.mann_whitney_u(x, y)
    assert got.u == pytest.approx(float(ref.statistic))
    assert got.pvalue == pytest.approx(float(ref.pvalue), rel=1e-9, abs=1e-12)


def test_mann_whitney_matches_scipy_on_random_samples() -> None:
    rng = np.random.default_rng(7)
    for _ in range(300):
        n1, n2 = rng.integers(1, 14, size=2)
        if rng.random() < 0.5:
            x, y = rng.integers(0, 5, n1).astype(float), rng.integers(0, 5, n2).astype(float)
        else:
            x, y = rng.normal(size=n1), rng.normal(0.7, size=n2)
        ref = mannwhitneyu(x, y, alternative="two-sided")
        got = stats.mann_whitney_u(x, y)
        assert got.u == pytest.approx(float(ref.statistic))
        assert got.pvalue == pytest.approx(float(ref.pvalue), rel=1e-9, abs=1e-12)
        assert stats.a12(x, y) == pytest.approx(float(ref.statistic) / (n1 * n2))  # A12 = U1 / (n1 n2)


def test_exact_method_is_used_where_scipy_uses_it() -> None:
    assert stats.mann_whitney_u([1, 2, 3], [4, 5, 6]).method == "exact"
    assert stats.mann_whitney_u([1, 2, 2], [4, 5, 6]).method == "asymptotic"
    assert stats.mann_whitney_u(list(range(9)), list(range(9, 18))).method == "asymptotic"
    # the smallest possible two-sided exact p for 3 vs 3: 2 / C(6, 3)
    assert stats.mann_whitney_u([1, 2, 3], [4, 5, 6]).pvalue == pytest.approx(0.1)


def test_a12_hand_computed() -> None:
    # x = [1, 3, 5], y = [2, 3, 4]: pairs (x > y) = 0+1+3 = 4 wins, 1 tie (3 vs 3) -> (4 + 0.5) / 9
    assert stats.a12([1, 3, 5], [2, 3, 4]) == pytest.approx(4.5 / 9)
    assert stats.a12([10, 11], [1, 2]) == 1.0 and stats.a12([1, 2], [10, 11]) == 0.0
    assert stats.a12([1, 3, 5], [2, 3, 4]) + stats.a12([2, 3, 4], [1, 3, 5]) == pytest.approx(1.0)
    with pytest.raises(ValueError):
        stats.a12([], [1])


@pytest.mark.parametrize(("a", "label"), [(0.5, "negligible"), (0.44, "small"), (0.63, "small"),
                                          (0.70, "medium"), (0.71, "large"), (0.0, "large")])
def test_a12_magnitudes(a: float, label: str) -> None:
    assert stats.a12_magnitude(a) == label


def _long(values: dict[str, list[list[float]]], period: float = 10.0) -> pd.DataFrame:
    rows = []
    for h, trials in values.items():
        for n, series in enumerate(trials, 1):
            for i, v in enumerate(series):
                rows.append({"heuristic": h, "trial": n, "time": i * period, "coverage": v, "unique_findings": 0})
    return pd.DataFrame(rows)


def test_ranking_pairwise_and_matrix() -> None:
    long = _long({"a": [[0, 50], [0, 52], [0, 51], [0, 55], [0, 53]],
                  "b": [[0, 10], [0, 12], [0, 11], [0, 14], [0, 13]],
                  "c": [[0, 30], [0, 60], [0, 20], [0, 54], [0, 10]]})
    finals = stats.final_values(long)
    assert list(finals["value"][finals["heuristic"] == "a"]) == [50, 52, 51, 55, 53]
    rank = stats.ranking(finals)
    assert list(rank["heuristic"]) == ["a", "c", "b"] and list(rank["rank"]) == [1, 2, 3]
    assert list(rank["median"]) == [52, 30, 12]
    # a beats b with all 25 pairs: exact p = 2 / C(10, 5); c vs anything is not significant
    assert list(rank["wins"]) == [1, 0, 0]
    pw = stats.pairwise(finals).set_index(["a", "b"])
    assert pw.loc[("a", "b"), "a12"] == 1.0 and pw.loc[("a", "b"), "p"] == pytest.approx(2 / 252)
    assert pw.loc[("a", "b"), "magnitude"] == "large"
    m = stats.a12_matrix(finals)
    assert m.loc["a", "b"] == 1.0 and m.loc["b", "a"] == 0.0 and m.loc["c", "c"] == 0.5
    # average rank over all 15 trials (1 = highest): b holds ranks 10..13 and shares 14/15 with c's 10
    assert rank.set_index("heuristic").loc["b", "average_rank"] == pytest.approx((10 + 11 + 12 + 13 + 14.5) / 5)


def test_final_values_use_a_common_time_and_skip_barely_started_trials() -> None:
    long = _long({"a": [[0, 10, 20, 30], [0, 11, 21]], "b": [[0, 5, 9, 12], [0]]})
    # ends: a1 30 s, a2 20 s, b1 30 s, b2 0 s (< half of 30 s: excluded); common time = 20 s
    assert stats.comparison_time(long) == 20.0
    finals = stats.final_values(long)
    assert finals[["heuristic", "trial", "value"]].values.tolist() == [["a", 1, 20], ["a", 2, 21], ["b", 1, 9]]


def test_over_time_median_band_and_trial_counts() -> None:
    long = _long({"a": [[0, 10, 20], [0, 30, 40], [0, 20]]})
    ot = stats.over_time(long, "coverage", points=21).set_index("time")  # a grid of 1 s steps
    assert ot.loc[[0, 5, 10, 15, 20], "median"].tolist() == [0, 0, 20, 20, 30]  # step functions
    # the third trial ends at 10 s and still counts within one grid step (or a second) of its end
    assert ot.loc[[10, 11, 12, 20], "trials"].tolist() == [3, 3, 2, 2]
    assert ot.loc[10, "low"] == pytest.approx(np.percentile([10, 30, 20], 2.5))
    assert ot.loc[20, "high"] == pytest.approx(np.percentile([20, 40], 97.5))


def test_over_time_keeps_trials_that_end_a_moment_apart() -> None:
    long = pd.DataFrame({"heuristic": ["a"] * 4, "trial": [1, 1, 2, 2], "time": [0.0, 60.004, 0.0, 60.031],
                         "coverage": [0, 100, 0, 300]})
    last = stats.over_time(long, "coverage").iloc[-1]
    assert (last["trials"], last["median"]) == (2, 200.0)


def test_findings_by_category_overlap_and_exclusive() -> None:
    f = pd.DataFrame({"heuristic": ["a", "a", "a", "b", "b"], "trial": [1, 2, 2, 1, 1],
                      "signature": ["s1", "s1", "s2", "s2", "s3"],
                      "category": ["segfault", "segfault", "mismatch", "mismatch", "other"]})
    cats = stats.findings_by_category(f, ["a", "b", "c"])
    assert cats.loc["a"].to_dict() == {"segfault": 1, "other_crash": 0, "mismatch": 1, "other": 0, "total": 2}
    assert cats.loc["c", "total"] == 0
    ov = stats.overlap(f, ["a", "b"])
    assert ov.values.tolist() == [[2, 1], [1, 2]]
    assert stats.exclusive(f, ["a", "b"]).to_dict() == {"a": 1, "b": 1}


def test_levels_by_arm_medians_shares_and_findings(tmp_path: Path) -> None:
    t = build_tables(make_level_experiment(tmp_path))
    got = by_arm(t.levels, t.findings, t.trials).set_index(["heuristic", "level"])
    assert got.index.tolist() == [("basic@tir", "tir"), ("basic@tir+graph", "tir"), ("basic@tir+graph", "graph"),
                                  ("old", "tir")]
    assert got.loc[("basic@tir", "tir"), ["trials", "median_execs", "total_execs", "execs_share"]].tolist() == [
        2, 150.0, 300, 100.0]
    assert got.loc[("basic@tir+graph", "graph"), ["median_execs", "total_execs", "unique_findings"]].tolist() == [
        31.0, 62, 1]
    assert got.loc[("basic@tir+graph", "tir"), "execs_share"] == pytest.approx(65.9)
    assert by_arm(t.levels.iloc[0:0], t.findings.iloc[0:0], t.trials.iloc[0:0]).empty
