"""campaign.db's reader: typed queries of what the writer wrote, older formats read with their
migration's values, and rows holding values no row can hold left out and named (issue 55 row 8)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from seedzer.store.db import CampaignDB, CorpusRow, FindingRow
from seedzer.store.reader import (
    CampaignReader,
    FilterCount,
    FilterSample,
    LevelCount,
    ModelRow,
    MutationCount,
    PassTriggerCount,
    SymptomCount,
    UnreadableCampaign,
)


def _snapshot(t: float, execs: int) -> dict[str, object]:
    return {"time": t, "execs": execs, "coverage": 7, "coverage_backend": "passes", "corpus_size": 2, "findings": 1,
            "unique_findings": 1, "invalid": 0, "wall": 1e9 + t, "timings": {"build": 1.5}}


def test_every_query_reads_what_the_writer_wrote(tmp_path: Path) -> None:
    path = tmp_path / "campaign.db"
    db = CampaignDB(path)
    db.set_meta("pool", "/p")
    db.add_exec_counts({("ok", "run"): 5, ("invalid", "mutate"): 2})
    db.add_level_counts({("tir", "ok"): 4, ("graph", "ok"): 3})
    db.add_mutator_counts({("IntMutator", "ok"): 6})
    db.add_filter_counts({("tir", "unusable test case", "-"): 2, ("graph", "bounds: unroll", "x"): 9})
    sample = db.add_filter_sample("tir", "unusable test case", "-", "filtered/a", 3, rerun="waiting")
    db.add_pass_triggers([("tir", "tirx.Simplify", 3, 1)])
    db.add_snapshot(_snapshot(5.0, 10))
    db.add_snapshot(_snapshot(10.0, 20))
    db.add_corpus(CorpusRow("a1", None, "m.onnx", "[]", 3, 1.0, "corpus/a1.py", "Conv", "[]", "tir"))
    db.add_corpus(CorpusRow("b2", "a1", "m.onnx", "[]", 1, 2.0, "corpus/b2.graph.json", "graph", "[]", "graph"))
    finding = FindingRow("sig", "crash", "build", "tirx.Simplify", "boom", 1.0, 2.0, 1, "new", "findings/sig")
    db.upsert_finding(finding)
    db.set_model("m.onnx", "ok", 2, {})
    db.add_features(["onnx-op/Conv", "bp:tvm:1"], 1.0)
    db.add_event("worker_restart", {})
    db.add_event("resume", {})
    db.close()
    with CampaignReader.open(path) as reader:
        assert reader.meta("pool") == "/p" and reader.meta("absent", 3) == 3
        assert sorted(reader.exec_counts(), key=str) == sorted([SymptomCount("ok", "run", 5),
                                                                SymptomCount("invalid", "mutate", 2)], key=str)
        assert set(reader.level_counts()) == {LevelCount("tir", "ok", 4), LevelCount("graph", "ok", 3)}
        assert reader.mutation_counts() == [MutationCount("IntMutator", "ok", 6)]
        assert reader.filter_counts() == [FilterCount("graph", "bounds: unroll", "x", 9),
                                          FilterCount("tir", "unusable test case", "-", 2)]  # most first
        assert reader.filter_samples() == [FilterSample(sample, "tir", "unusable test case", "-", "filtered/a",
                                                        "waiting", "")]
        assert reader.pass_trigger_counts() == [PassTriggerCount("tir", "tirx.Simplify", 3, 1)]
        assert [(s.time, s.execs) for s in reader.snapshots()] == [(5.0, 10), (10.0, 20)]
        last = reader.last_snapshot()
        assert last is not None and (last.time, last.coverage, last.timings) == (10.0, 7, '{"build": 1.5}')
        assert reader.corpus_size() == 2 and reader.corpus_paths() == ["corpus/a1.py", "corpus/b2.graph.json"]
        assert [r.id for r in reader.corpus_rows()] == ["a1", "b2"]
        assert reader.corpus_levels() == {"tir": 1, "graph": 1}
        assert reader.findings() == [finding]
        assert reader.models() == [ModelRow("m.onnx", "ok", 2, "{}")]
        assert reader.features("onnx-op/") == ["onnx-op/Conv"] and len(reader.features()) == 2
        assert reader.event_count(("worker_restart", "worker_killed")) == 1
        assert reader.epochs() == [] and reader.corrupt == []


FIRST_FORMAT = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE exec_summary (symptom TEXT NOT NULL, stage TEXT NOT NULL, count INTEGER NOT NULL,
    PRIMARY KEY (symptom, stage));
CREATE TABLE snapshots (id INTEGER PRIMARY KEY, time REAL NOT NULL, execs INTEGER NOT NULL,
    coverage INTEGER NOT NULL, coverage_backend TEXT NOT NULL, corpus_size INTEGER NOT NULL,
    findings INTEGER NOT NULL, unique_findings INTEGER NOT NULL, invalid INTEGER NOT NULL, wall REAL NOT NULL);
CREATE TABLE corpus (id TEXT PRIMARY KEY, parent TEXT, origin_model TEXT NOT NULL, passes TEXT NOT NULL,
    coverage_gain INTEGER NOT NULL, added_time REAL NOT NULL, path TEXT NOT NULL,
    op TEXT NOT NULL DEFAULT '', mutators TEXT NOT NULL DEFAULT '');
CREATE TABLE findings (signature TEXT PRIMARY KEY, symptom TEXT NOT NULL, stage TEXT, pass TEXT,
    message TEXT NOT NULL, first_seen REAL NOT NULL, last_seen REAL NOT NULL, count INTEGER NOT NULL,
    status TEXT NOT NULL, dir TEXT NOT NULL);
INSERT INTO meta VALUES ('schema_version', '1');
INSERT INTO exec_summary VALUES ('ok', 'run', 12);
INSERT INTO snapshots (time, execs, coverage, coverage_backend, corpus_size, findings, unique_findings, invalid,
    wall) VALUES (5.0, 12, 3, 'passes', 1, 1, 1, 0, 1000000005.0);
INSERT INTO corpus VALUES ('a1', NULL, 'm.onnx', '[]', 3, 1.0, 'corpus/a1.py', 'Conv', '[]');
INSERT INTO findings VALUES ('sig', 'crash', 'build', NULL, 'boom', 1.0, 2.0, 4, 'new', 'findings/sig');
"""
"""A campaign.db as the first campaigns wrote it: no level, verdict, timings or trigger columns, and no
counter tables but the executions'."""


