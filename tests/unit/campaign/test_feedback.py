"""Coverage totals and pass triggers (:mod:`seedzer.campaign.feedback`): an execution's gain, what a
snapshot writes, what a resumed campaign starts from."""

from __future__ import annotations

from pathlib import Path

from seedzer.campaign.feedback import Feedback, Gain
from seedzer.coverage import make_backend
from seedzer.execute.records import ExecResult
from seedzer.kernel.common import Observation
from seedzer.store.db import CampaignDB


def run(features: list[str], triggered: list[str]) -> ExecResult:
    return ExecResult(Observation.ok(), list(features), passes_ran=["tirx.A", *triggered], passes_triggered=triggered)


def test_the_gain_counts_features_and_triggered_passes_never_seen(tmp_path: Path) -> None:
    feedback = Feedback(make_backend("passes"))
    first = run(["line:a"], ["tirx.Simplify"])
    assert feedback.merge("tir", first) == Gain(2, 1) and "triggered/tir/tirx.Simplify" in first.features
    assert feedback.merge("tir", run(["line:a"], ["tirx.Simplify"])) == Gain(0, 0)
    assert feedback.merge("graph", run(["line:a"], ["tirx.Simplify"])) == Gain(1, 1)  # another level's trigger
    assert feedback.total() == 3
    totals = feedback.trigger_totals()
    assert totals["tir"].run == 2 and totals["tir"].once == 1  # tirx.A ran, tirx.Simplify triggered
    db = CampaignDB(tmp_path / "campaign.db")
    feedback.flush(db, 100.0)
    feedback.flush(db, 200.0)  # nothing new since
    assert sorted(db.features()) == ["line:a", "triggered/graph/tirx.Simplify", "triggered/tir/tirx.Simplify"]
    assert db.pass_triggers()[("tir", "tirx.Simplify")] == (2, 2)
    resumed = Feedback(make_backend("passes"))
    resumed.restore(db)
    assert resumed.total() == 3 and resumed.merge("tir", run(["line:a"], ["tirx.Simplify"])) == Gain(0, 0)
    assert resumed.trigger_totals()["tir"].run == 2
    db.close()
