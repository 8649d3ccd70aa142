"""The long-format table read from campaign.db files: columns, categories, live and broken trials."""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from seedzer.report.table import (
    FINDING_COLUMNS,
    LONG_COLUMNS,
    ReportError,
    build_tables,
    classify,
    discover,
    identify,
    read_trial,
    wall_to_elapsed,
)
from seedzer.store.db import CampaignDB
from tests.fixtures.report.synth import make_experiment, make_level_experiment, make_trial


def test_long_table_has_one_row_per_snapshot(tmp_path: Path) -> None:
    t = build_tables(make_experiment(tmp_path))
    assert list(t.long.columns) == LONG_COLUMNS and list(t.findings.columns) == FINDING_COLUMNS
    assert len(t.long) == 6 * 5 and set(t.long["experiment"]) == {"synth"}
    a2 = t.long[(t.long["heuristic"] == "alpha") & (t.long["trial"] == 2)].set_index("time")
    assert a2.loc[20.0, "coverage"] == 44 and a2.loc[20.0, "execs"] == 40
    # alpha trial 2 found a segfault at 12 s and an abort at 14 s
    assert a2.loc[10.0, ["findings_segfault", "findings_other_crash"]].tolist() == [0, 0]
    assert a2.loc[15.0, ["findings_segfault", "findings_other_crash"]].tolist() == [1, 1]
    assert set(t.trials["status"]) == {"done"} and len(t.trials) == 6


def test_findings_are_classified_with_their_meta_json(tmp_path: Path) -> None:
    t = build_tables(make_experiment(tmp_path))
    cats = dict(zip(t.findings["signature"], t.findings["category"], strict=False))
    assert cats == {"seg1": "segfault", "abrt1": "other_crash", "mis1": "mismatch", "exc1": "other",
                    "hang1": "other"}
    assert t.findings.loc[t.findings["signature"] == "abrt1", "time"].item() == pytest.approx(14.0)


def test_classify() -> None:
    assert classify("crash", {"outcome": {"detail": {"signal": 11}}}) == "segfault"
    assert classify("crash", {"outcome": {"detail": {"signal": 6}}}) == "other_crash"
    assert classify("crash", None) == "other_crash"
    assert classify("mismatch", None) == "mismatch"
    assert classify("hang", None) == classify("exception", None) == "other"


def test_wall_clock_maps_to_campaign_time_across_a_resume() -> None:
    # snapshots up to 10 s, a 1000 s pause, then resumed at campaign time 10 s
    snaps = pd.DataFrame({"time": [0.0, 5.0, 10.0, 10.0, 15.0], "wall": [100.0, 105.0, 110.0, 1110.0, 1115.0]})
    got = wall_to_elapsed(np.array([50.0, 102.5, 1112.0, 5000.0]), snaps)
    assert got.tolist() == [0.0, 2.5, 12.0, 15.0]


def test_running_and_incomplete_trials_are_read_without_writing(tmp_path: Path) -> None:
    exp = tmp_path / "live"
    make_trial(exp / "h" / "trial-1", [0, 5, 9], status=None)
    for n in (2, 3):
        (exp / "h" / f"trial-{n}").mkdir(parents=True)
    live = CampaignDB(exp / "h" / "trial-2" / "campaign.db")  # a campaign that has just started
    live.set_meta("config", {"fuzz": {"minutes": 1}})
    live.add_snapshot({"time": 0.0, "execs": 0, "coverage": 3, "coverage_backend": "passes", "corpus_size": 1,
                       "findings": 0, "unique_findings": 0, "invalid": 0, "wall": 1.0})
    CampaignDB(exp / "h" / "trial-3" / "campaign.db").close()  # created, no snapshot yet
    db = exp / "h" / "trial-1" / "campaign.db"
    before = hashlib.sha256(db.read_bytes()).hexdigest()
    t = build_tables(exp)
    live.close()
    assert hashlib.sha256(db.read_bytes()).hexdigest() == before
    assert sorted(t.long.groupby("trial").size().to_dict().items()) == [(1, 3), (2, 1)]
    assert t.trials.set_index("trial")["status"].to_dict() == {1: "incomplete", 2: "incomplete", 3: "incomplete"}


def test_a_corrupt_database_is_skipped_with_a_warning(tmp_path: Path) -> None:
    exp = make_experiment(tmp_path)
    bad = exp / "beta" / "trial-9"
    bad.mkdir()
    (bad / "campaign.db").write_bytes(b"this is not sqlite" * 100)
    warnings: list[str] = []
    t = build_tables(exp, warn=warnings.append)
    assert len(t.trials) == 6 and len(warnings) == 1 and "trial-9" in warnings[0] and "skipped" in warnings[0]