def test_a_database_of_the_first_format_reads_as_its_migration_would_make_it(tmp_path: Path) -> None:
    path = tmp_path / "campaign.db"
    con = sqlite3.connect(path)
    con.executescript(FIRST_FORMAT)
    con.close()
    before = path.read_bytes()
    with CampaignReader.open(path) as reader:
        assert reader.findings() == [FindingRow("sig", "crash", "build", None, "boom", 1.0, 2.0, 4, "new",
                                                "findings/sig", kind="tir", verdict="pending")]
        assert reader.corpus_rows()[0].level == "tir"  # from its file's suffix
        snap = reader.last_snapshot()
        assert snap is not None and (snap.execs, snap.timings, snap.triggers) == (12, "{}", "{}")
        assert reader.exec_counts() == [SymptomCount("ok", "run", 12)]
        assert reader.level_counts() == reader.filter_counts() == reader.filter_samples() == []
        assert reader.models() == reader.features() == reader.epochs() == [] and reader.event_count(["x"]) == 0
        assert reader.corrupt == []
    assert path.read_bytes() == before and not list(tmp_path.glob("campaign.db-*"))


HOSTILE = [("tir", "r-abc", "-", "abc"), ("tir", "r-big", "-", "1e+20"), ("tir", "r-neg", "-", -5),
           ("tir", "r-bytes", "-", b"\x00\x01"), ("tir", "r-half", "-", 2.5), ("graph", "fine", "-", 7)]
"""``filter_summary`` rows as a hostile or damaged campaign.db holds them: only the last is a count."""


def hostile_campaign(directory: Path) -> Path:
    """A real campaign.db whose ``filter_summary`` holds :data:`HOSTILE` (written past the writer)."""
    directory.mkdir(parents=True, exist_ok=True)
    CampaignDB(directory / "campaign.db").close()
    con = sqlite3.connect(directory / "campaign.db")
    con.executemany("INSERT INTO filter_summary VALUES (?, ?, ?, ?)", HOSTILE)
    con.commit()
    con.close()
    return directory / "campaign.db"


def test_a_count_that_is_no_count_is_left_out_and_named_in_one_line(tmp_path: Path) -> None:
    with CampaignReader.open(hostile_campaign(tmp_path)) as reader:
        assert reader.filter_counts() == [FilterCount("graph", "fine", "-", 7)]
        lines = [row.line() for row in reader.corrupt]
    assert lines == [
        "corrupt row in campaign.db: filter_summary (level 'tir', reason 'r-abc', pass '-'): count 'abc' is not "
        "a count; left out",
        "corrupt row in campaign.db: filter_summary (level 'tir', reason 'r-big', pass '-'): count 1e+20 is not a "
        "count; left out",
        "corrupt row in campaign.db: filter_summary (level 'tir', reason 'r-neg', pass '-'): count -5 is not a "
        "count; left out",
        "corrupt row in campaign.db: filter_summary (level 'tir', reason 'r-bytes', pass '-'): count "
        "b'\\x00\\x01' is not a count; left out",
        "corrupt row in campaign.db: filter_summary (level 'tir', reason 'r-half', pass '-'): count 2.5 is not a "
        "count; left out"]


def test_a_file_sqlite_cannot_read_is_one_line_with_sqlite_s_words(tmp_path: Path) -> None:
    path = tmp_path / "campaign.db"
    path.write_text("not a database\n" * 10)
    with pytest.raises(UnreadableCampaign, match=r"campaign\.db: unreadable campaign database \(.*not a database"):
        CampaignReader.open(path, checked=False).snapshots()
    path.unlink()
    CampaignDB(path).close()
    con = sqlite3.connect(path)
    con.execute("INSERT INTO meta VALUES ('pool', '{not json')")
    con.commit()
    con.close()
    with CampaignReader.open(path) as reader, pytest.raises(UnreadableCampaign, match="unreadable campaign database"):
        reader.meta("pool")
