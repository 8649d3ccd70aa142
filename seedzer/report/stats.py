"""Statistics of an experiment: Mann-Whitney U, Vargha-Delaney A12, rankings, time series, overlap.

The U test follows scipy's ``mannwhitneyu(x, y, alternative="two-sided", method="auto")``: the
exact null distribution when either sample has at most 8 values and there are no ties, otherwise
the normal approximation with tie correction and continuity correction. It is implemented here
(rather than imported) so that scipy is needed only to test it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from itertools import combinations

import numpy as np
import pandas as pd

from seedzer.report.table import CATEGORIES

KEYS = ["heuristic", "trial"]


@dataclass(frozen=True)
class UTest:
    """Result of a two-sided Mann-Whitney U test: ``u`` is the statistic of the first sample."""

    u: float
    pvalue: float
    method: str


def rank_average(values: np.ndarray) -> np.ndarray:
    """Ranks 1..n with ties given their average rank."""
    values = np.asarray(values, float)
    order = np.argsort(values, kind="mergesort")
    ranks = np.empty(len(values), float)
    sorted_vals = values[order]
    i = 0
    while i < len(values):
        j = i
        while j + 1 < len(values) and sorted_vals[j + 1] == sorted_vals[i]:
            j += 1
        ranks[order[i:j + 1]] = (i + j) / 2 + 1
        i = j + 1
    return ranks


@lru_cache(maxsize=256)
def _u_counts(n1: int, n2: int) -> tuple[int, ...]:
    """Number of orderings giving each U value 0..n1*n2 (no ties), by the standard recursion."""
    table: list[list[tuple[int, ...]]] = [[(1,) for _ in range(n2 + 1)] for _ in range(n1 + 1)]
    for i in range(1, n1 + 1):
        for j in range(1, n2 + 1):
            a = table[i - 1][j]  # the largest value is from sample 2: U unchanged
            b = table[i][j - 1]  # ... from sample 1: U grows by j
            size = i * j + 1
            c = [0] * size
            for u, n in enumerate(b):
                c[u] += n
            for u, n in enumerate(a):
                c[u + j] += n
            table[i][j] = tuple(c)
    return table[n1][n2]


def _exact_sf(u: float, n1: int, n2: int) -> float:
    counts = _u_counts(n1, n2)
    k = math.ceil(u - 1e-9)
    return sum(counts[k:]) / sum(counts)


def mann_whitney_u(x: np.ndarray | list[float], y: np.ndarray | list[float]) -> UTest:
    """Two-sided Mann-Whitney U test of samples ``x`` and ``y`` (see the module docstring)."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    n1, n2 = len(x), len(y)
    if n1 == 0 or n2 == 0:
        raise ValueError("mann_whitney_u needs two non-empty samples")
    both = np.concatenate([x, y])
    ranks = rank_average(both)
    u1 = float(ranks[:n1].sum() - n1 * (n1 + 1) / 2)
    u = max(u1, n1 * n2 - u1)
    _, tie_counts = np.unique(both, return_counts=True)
    ties = bool((tie_counts > 1).any())
    if (n1 <= 8 or n2 <= 8) and not ties:
        return UTest(u1, min(1.0, 2 * _exact_sf(u, n1, n2)), "exact")
    n = n1 + n2
    tie_term = float((tie_counts.astype(float) ** 3 - tie_counts).sum())
    var = n1 * n2 / 12 * ((n + 1) - tie_term / (n * (n - 1)))
    if var <= 0:
        return UTest(u1, 1.0, "asymptotic")
    z = (u - n1 * n2 / 2 - 0.5) / math.sqrt(var)
    return UTest(u1, min(1.0, math.erfc(z / math.sqrt(2))), "asymptotic")


