"""The TVM API per arm: each trial's rows read off campaign.db, operations exercised of M per arm (median over
trials), and each operation's figures summed over an arm's trials."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from seedzer.report.api import API_COLUMNS, api_by_arm, exercised_by_arm, read_trial_api
from seedzer.store.api_rows import LevelApi
from seedzer.store.db import CampaignDB
from seedzer.store.reader import CampaignReader


def test_a_trial_reads_its_api_rows(tmp_path: Path) -> None:
    db = CampaignDB(tmp_path / "campaign.db")
    db.set_level_api(LevelApi("sched", "schedule primitives", ("Fuse", "Split")))
    db.add_pass_triggers([("sched", "Split", 3, 2)])
    db.close()
    with CampaignReader.open(tmp_path / "campaign.db") as reader:
        rows = read_trial_api({"experiment": "e", "heuristic": "basic", "trial": 1}, reader)
    assert list(rows.columns) == API_COLUMNS
    assert rows[["operation", "called", "accepted"]].values.tolist() == [["Fuse", 0, 0], ["Split", 3, 2]]


def test_per_arm_exercised_of_m_and_refusal_rates() -> None:
    rows = pd.DataFrame([
        ("e", "a", 1, "sched", "schedule primitives", "Split", True, 10, 9, 1, 0),
        ("e", "a", 1, "sched", "schedule primitives", "Fuse", True, 0, 0, 0, 0),
        ("e", "a", 2, "sched", "schedule primitives", "Split", True, 4, 2, 2, 1),
        ("e", "a", 2, "sched", "schedule primitives", "Fuse", True, 2, 2, 0, 0),
        ("e", "a", 2, "sched", "schedule primitives", "postproc.RewriteLayout", False, 5, 5, 0, 0)],
        columns=API_COLUMNS)
    exercised = exercised_by_arm(rows).iloc[0]
    assert (exercised["trials"], exercised["median_exercised"], exercised["of"]) == (2, 1.5, 2)
    by_arm = api_by_arm(rows).set_index("operation")
    assert by_arm.loc["Split", ["called", "refused", "refusal_rate", "failures"]].tolist() == [14, 3, 0.214, 1]
    assert by_arm.loc["Fuse", "trials_calling"] == 1
    assert exercised_by_arm(rows.iloc[0:0]).empty and api_by_arm(rows.iloc[0:0]).empty
