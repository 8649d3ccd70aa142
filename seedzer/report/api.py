"""The TVM API each arm exercised: "schedule primitives exercised N of M" per trial, and each operation's
test cases, refusal rate and failures per arm (the figures ``seedzer status`` shows for one campaign,
:mod:`seedzer.campaign.api_table`, read off each trial)."""

from __future__ import annotations

from typing import Any

import pandas as pd

from seedzer.campaign.api_table import api_uses
from seedzer.store.reader import CampaignReader

API_COLUMNS = ["experiment", "heuristic", "trial", "level", "label", "operation", "in_api", "called", "accepted",
               "refused", "failures"]
"""One operation of one level's recorded API (or one its test cases called beyond it) in one trial."""
API_ARM_COLUMNS = ["heuristic", "level", "operation", "trials", "trials_calling", "called", "accepted", "refused",
                   "refusal_rate", "failures"]
EXERCISED_COLUMNS = ["heuristic", "level", "label", "trials", "median_exercised", "median_accepted", "of"]
NOTE = ("Per experiment arm (heuristic column) and level that recorded the TVM API it exercises: the median over "
        "the arm's trials of the operations some test case called (exercised) and of those that accepted their "
        "arguments at least once, of the API's M; then per operation, summed over the trials: the test cases "
        "calling it, accepting, refused (TVM's ScheduleError and argument checks: never a bug) and the failures "
        "filed at it. An operation called but never accepted is a generator gap. Trials from before the record "
        "have no rows.")


def read_trial_api(ident: dict[str, Any], reader: CampaignReader) -> pd.DataFrame:
    """One trial's rows of :data:`API_COLUMNS` (none for a campaign that recorded no API)."""
    rows = [{**ident, "level": r.api.level, "label": r.api.label, "operation": u.operation, "in_api": u.in_api,
             "called": u.called, "accepted": u.accepted, "refused": u.refused, "failures": u.failures}
            for r in api_uses(reader) for u in r.uses]
    return pd.DataFrame(rows, columns=API_COLUMNS)


def exercised_by_arm(api: pd.DataFrame) -> pd.DataFrame:
    """Per experiment arm and level: the median operations exercised and accepted of M (:data:`NOTE`)."""
    rows = api[api["in_api"].astype(bool)] if not api.empty else api
    if rows.empty:
        return pd.DataFrame(columns=EXERCISED_COLUMNS)
    out = []
    for (heuristic, level), g in rows.groupby(["heuristic", "level"]):
        per_trial = g.groupby("trial").agg(exercised=("called", lambda c: int((c > 0).sum())),
                                           accepted=("accepted", lambda c: int((c > 0).sum())),
                                           of=("operation", "nunique"))
        out.append({"heuristic": heuristic, "level": level, "label": str(g["label"].iloc[0]),
                    "trials": len(per_trial), "median_exercised": float(per_trial["exercised"].median()),
                    "median_accepted": float(per_trial["accepted"].median()), "of": int(per_trial["of"].max())})
    return pd.DataFrame(out, columns=EXERCISED_COLUMNS)


def api_by_arm(api: pd.DataFrame) -> pd.DataFrame:
    """Per experiment arm, level and operation, summed over its trials (:data:`NOTE`)."""
    if api.empty:
        return pd.DataFrame(columns=API_ARM_COLUMNS)
    out = []
    for (heuristic, level, operation), g in api.groupby(["heuristic", "level", "operation"], sort=True):
        called, refused = int(g["called"].sum()), int(g["refused"].sum())
        out.append({"heuristic": heuristic, "level": level, "operation": operation, "trials": g["trial"].nunique(),
                    "trials_calling": int((g["called"] > 0).sum()), "called": called,
                    "accepted": int(g["accepted"].sum()), "refused": refused,
                    "refusal_rate": round(refused / called, 3) if called else None,
                    "failures": int(g["failures"].sum())})
    return pd.DataFrame(out, columns=API_ARM_COLUMNS)
