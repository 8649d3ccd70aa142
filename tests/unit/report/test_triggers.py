"""Optimizations triggered per arm: each trial's figures read off its snapshots, per arm and level at the
trials' ends (median, largest) and over time."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from seedzer.campaign.triggers import TriggerTotals, snapshot_column
from seedzer.report.triggers import TRIGGER_COLUMNS, read_trial_triggers, triggers_by_arm, triggers_over_time
from seedzer.store.db import CampaignDB
from seedzer.store.reader import CampaignReader


def _snapshot(t: float, triggers: str) -> dict[str, object]:
    return {"time": t, "execs": 1, "coverage": 1, "coverage_backend": "passes", "corpus_size": 1, "findings": 0,
            "unique_findings": 0, "invalid": 0, "wall": 1e9 + t, "triggers": triggers}


def test_a_trial_reads_its_snapshots_figures(tmp_path: Path) -> None:
    db = CampaignDB(tmp_path / "campaign.db")
    db.add_snapshot(_snapshot(5.0, ""))  # before any test case
    db.add_snapshot(_snapshot(60.0, snapshot_column({"tir": TriggerTotals(40, 12, 3)})))
    db.close()
    with CampaignReader.open(tmp_path / "campaign.db") as reader:
        rows = read_trial_triggers({"experiment": "e", "heuristic": "basic", "trial": 1}, reader)
    assert rows.to_dict("records") == [{"experiment": "e", "heuristic": "basic", "trial": 1, "time": 60.0,
                                        "level": "tir", "run": 40, "once": 12, "often": 3}]


def _rows() -> pd.DataFrame:
    data = [("e", "basic", 1, 60.0, "tir", 40, 10, 2), ("e", "basic", 1, 120.0, "tir", 42, 14, 4),
            ("e", "basic", 2, 60.0, "tir", 41, 8, 1), ("e", "basic", 2, 120.0, "tir", 41, 12, 6),
            ("e", "conv3", 1, 120.0, "graph", 70, 30, 20)]
    return pd.DataFrame(data, columns=TRIGGER_COLUMNS)


def test_per_arm_figures_are_the_trials_last_snapshots() -> None:
    arms = triggers_by_arm(_rows()).set_index(["heuristic", "level"])
    basic = arms.loc[("basic", "tir")]
    assert (basic["trials"], basic["median_run"], basic["median_once"], basic["max_once"]) == (2, 41.5, 13.0, 14)
    assert (basic["median_often"], basic["max_often"]) == (5.0, 6)
    assert arms.loc[("conv3", "graph")]["max_often"] == 20
    assert triggers_by_arm(pd.DataFrame(columns=TRIGGER_COLUMNS)).empty


def test_over_time_takes_each_trials_figures_so_far() -> None:
    steps = triggers_over_time(_rows(), 1.0)
    basic = steps[steps["heuristic"] == "basic"].set_index("minute")
    assert basic.loc[1.0, "median_once"] == 9.0 and basic.loc[2.0, "median_once"] == 13.0
    assert list(steps[steps["heuristic"] == "conv3"]["minute"]) == [2.0]  # nothing recorded by minute 1
