"""The importer's operators each arm exercised, and bugs (root causes) by operator.

The figures ``seedzer status`` shows for one campaign (:mod:`seedzer.campaign.operators`), over an
arm's trials: a trial's exercised operators come from its campaign.db (its graph cases' ``onnx-op/``
features, its loaded pool models), counted against the operators TVM's importer converts (the
installed TVM's converter map); a bug counts under the operators its root names (an insertion's or a
spec-edge change's).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from seedzer.campaign.operators import bug_operators, exercised_operators
from seedzer.campaign.summary import findings_view
from seedzer.store.reader import CampaignReader

OPERATOR_COLUMNS = ["experiment", "heuristic", "trial", "operator"]
"""One operator type a trial handed to TVM's importer."""
ROOT_OPERATOR_COLUMNS = ["experiment", "heuristic", "trial", "root", "operator"]
"""One bug (root cause) of a trial and an operator its root names."""
REACH_COLUMNS = ["heuristic", "trials", "median_exercised", "exercised", "importer_operators", "share",
                 "never_exercised"]
OPERATOR_BUG_COLUMNS = ["heuristic", "operator", "bugs"]


def read_trial_operators(ident: dict[str, Any], trial_dir: Path,
                         reader: CampaignReader) -> tuple[pd.DataFrame, pd.DataFrame]:
    """One trial's rows of :data:`OPERATOR_COLUMNS` and :data:`ROOT_OPERATOR_COLUMNS`."""
    ops = pd.DataFrame([{**ident, "operator": op} for op in sorted(exercised_operators(reader))],
                       columns=OPERATOR_COLUMNS)
    bugs = findings_view(trial_dir, reader).bugs
    roots = pd.DataFrame([{**ident, "root": root, "operator": op} for root, lines in bugs.items()
                          for op in bug_operators(lines)], columns=ROOT_OPERATOR_COLUMNS)
    return ops, roots


def reach_by_arm(ops: pd.DataFrame, trials: pd.DataFrame, importer: Sequence[str]) -> pd.DataFrame:
    """Per arm: its trials, the median number of the importer's operators a trial exercised, those any
    of its trials exercised (of all the importer's, and the share), and those none did."""
    known = set(importer)
    rows = []
    for arm in sorted(set(trials["heuristic"]) | set(ops["heuristic"])):
        mine = ops[(ops["heuristic"] == arm) & ops["operator"].isin(known)]
        arm_trials = trials[trials["heuristic"] == arm]["trial"].unique()
        per_trial = mine.groupby("trial")["operator"].nunique().reindex(arm_trials, fill_value=0)
        union = set(mine["operator"])
        rows.append({"heuristic": arm, "trials": len(arm_trials),
                     "median_exercised": float(per_trial.median()) if len(arm_trials) else 0.0,
                     "exercised": len(union), "importer_operators": len(known),
                     "share": round(100.0 * len(union) / len(known), 1) if known else 0.0,
                     "never_exercised": ", ".join(sorted(known - union))})
    return pd.DataFrame(rows, columns=REACH_COLUMNS)


def bugs_by_operator(roots: pd.DataFrame) -> pd.DataFrame:
    """Per arm and operator: the distinct bugs (roots) that name it, in any of the arm's trials."""
    if roots.empty:
        return pd.DataFrame(columns=OPERATOR_BUG_COLUMNS)
    counts = roots.groupby(["heuristic", "operator"])["root"].nunique().rename("bugs").reset_index()
    return counts[OPERATOR_BUG_COLUMNS].sort_values(["heuristic", "bugs", "operator"], ascending=[True, False, True],
                                                    ignore_index=True)
