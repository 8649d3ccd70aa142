"""The allocation per arm: where each trial's workers' time went (the weights of levels, mutations and seed
models over time) and what each level and mutation yielded per worker-minute (the figures ``seedzer
status`` shows for one campaign, :mod:`seedzer.campaign.allocation_table`, read off each trial)."""

from __future__ import annotations

from typing import Any

import pandas as pd

from seedzer.store.reader import CampaignReader

ALLOCATION_COLUMNS = ["experiment", "heuristic", "trial", "time", "group", "arm", "weight", "reward_per_minute",
                      "runs", "roots", "seconds"]
"""One arm of one group at one snapshot of one trial."""
ALLOCATION_ARM_COLUMNS = ["heuristic", "group", "arm", "trials", "median_weight_at_end", "median_reward_per_minute",
                          "runs", "roots", "worker_minutes"]
NOTE = ("Per experiment arm (heuristic column) and allocation arm (a level, a level's mutation; seed models are "
        "left out: each pool has its own): over the arm's trials, the median draw weight at the trial's end, the "
        "median reward per worker-minute (new coverage, first triggers, roots new to the ledger), and the test "
        "cases, new roots credited and worker-minutes summed. Trials from before the allocation have no rows.")


def read_trial_allocation(ident: dict[str, Any], reader: CampaignReader) -> pd.DataFrame:
    """One trial's rows of :data:`ALLOCATION_COLUMNS` (none for a campaign from before the allocation)."""
    rows = [{**ident, "time": snap.time, "group": a.group, "arm": a.arm, "weight": a.weight,
             "reward_per_minute": a.reward_per_minute, "runs": a.runs, "roots": a.roots, "seconds": a.seconds}
            for snap in reader.allocation() for a in snap.arms]
    return pd.DataFrame(rows, columns=ALLOCATION_COLUMNS)


def allocation_by_arm(allocation: pd.DataFrame) -> pd.DataFrame:
    """Per experiment arm and allocation arm (seed models left out), over its trials' last snapshots: see
    :data:`NOTE`."""
    rows = allocation[allocation["group"] != "model"] if not allocation.empty else allocation
    if rows.empty:
        return pd.DataFrame(columns=ALLOCATION_ARM_COLUMNS)
    last = rows.sort_values("time").groupby(["heuristic", "trial", "group", "arm"], as_index=False).tail(1)
    out = []
    for (heuristic, group, arm), g in last.groupby(["heuristic", "group", "arm"]):
        out.append({"heuristic": heuristic, "group": group, "arm": arm, "trials": g["trial"].nunique(),
                    "median_weight_at_end": round(float(g["weight"].median()), 4),
                    "median_reward_per_minute": round(float(g["reward_per_minute"].median()), 2),
                    "runs": int(g["runs"].sum()), "roots": int(g["roots"].sum()),
                    "worker_minutes": round(float(g["seconds"].sum()) / 60, 1)})
    return pd.DataFrame(out, columns=ALLOCATION_ARM_COLUMNS)


def level_weights_long(allocation: pd.DataFrame) -> pd.DataFrame:
    """The levels' weights as a long table :func:`seedzer.report.stats.over_time` takes: one series per
    experiment arm and level (``heuristic`` is ``<arm>:<level>``), its ``weight`` column."""
    rows = allocation[allocation["group"] == "level"] if not allocation.empty else allocation
    if rows.empty:
        return pd.DataFrame(columns=["heuristic", "trial", "time", "weight"])
    out = rows.assign(heuristic=rows["heuristic"].astype(str) + ":" + rows["arm"].astype(str))
    return out[["heuristic", "trial", "time", "weight"]]
