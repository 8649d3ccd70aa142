"""The allocation per arm: each trial's rows read off campaign.db, per experiment arm at the trials' ends, and the
levels' weights as series over time."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from seedzer.report.allocation import (
    ALLOCATION_COLUMNS,
    allocation_by_arm,
    level_weights_long,
    read_trial_allocation,
)
from seedzer.report.stats import over_time
from seedzer.store.allocation_rows import ArmRow
from seedzer.store.db import CampaignDB
from seedzer.store.reader import CampaignReader


def test_a_trial_reads_its_allocation_rows(tmp_path: Path) -> None:
    db = CampaignDB(tmp_path / "campaign.db")
    db.record_allocation(5.0, [ArmRow("level", "tir", 0.75, 0.0, 0, 0, 0.0)], {"version": 1, "groups": {}})
    db.record_allocation(60.0, [ArmRow("level", "tir", 0.6, 12.5, 40, 1, 30.0)], {"version": 1, "groups": {}})
    db.close()
    with CampaignReader.open(tmp_path / "campaign.db") as reader:
        rows = read_trial_allocation({"experiment": "e", "heuristic": "basic@adaptive", "trial": 1}, reader)
    assert list(rows["time"]) == [5.0, 60.0]
    assert rows.iloc[-1][["weight", "reward_per_minute", "runs", "roots", "seconds"]].tolist() == [0.6, 12.5, 40, 1,
                                                                                                   30.0]


def _rows() -> pd.DataFrame:
    data = [("e", "basic@adaptive", 1, 60.0, "level", "tir", 0.5, 10.0, 100, 0, 60.0),
            ("e", "basic@adaptive", 1, 120.0, "level", "tir", 0.3, 8.0, 150, 0, 90.0),
            ("e", "basic@adaptive", 1, 120.0, "level", "graph", 0.7, 30.0, 80, 3, 90.0),
            ("e", "basic@adaptive", 2, 120.0, "level", "tir", 0.4, 9.0, 140, 1, 90.0),
            ("e", "basic@adaptive", 1, 120.0, "model", "m.onnx", 1.0, 30.0, 80, 3, 90.0),
            ("e", "basic@fixed", 1, 120.0, "level", "tir", 0.75, 7.0, 200, 0, 120.0)]
    return pd.DataFrame(data, columns=ALLOCATION_COLUMNS)


def test_per_arm_figures_are_the_trials_last_rows_without_seed_models() -> None:
    arms = allocation_by_arm(_rows()).set_index(["heuristic", "group", "arm"])
    tir = arms.loc[("basic@adaptive", "level", "tir")]
    assert (tir["trials"], tir["median_weight_at_end"], tir["runs"], tir["roots"]) == (2, 0.35, 290, 1)
    assert ("basic@adaptive", "model", "m.onnx") not in arms.index
    assert arms.loc[("basic@fixed", "level", "tir")]["median_weight_at_end"] == 0.75
    assert allocation_by_arm(pd.DataFrame(columns=ALLOCATION_COLUMNS)).empty


def test_level_weights_become_one_series_per_arm_and_level() -> None:
    long = level_weights_long(_rows())
    assert sorted(long["heuristic"].unique()) == ["basic@adaptive:graph", "basic@adaptive:tir", "basic@fixed:tir"]
    series = over_time(long, "weight", points=3)
    assert set(series["heuristic"]) == set(long["heuristic"])