def a12(x: np.ndarray | list[float], y: np.ndarray | list[float]) -> float:
    """Vargha-Delaney A12: the probability that a value of ``x`` beats one of ``y`` (ties count half)."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    if len(x) == 0 or len(y) == 0:
        raise ValueError("a12 needs two non-empty samples")
    greater = (x[:, None] > y[None, :]).sum()
    equal = (x[:, None] == y[None, :]).sum()
    return float((greater + 0.5 * equal) / (len(x) * len(y)))


def a12_magnitude(a: float) -> str:
    """Vargha and Delaney's labels for |A12 - 0.5|: negligible, small, medium, large."""
    d = round(abs(a - 0.5), 9)  # 0.71 - 0.5 must count as 0.21
    return "negligible" if d < 0.06 else "small" if d < 0.14 else "medium" if d < 0.21 else "large"


def value_at(long: pd.DataFrame, column: str, t: float, slack: float = 1.0) -> pd.DataFrame:
    """Each trial's ``column`` at campaign time ``t`` (last snapshot at or before ``t + slack``)."""
    rows = long[long["time"] <= t + slack].sort_values("time")
    last = rows.groupby(KEYS, as_index=False).tail(1)
    return last[[*KEYS, "time", column]].rename(columns={column: "value"}).reset_index(drop=True)


def comparison_time(long: pd.DataFrame) -> float:
    """The time at which trials are compared: the shortest trial among those that reached at least
    half of the longest one (so a just-started trial does not drag every comparison back to zero)."""
    if long.empty:
        return 0.0
    ends = long.groupby(KEYS)["time"].max()
    eligible = ends[ends >= 0.5 * ends.max()]
    return float(eligible.min())


def final_values(long: pd.DataFrame, column: str = "coverage") -> pd.DataFrame:
    """Each eligible trial's ``column`` at :func:`comparison_time` (heuristic, trial, time, value)."""
    t = comparison_time(long)
    ends = long.groupby(KEYS)["time"].max()
    eligible = ends[ends >= 0.5 * ends.max()].index
    vals = value_at(long, column, t)
    keep = vals.set_index(KEYS).index.isin(eligible)
    return vals[keep].sort_values(KEYS).reset_index(drop=True)


def pairwise(finals: pd.DataFrame) -> pd.DataFrame:
    """Every pair of heuristics: medians, U, two-sided p, A12 of the first over the second, magnitude."""
    groups = {h: g["value"].to_numpy(float) for h, g in finals.groupby("heuristic", sort=True)}
    rows = []
    for a, b in combinations(sorted(groups), 2):
        x, y = groups[a], groups[b]
        test = mann_whitney_u(x, y)
        eff = a12(x, y)
        rows.append({"a": a, "b": b, "n_a": len(x), "n_b": len(y), "median_a": float(np.median(x)),
                     "median_b": float(np.median(y)), "u": test.u, "p": test.pvalue, "method": test.method,
                     "a12": eff, "magnitude": a12_magnitude(eff)})
    return pd.DataFrame(rows, columns=["a", "b", "n_a", "n_b", "median_a", "median_b", "u", "p", "method",
                                       "a12", "magnitude"])


def a12_matrix(finals: pd.DataFrame) -> pd.DataFrame:
    """Square table: A12 of the row heuristic over the column heuristic (0.5 on the diagonal)."""
    groups = {h: g["value"].to_numpy(float) for h, g in finals.groupby("heuristic", sort=True)}
    names = sorted(groups)
    return pd.DataFrame([[a12(groups[r], groups[c]) for c in names] for r in names],
                        index=pd.Index(names, name="heuristic"), columns=names)


def ranking(finals: pd.DataFrame, alpha: float = 0.05) -> pd.DataFrame:
    """Heuristics ranked by median final value; also the average rank of their trials among all
    trials (ties averaged) and how many other heuristics each beats significantly (p < alpha, A12 > 0.5)."""
    if finals.empty:
        return pd.DataFrame(columns=["rank", "heuristic", "trials", "median", "mean", "min", "max",
                                     "average_rank", "wins"])
    f = finals.copy()
    f["trial_rank"] = rank_average(-f["value"].to_numpy(float))
    pw = pairwise(finals)
    wins: dict[str, int] = {h: 0 for h in f["heuristic"].unique()}
    for r in pw.itertuples():
        if r.p < alpha:
            wins[str(r.a if r.a12 > 0.5 else r.b)] += 1
    g = f.groupby("heuristic")
    out = pd.DataFrame({"trials": g.size(), "median": g["value"].median(), "mean": g["value"].mean(),
                        "min": g["value"].min(), "max": g["value"].max(),
                        "average_rank": g["trial_rank"].mean()}).reset_index()
    out["wins"] = out["heuristic"].map(wins).astype(int)
    out = out.sort_values(["median", "average_rank", "heuristic"], ascending=[False, True, True])
    out.insert(0, "rank", range(1, len(out) + 1))
    return out.reset_index(drop=True)


