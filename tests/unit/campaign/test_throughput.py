"""Throughput over time: stable stage names, windows from cumulative snapshots, the status table."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner
from rich.console import Console

from seedzer.campaign.summary import campaign_summary
from seedzer.campaign.throughput import (
    SnapshotPoint,
    parse_timings,
    read_points,
    stage_totals,
    whole,
    window_between,
    windows,
)
from seedzer.cli import main
from seedzer.store.db import CampaignDB
from seedzer.store.reader import CampaignReader


def test_stage_totals_rename_keep_unknown_keys_and_derive_other() -> None:
    got = stage_totals({"mutate": 1.0, "passes": 2.0, "reference": 0.5, "build": 3.0, "run": 0.25,
                        "perf": 0.25, "worker_busy": 8.0, "worker_cpu": 6.0, "bookkeeping": 0.4, "gate": 0.6,
                        "reused_builds": 7.0, "fold": 0.5})
    assert got["busy"] == 8.0 and got["cpu"] == 6.0 and "worker_busy" not in got
    assert got["fold"] == 0.5 and got["reused_builds"] == 7.0  # unknown keys and counts kept by name
    # other: busy time no worker stage accounts for (campaign stages and counts are not worker time)
    assert got["other"] == pytest.approx(8.0 - (1 + 2 + 0.5 + 3 + 0.25 + 0.25 + 0.5))
    assert list(got) == sorted(got)


def test_stage_totals_merge_restored_and_fresh_names() -> None:
    """A resumed campaign restores stable names and adds the workers' raw ones: they are summed."""
    got = stage_totals({"busy": 5.0, "other": 4.0, "worker_busy": 1.0, "build": 1.0})
    assert got == {"build": 1.0, "busy": 6.0, "other": 5.0}
    assert stage_totals({}) == {}


@pytest.mark.parametrize("text", [None, "", "not json", "[1, 2]", '{"a": "x"}'])
def test_parse_timings_tolerates_old_and_broken_columns(text: str | None) -> None:
    assert parse_timings(text) == {}


def point(minute: float, execs: int, busy: float, build: float, passes: float) -> SnapshotPoint:
    return SnapshotPoint(minute * 60, execs, {"busy": busy, "build": build, "passes": passes,
                                              "other": busy - build - passes, "cpu": busy / 2})


def test_windows_are_differences_of_cumulative_snapshots() -> None:
    pts = [SnapshotPoint(0.0, 0), point(2.5, 1000, 140, 60, 40), point(5, 1800, 290, 130, 80),
           point(7.5, 2200, 440, 230, 100), point(10, 2500, 590, 340, 110), point(11, 2550, 650, 390, 112)]
    wins = windows(pts, 5.0, jobs=2)
    assert [(w.start, w.end) for w in wins] == [(0.0, 300.0), (300.0, 600.0), (600.0, 660.0)]
    first, second, last = wins
    assert first.execs == 1800 and first.rate == pytest.approx(6.0)
    assert second.execs == 700 and second.rate == pytest.approx(700 / 300)
    assert second.seconds["build"] == pytest.approx(210) and second.capacity == pytest.approx(600)
    shares = second.shares()
    assert shares["build"] == pytest.approx(210 / 600) and shares["busy"] == pytest.approx(300 / 600)
    assert shares["idle"] == pytest.approx(0.5) and "cpu" not in shares
    assert [k for k, _ in second.top(2)] == ["build", "other"]
    assert last.execs == 50 and last.end - last.start == 60
    total = whole(pts, jobs=2)
    assert total is not None and total.execs == 2550 and total.seconds["busy"] == 650


def test_windows_need_two_snapshots_and_a_positive_length() -> None:
    assert windows([SnapshotPoint(0.0, 0)], 5.0) == [] and windows([], 5.0) == []
    assert windows([SnapshotPoint(0.0, 0), SnapshotPoint(60.0, 10)], 0) == []
    assert whole([SnapshotPoint(3.0, 1)]) is None


def test_a_window_from_a_snapshot_without_timings_records_none() -> None:
    """An older campaign resumed by a newer Seedzer: its first timed snapshot is not a difference."""
    old, new = SnapshotPoint(60.0, 500), point(2, 600, 30, 10, 5)
    assert not window_between(old, new).timed and window_between(old, new).shares() == {}
    assert window_between(SnapshotPoint(0.0, 0), new).timed  # from the start, the totals are the window


