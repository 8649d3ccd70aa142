"""Optimizations triggered, campaign-side: counts per level and pass, their totals (>= 1, >= 10 of run),
the features of triggered passes, the snapshot column and reading back an older campaign.db."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from seedzer.campaign.triggers import (
    OFTEN,
    PassCount,
    TriggerCounts,
    TriggerTotals,
    parse_snapshot_column,
    parse_triggered,
    read_pass_counts,
    read_trigger_points,
    snapshot_column,
    triggered_feature,
)
from seedzer.store.db import CampaignDB
from seedzer.store.reader import CampaignReader


def test_a_test_case_counts_once_per_pass_and_gives_the_features_of_what_it_triggered() -> None:
    counts = TriggerCounts()
    features = counts.record("tir", ["tirx.Simplify", "tirx.RemoveNoOp", "tirx.Simplify"], ["tirx.Simplify"])
    assert features == ["triggered/tir/tirx.Simplify"]
    for _ in range(OFTEN - 1):
        counts.record("tir", ["tirx.Simplify"], ["tirx.Simplify"])
    counts.record("graph", ["FoldConstant"], [])
    assert counts.counts[("tir", "tirx.Simplify")] == PassCount(OFTEN, OFTEN)
    assert counts.counts[("tir", "tirx.RemoveNoOp")] == PassCount(1, 0)
    assert counts.totals() == {"graph": TriggerTotals(1, 0, 0), "tir": TriggerTotals(2, 1, 1)}
    assert counts.triggered_by("tir") == {"tirx.Simplify": OFTEN, "tirx.RemoveNoOp": 0}


def test_drain_gives_the_increments_once_and_restore_continues_from_stored_counts() -> None:
    counts = TriggerCounts()
    counts.restore({("tir", "tirx.Simplify"): PassCount(5, 2)})
    counts.record("tir", ["tirx.Simplify"], ["tirx.Simplify"])
    assert counts.drain() == {("tir", "tirx.Simplify"): PassCount(1, 1)}
    assert counts.drain() == {}
    assert counts.counts[("tir", "tirx.Simplify")] == PassCount(6, 3)


def test_features_and_the_snapshot_column_read_back() -> None:
    assert parse_triggered(triggered_feature("graph", "FoldConstant")) == ("graph", "FoldConstant")
    assert parse_triggered("onnx-op/Conv") is None and parse_triggered("triggered/tir") is None
    totals = {"tir": TriggerTotals(40, 12, 3)}
    assert parse_snapshot_column(snapshot_column(totals)) == totals
    assert parse_snapshot_column("") == {} and parse_snapshot_column("[1]") == {}
    assert parse_snapshot_column('{"tir": [1, 2]}') == {}


def test_a_campaign_db_from_before_the_figures_reads_as_none(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE snapshots (id INTEGER PRIMARY KEY, time REAL NOT NULL)")
    old = CampaignReader(con, path)
    assert read_pass_counts(old) == {} and read_trigger_points(old) == []
    con.close()
    db = CampaignDB(tmp_path / "new.db")
    db.add_pass_triggers([("tir", "tirx.Simplify", 3, 1)])
    db.close()
    with CampaignReader.open(tmp_path / "new.db") as reader:
        assert read_pass_counts(reader) == {("tir", "tirx.Simplify"): PassCount(3, 1)}