def over_time(long: pd.DataFrame, column: str, points: int = 121) -> pd.DataFrame:
    """Per heuristic and time on a common grid: median, 2.5 and 97.5 percentiles over trials and
    the number of trials that had reached that time, give or take a grid step or a second (each
    trial is a step function of its snapshots)."""
    cols = ["heuristic", "time", "median", "low", "high", "trials"]
    if long.empty:
        return pd.DataFrame(columns=cols)
    grid = np.linspace(0.0, float(long["time"].max()), points)
    # trials ending within a grid step (or a second) of each other count as reaching the same time,
    # so that a campaign stopping a few milliseconds early does not drop out of the last point
    slack = max(1.0, float(grid[1] - grid[0]) if points > 1 else 0.0)
    rows = []
    for h, g in long.groupby("heuristic", sort=True):
        series = []
        for _, t in g.groupby("trial", sort=True):
            t = t.sort_values("time")
            times, vals = t["time"].to_numpy(float), t[column].to_numpy(float)
            idx = np.searchsorted(times, grid, side="right") - 1
            v = np.where(idx >= 0, vals[np.clip(idx, 0, None)], 0.0)
            series.append(np.where(grid <= times[-1] + slack, v, np.nan))
        mat = np.vstack(series)
        n = (~np.isnan(mat)).sum(axis=0)
        with np.errstate(all="ignore"):
            med = np.nanmedian(np.where(n > 0, mat, 0.0), axis=0)
            lo = np.nanpercentile(np.where(n > 0, mat, 0.0), 2.5, axis=0)
            hi = np.nanpercentile(np.where(n > 0, mat, 0.0), 97.5, axis=0)
        for i, t_ in enumerate(grid):
            if n[i]:
                rows.append({"heuristic": h, "time": float(t_), "median": float(med[i]), "low": float(lo[i]),
                             "high": float(hi[i]), "trials": int(n[i])})
    return pd.DataFrame(rows, columns=cols)


def findings_by_category(findings: pd.DataFrame, heuristics: list[str]) -> pd.DataFrame:
    """Distinct finding signatures per heuristic (union over its trials), one column per category."""
    out = pd.DataFrame(0, index=pd.Index(sorted(heuristics), name="heuristic"), columns=list(CATEGORIES))
    if not findings.empty:
        uniq = findings.drop_duplicates(["heuristic", "signature"])
        counts = uniq.groupby(["heuristic", "category"]).size()
        for (h, c), n in counts.items():
            if h in out.index:
                out.loc[h, c] = int(n)
    out["total"] = out[list(CATEGORIES)].sum(axis=1)
    return out


def overlap(findings: pd.DataFrame, heuristics: list[str]) -> pd.DataFrame:
    """Square table: signatures found by both the row and the column heuristic (diagonal: by the row)."""
    names = sorted(heuristics)
    sets = {h: set(findings.loc[findings["heuristic"] == h, "signature"]) for h in names}
    return pd.DataFrame([[len(sets[r] & sets[c]) for c in names] for r in names],
                        index=pd.Index(names, name="heuristic"), columns=names)


def exclusive(findings: pd.DataFrame, heuristics: list[str]) -> pd.Series:
    """Signatures found by one heuristic only, per heuristic."""
    sets = {h: set(findings.loc[findings["heuristic"] == h, "signature"]) for h in sorted(heuristics)}
    return pd.Series({h: len(s - set().union(*(o for k, o in sets.items() if k != h))) for h, s in sets.items()},
                     name="exclusive", dtype=int)