def snapshot(db: CampaignDB, minute: float, execs: int, timings: dict[str, float] | None) -> None:
    row = {"time": minute * 60, "execs": execs, "coverage": execs, "coverage_backend": "passes",
           "corpus_size": 1, "findings": 0, "unique_findings": 0, "invalid": 0, "wall": 1e9 + minute * 60}
    if timings is not None:
        row["timings"] = timings
    db.add_snapshot(row)


def fake_campaign(out: Path, minutes: int, jobs: int = 1) -> Path:
    out.mkdir(parents=True)
    db = CampaignDB(out / "campaign.db")
    db.set_meta("config", {"fuzz": {"minutes": minutes, "jobs": jobs}})
    db.set_meta("elapsed", minutes * 60.0)
    for m in range(minutes + 1):
        # 10 execs/s at first, then 2; build takes ever more of a busy worker
        execs = 600 * min(m, 5) + 120 * max(0, m - 5)
        snapshot(db, m, execs, stage_totals({"worker_busy": 55.0 * m * jobs, "build": 2.0 * m * m,
                                             "passes": 10.0 * m, "bookkeeping": 1.0 * m}))
    db.add_exec_counts({("ok", ""): 600 * min(minutes, 5) + 120 * max(0, minutes - 5)})
    db.close()
    return out


def render(out: Path, minutes: float = 5.0) -> str:
    console = Console(width=200, record=True)
    console.print(campaign_summary(out, window_minutes=minutes))
    return console.export_text()


def test_status_shows_throughput_by_window(tmp_path: Path) -> None:
    out = fake_campaign(tmp_path / "camp", 10)
    text = render(out)
    assert "Throughput over time (5-minute windows)" in text
    rows = [ln for ln in text.splitlines() if ln.startswith(("│ 0.0-5.0", "│ 5.0-10.0"))]
    assert len(rows) == 2
    assert "10.00" in rows[0] and "92%" in rows[0] and "other 58%, build 17%, passes 17%, bookkeeping 2%" in rows[0]
    assert "2.00" in rows[1] and "build 50%, other 25%, passes 17%" in rows[1]
    one_minute = render(out, 1.0)
    assert "Throughput over time (1-minute windows)" in one_minute and "│ 9.0-10.0" in one_minute


def test_status_stays_compact_below_two_windows_and_with_zero(tmp_path: Path) -> None:
    out = fake_campaign(tmp_path / "camp", 4)
    assert "Throughput" not in render(out) and "Throughput" in render(out, 1.0)
    assert "Throughput" not in render(out, 0)


def test_status_of_a_campaign_db_older_than_the_timings_column(tmp_path: Path) -> None:
    """The column is missing (a campaign made before it): windows still show executions/s; the
    database is opened read-only and left as it was."""
    out = tmp_path / "old"
    out.mkdir()
    con = sqlite3.connect(out / "campaign.db")
    con.executescript("""
        CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        CREATE TABLE snapshots (id INTEGER PRIMARY KEY, time REAL NOT NULL, execs INTEGER NOT NULL,
            coverage INTEGER NOT NULL, coverage_backend TEXT NOT NULL, corpus_size INTEGER NOT NULL,
            findings INTEGER NOT NULL, unique_findings INTEGER NOT NULL, invalid INTEGER NOT NULL,
            wall REAL NOT NULL, coverage_detail TEXT NOT NULL DEFAULT '{}');
    """)
    con.executemany("INSERT INTO snapshots (time, execs, coverage, coverage_backend, corpus_size, findings,"
                    " unique_findings, invalid, wall) VALUES (?, ?, 1, 'passes', 1, 0, 0, 0, 0)",
                    [(60.0 * m, 300 * m) for m in range(11)])
    con.execute("INSERT INTO meta VALUES ('config', ?)", (json.dumps({"fuzz": {"minutes": 10}}),))
    con.execute("INSERT INTO meta VALUES ('schema_version', '1')")
    con.commit()
    con.close()
    before = (out / "campaign.db").read_bytes()
    with CampaignReader.open(out / "campaign.db") as reader:
        assert [p.timings for p in read_points(reader)] == [{}] * 11
    text = render(out)
    assert "│ 0.0-5.0" in text and "5.00" in text and "(not recorded)" in text
    assert (out / "campaign.db").read_bytes() == before


def test_status_command_takes_windows(tmp_path: Path) -> None:
    out = fake_campaign(tmp_path / "camp", 4)
    result = CliRunner().invoke(main, ["status", str(out), "--windows", "2"])
    assert result.exit_code == 0, result.output
    assert "Throughput over time (2-minute windows)" in result.output
    assert CliRunner().invoke(main, ["status", str(out), "--windows", "-1"]).exit_code == 2