def test_layouts_and_missing_results(tmp_path: Path) -> None:
    assert identify(tmp_path / "exp" / "conv3" / "trial-4") == ("exp", "conv3", 4)
    assert identify(tmp_path / "docker" / "basic-2") == ("docker", "basic", 2)
    assert identify(tmp_path / "campaigns" / "run") == ("campaigns", "run", 1)
    make_trial(tmp_path / "docker" / "basic-2", [0, 1])
    assert [(r.heuristic, r.trial) for r in discover(tmp_path / "docker")] == [("basic", 2)]
    with pytest.raises(ReportError, match="nowhere: results directory does not exist"):
        discover(tmp_path / "nowhere")


def test_several_experiments_keep_heuristics_apart(tmp_path: Path) -> None:
    make_trial(tmp_path / "e1" / "basic" / "trial-1", [0, 1])
    make_trial(tmp_path / "e2" / "basic" / "trial-1", [0, 2])
    t = build_tables(tmp_path)
    assert sorted(t.long["heuristic"].unique()) == ["e1:basic", "e2:basic"]


def _timed_trial(trial_dir: Path, busy_per_s: float) -> None:
    """Two jobs, 4 snapshots a minute apart, 300 execs a minute; build takes half of the busy time."""
    trial_dir.mkdir(parents=True)
    db = CampaignDB(trial_dir / "campaign.db")
    db.set_meta("config", {"fuzz": {"minutes": 3, "jobs": 2}})
    for m in range(4):
        busy = busy_per_s * 60 * m
        db.add_snapshot({"time": 60.0 * m, "execs": 300 * m, "coverage": m, "coverage_backend": "passes",
                         "corpus_size": m, "findings": 0, "unique_findings": 0, "invalid": 0,
                         "wall": 1e9 + 60 * m, "timings": {"busy": busy, "build": busy / 2, "other": busy / 2}})
    db.set_meta("elapsed", 180.0)
    db.close()


def test_per_window_rates_and_stage_shares_per_trial(tmp_path: Path) -> None:
    from seedzer.report.build import build_report

    _timed_trial(tmp_path / "res" / "alpha" / "trial-1", 1.0)
    _timed_trial(tmp_path / "res" / "alpha" / "trial-2", 1.5)
    make_trial(tmp_path / "res" / "beta" / "trial-1", [1, 2, 3])  # snapshots without timings
    t = build_tables(tmp_path / "res")
    a1 = t.long[(t.long["heuristic"] == "alpha") & (t.long["trial"] == 1)]
    assert list(a1["execs_per_s"]) == [0.0, 5.0, 5.0, 5.0]
    st = t.stages.set_index(["trial", "stage"])
    assert set(t.stages["heuristic"]) == {"alpha"}  # beta recorded no stage seconds
    assert st.loc[(1, "busy"), "share"] == pytest.approx(0.5) and st.loc[(1, "build"), "share"] == pytest.approx(0.25)
    assert st.loc[(2, "idle"), "share"] == pytest.approx(0.25) and st.loc[(2, "build"), "seconds"] == pytest.approx(135)
    html = build_report(tmp_path / "res").html.read_text()
    assert "Where the time went" in html and "<td>31.2</td>" in html  # alpha's median build share (25%, 37.5%)


def test_arms_by_level_are_read_like_heuristics(tmp_path: Path) -> None:
    t = build_tables(make_level_experiment(tmp_path))
    assert sorted(t.trials["heuristic"].unique()) == ["basic@tir", "basic@tir+graph", "old"]
    assert identify(tmp_path / "lv" / "basic@tir+graph" / "trial-2") == ("lv", "basic@tir+graph", 2)
    rows = {(h, n, lv): (e, f) for h, n, lv, e, f in
            t.levels[["heuristic", "trial", "level", "execs", "findings"]].itertuples(index=False)}
    assert rows[("basic@tir", 2, "tir")] == (200, 1)
    assert rows[("basic@tir+graph", 2, "tir")] == (60, 1) and rows[("basic@tir+graph", 2, "graph")] == (41, 1)
    # a campaign without level counts: all its executions (its last snapshot's) are tir
    assert rows[("old", 1, "tir")] == (20, 1) and not any(k[0] == "old" and k[2] != "tir" for k in rows)
    levels = dict(zip(t.findings["signature"], t.findings["level"], strict=False))
    assert levels == {"t1": "tir", "g1": "graph", "t2": "tir"}


def test_a_campaign_db_without_level_summary_counts_as_tir(tmp_path: Path) -> None:
    trial = make_trial(tmp_path / "e" / "basic" / "trial-1", [0, 3, 6], findings=[("x", "crash", 1.0, 6)])
    db = CampaignDB(trial / "campaign.db")
    db.conn.execute("DROP TABLE level_summary")
    db.conn.commit()
    db.close()
    got = read_trial(discover(tmp_path / "e")[0])
    fdf, levels = got.findings, got.levels
    assert levels[["level", "execs", "findings"]].values.tolist() == [["tir", 20, 1]]
    assert fdf["level"].tolist() == ["tir"]
