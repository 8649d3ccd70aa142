"""Bug roots per arm: the figure a study of seed pools is about (a root is one bug, however many findings).

Each trial's roots are read by :func:`seedzer.report.mutations.read_trial_mutations` (``BUG_COLUMNS``:
one row per root the trial's findings come to, as ``seedzer status`` counts them). Here they are
summed up per arm (distinct over its trials, per trial) and made into per-trial values that
:func:`seedzer.report.stats.pairwise` compares like final coverage.
"""

from __future__ import annotations

import pandas as pd

ROOT_ARM_COLUMNS = ["heuristic", "trials", "roots", "median_per_trial", "min_per_trial", "max_per_trial", "exclusive"]
"""Per arm: trials read, distinct roots over them, roots per trial (median, least, most), and roots no
other arm found."""


def roots_per_trial(bugs: pd.DataFrame, trials: pd.DataFrame) -> pd.DataFrame:
    """Every trial's number of distinct roots (``heuristic``, ``trial``, ``value``; 0 for a trial with none),
    in the shape :func:`seedzer.report.stats.pairwise` takes."""
    counts = bugs.groupby(["heuristic", "trial"])["root"].nunique() if not bugs.empty else pd.Series(dtype=int)
    rows = [{"heuristic": str(t.heuristic), "trial": int(t.trial),
             "value": int(counts.get((t.heuristic, t.trial), 0))} for t in trials.itertuples()]
    return pd.DataFrame(rows, columns=["heuristic", "trial", "value"])


def roots_by_arm(bugs: pd.DataFrame, trials: pd.DataFrame) -> pd.DataFrame:
    """Per arm: the rows of :data:`ROOT_ARM_COLUMNS`, most distinct roots first."""
    per_trial = roots_per_trial(bugs, trials)
    owners = bugs.groupby("root")["heuristic"].nunique() if not bugs.empty else pd.Series(dtype=int)
    rows = []
    for arm, group in per_trial.groupby("heuristic", sort=True):
        mine = set(bugs.loc[bugs["heuristic"] == arm, "root"]) if not bugs.empty else set()
        rows.append({"heuristic": arm, "trials": len(group), "roots": len(mine),
                     "median_per_trial": float(group["value"].median()), "min_per_trial": int(group["value"].min()),
                     "max_per_trial": int(group["value"].max()),
                     "exclusive": sum(1 for root in mine if owners.get(root, 0) == 1)})
    out = pd.DataFrame(rows, columns=ROOT_ARM_COLUMNS)
    return out.sort_values(["roots", "heuristic"], ascending=[False, True], ignore_index=True)
