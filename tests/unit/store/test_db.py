"""campaign.db's snapshots: the cumulative stage seconds column, and older databases without it."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from seedzer.store.db import CampaignDB

OLD_SNAPSHOTS = """
CREATE TABLE snapshots (
    id INTEGER PRIMARY KEY, time REAL NOT NULL, execs INTEGER NOT NULL, coverage INTEGER NOT NULL,
    coverage_backend TEXT NOT NULL, corpus_size INTEGER NOT NULL, findings INTEGER NOT NULL,
    unique_findings INTEGER NOT NULL, invalid INTEGER NOT NULL, wall REAL NOT NULL,
    coverage_detail TEXT NOT NULL DEFAULT '{}');
"""
"""The snapshots table as campaigns wrote it before the ``timings`` column."""


def row(t: float, execs: int, **extra: object) -> dict[str, object]:
    return {"time": t, "execs": execs, "coverage": 3, "coverage_backend": "passes", "corpus_size": 1,
            "findings": 0, "unique_findings": 0, "invalid": 0, "wall": 1e9 + t, **extra}


def test_snapshot_timings_round_trip(tmp_path: Path) -> None:
    db = CampaignDB(tmp_path / "campaign.db")
    db.add_snapshot(row(0.0, 0))
    db.add_snapshot(row(5.0, 40, timings={"build": 1.25, "busy": 4.5, "mutate": 0.125}))
    first, second = db.snapshots()
    assert json.loads(first["timings"]) == {}
    assert json.loads(second["timings"]) == {"build": 1.25, "busy": 4.5, "mutate": 0.125}
    db.close()


def test_an_older_database_gains_the_column_and_keeps_its_rows(tmp_path: Path) -> None:
    path = tmp_path / "campaign.db"
    con = sqlite3.connect(path)
    con.executescript(OLD_SNAPSHOTS)
    con.execute("INSERT INTO snapshots (time, execs, coverage, coverage_backend, corpus_size, findings,"
                " unique_findings, invalid, wall) VALUES (1.0, 7, 2, 'passes', 1, 0, 0, 0, 5.0)")
    con.commit()
    con.close()
    db = CampaignDB(path)  # what --resume does
    db.add_snapshot(row(2.0, 9, timings={"busy": 1.5}))
    old, new = db.snapshots()
    assert old["execs"] == 7 and old["timings"] == "{}"
    assert json.loads(new["timings"]) == {"busy": 1.5}
    db.close()
    cols = [r[1] for r in sqlite3.connect(path).execute("PRAGMA table_info(snapshots)")]
    assert cols[-2:] == ["timings", "triggers"]  # the old rows read as no trigger figures
    assert old["triggers"] == "{}"


def test_pass_trigger_counts_add_up_and_an_older_database_gains_the_table(tmp_path: Path) -> None:
    path = tmp_path / "campaign.db"
    con = sqlite3.connect(path)
    con.executescript(OLD_SNAPSHOTS)
    con.close()
    db = CampaignDB(path)
    db.add_pass_triggers([("tir", "tirx.Simplify", 3, 1), ("graph", "FoldConstant", 2, 2)])
    db.add_pass_triggers([("tir", "tirx.Simplify", 4, 2)])
    db.add_pass_triggers([])
    assert db.pass_triggers() == {("tir", "tirx.Simplify"): (7, 3), ("graph", "FoldConstant"): (2, 2)}
    db.add_snapshot(row(1.0, 2, triggers='{"tir": [1, 1, 0]}'))
    assert db.snapshots()[-1]["triggers"] == '{"tir": [1, 1, 0]}'
    db.close()
