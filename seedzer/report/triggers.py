"""Optimizations triggered per arm: passes triggered by at least 1 and 10 test cases of the passes run,
per level, at the end of each trial and over time (the figures ``seedzer status`` shows for one
campaign, :mod:`seedzer.campaign.triggers`, read off each trial's snapshots)."""

from __future__ import annotations

from typing import Any

import pandas as pd

from seedzer.campaign.triggers import OFTEN, read_trigger_points
from seedzer.store.reader import CampaignReader

TRIGGER_COLUMNS = ["experiment", "heuristic", "trial", "time", "level", "run", "once", "often"]
"""One snapshot of one trial and level: passes run, triggered >= 1 and >= :data:`OFTEN` times."""
TRIGGER_ARM_COLUMNS = ["heuristic", "level", "trials", "median_run", "median_once", "max_once", "median_often",
                       "max_often"]
TRIGGER_TIME_COLUMNS = ["heuristic", "level", "minute", "median_once", "median_often"]


def read_trial_triggers(ident: dict[str, Any], reader: CampaignReader) -> pd.DataFrame:
    """One trial's rows of :data:`TRIGGER_COLUMNS` (none for a campaign from before the figures)."""
    rows = [{**ident, "time": t, "level": level, "run": totals.run, "once": totals.once, "often": totals.often}
            for t, by_level in read_trigger_points(reader) for level, totals in by_level.items()]
    return pd.DataFrame(rows, columns=TRIGGER_COLUMNS)


def _last(triggers: pd.DataFrame) -> pd.DataFrame:
    """Each trial's and level's last snapshot."""
    ordered = triggers.sort_values("time")
    return ordered.groupby(["heuristic", "trial", "level"], as_index=False).tail(1)


def triggers_by_arm(triggers: pd.DataFrame) -> pd.DataFrame:
    """Per arm and level, over its trials' ends: the median passes run, and the median and largest
    numbers of passes triggered at least once and at least :data:`OFTEN` times."""
    if triggers.empty:
        return pd.DataFrame(columns=TRIGGER_ARM_COLUMNS)
    rows = []
    for (arm, level), group in _last(triggers).groupby(["heuristic", "level"]):
        rows.append({"heuristic": arm, "level": level, "trials": group["trial"].nunique(),
                     "median_run": float(group["run"].median()), "median_once": float(group["once"].median()),
                     "max_once": int(group["once"].max()), "median_often": float(group["often"].median()),
                     "max_often": int(group["often"].max())})
    return pd.DataFrame(rows, columns=TRIGGER_ARM_COLUMNS)


def triggers_over_time(triggers: pd.DataFrame, step_minutes: float) -> pd.DataFrame:
    """Per arm and level, every ``step_minutes``: the median over trials of the passes triggered at
    least once and at least :data:`OFTEN` times by then (a trial's last snapshot at or before it)."""
    if triggers.empty or step_minutes <= 0:
        return pd.DataFrame(columns=TRIGGER_TIME_COLUMNS)
    rows = []
    end = float(triggers["time"].max())
    for (arm, level), group in triggers.groupby(["heuristic", "level"]):
        minute = step_minutes
        while (minute - step_minutes) * 60.0 < end:
            upto = group[group["time"] <= minute * 60.0]
            if not upto.empty:
                last = _last(upto)
                rows.append({"heuristic": arm, "level": level, "minute": minute,
                             "median_once": float(last["once"].median()),
                             "median_often": float(last["often"].median())})
            minute += step_minutes
    return pd.DataFrame(rows, columns=TRIGGER_TIME_COLUMNS)


NOTE = (f"A pass is triggered by a test case when it changed the IR (structural equality before and after); "
        f"per arm and level, at the end of its trials: passes run, passes triggered by at least 1 and at least "
        f"{OFTEN} test cases (median and largest over the trials). Campaigns from before these figures have none.")
"""What the report's section says of its tables."""
