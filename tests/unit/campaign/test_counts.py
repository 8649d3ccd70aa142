"""Executions counted by symptom, level and mutation (:mod:`seedzer.campaign.counts`): live at once,
in campaign.db at the next flush, never twice."""

from __future__ import annotations

from pathlib import Path

from seedzer.campaign.counts import ExecCounts
from seedzer.campaign.stats import CampaignStats
from seedzer.store.db import CampaignDB


def test_counts_are_live_at_once_and_flushed_once(tmp_path: Path) -> None:
    stats = CampaignStats(execs=10)  # a resumed campaign's executions so far
    counts = ExecCounts(stats)
    counts.execution("ok", "", "tir")
    counts.execution("exception", "pass", "graph")
    counts.execution("ok", "", "tir")
    counts.mutants(["FakeAppend", "Swap"], "ok")
    assert (stats.execs, stats.session_execs, dict(stats.level_execs)) == (13, 3, {"tir": 2, "graph": 1})
    db = CampaignDB(tmp_path / "campaign.db")
    counts.flush(db)
    counts.flush(db)  # nothing new: nothing added
    assert db.exec_summary() == {("ok", ""): 2, ("exception", "pass"): 1}
    assert db.conn.execute("SELECT level, symptom, count FROM level_summary ORDER BY 1").fetchall() == [
        ("graph", "exception", 1), ("tir", "ok", 2)]
    assert db.conn.execute("SELECT mutator, symptom, count FROM mutator_summary ORDER BY 1").fetchall() == [
        ("FakeAppend", "ok", 1), ("Swap", "ok", 1)]
    assert not counts.by_symptom and not counts.by_level and not counts.by_mutation
    db.close()
