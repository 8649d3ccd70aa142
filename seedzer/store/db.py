"""campaign.db: the SQLite (WAL) record of a campaign, written only by the campaign process.

Every corpus entry and finding is committed as soon as it is reported, so a campaign killed with
SIGKILL at any moment loses nothing it has shown; ``--resume`` reopens the same database.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from seedzer.errors import CampaignError, SeedzerError
from seedzer.level_table import level_of_path
from seedzer.store.allocation_rows import STATE_META, ArmRow
from seedzer.store.api_rows import LevelApi

SCHEMA_VERSION = 1

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS exec_summary (
    symptom TEXT NOT NULL, stage TEXT NOT NULL, count INTEGER NOT NULL,
    PRIMARY KEY (symptom, stage));
CREATE TABLE IF NOT EXISTS mutator_summary (
    mutator TEXT NOT NULL, symptom TEXT NOT NULL, count INTEGER NOT NULL, PRIMARY KEY (mutator, symptom));
CREATE TABLE IF NOT EXISTS level_summary (
    level TEXT NOT NULL, symptom TEXT NOT NULL, count INTEGER NOT NULL, PRIMARY KEY (level, symptom));
CREATE TABLE IF NOT EXISTS filter_summary (
    level TEXT NOT NULL, reason TEXT NOT NULL, pass TEXT NOT NULL, count INTEGER NOT NULL,
    PRIMARY KEY (level, reason, pass));
CREATE TABLE IF NOT EXISTS filter_samples (
    id INTEGER PRIMARY KEY, level TEXT NOT NULL, reason TEXT NOT NULL, pass TEXT NOT NULL,
    folder TEXT NOT NULL, testcase INTEGER, time REAL NOT NULL, rerun TEXT NOT NULL DEFAULT '',
    rerun_detail TEXT NOT NULL DEFAULT '');
CREATE TABLE IF NOT EXISTS snapshots (
    id INTEGER PRIMARY KEY, time REAL NOT NULL, execs INTEGER NOT NULL, coverage INTEGER NOT NULL,
    coverage_backend TEXT NOT NULL, corpus_size INTEGER NOT NULL, findings INTEGER NOT NULL,
    unique_findings INTEGER NOT NULL, invalid INTEGER NOT NULL, wall REAL NOT NULL,
    coverage_detail TEXT NOT NULL DEFAULT '{}', timings TEXT NOT NULL DEFAULT '{}',
    triggers TEXT NOT NULL DEFAULT '{}');
CREATE TABLE IF NOT EXISTS corpus (
    id TEXT PRIMARY KEY, parent TEXT, origin_model TEXT NOT NULL, passes TEXT NOT NULL,
    coverage_gain INTEGER NOT NULL, added_time REAL NOT NULL, path TEXT NOT NULL,
    op TEXT NOT NULL DEFAULT '', mutators TEXT NOT NULL DEFAULT '', level TEXT NOT NULL DEFAULT '');
CREATE TABLE IF NOT EXISTS findings (
    signature TEXT PRIMARY KEY, symptom TEXT NOT NULL, stage TEXT, pass TEXT, message TEXT NOT NULL,
    first_seen REAL NOT NULL, last_seen REAL NOT NULL, count INTEGER NOT NULL,
    status TEXT NOT NULL, dir TEXT NOT NULL, kind TEXT NOT NULL DEFAULT 'tir',
    verdict TEXT NOT NULL DEFAULT 'pending', verdict_reason TEXT NOT NULL DEFAULT '', root TEXT);
CREATE TABLE IF NOT EXISTS events (
    id INTEGER PRIMARY KEY, time REAL NOT NULL, kind TEXT NOT NULL, detail TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS models (
    model TEXT PRIMARY KEY, status TEXT NOT NULL, seeds INTEGER NOT NULL, detail TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS coverage_features (feature TEXT PRIMARY KEY, first_seen REAL NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS pass_triggers (
    level TEXT NOT NULL, pass TEXT NOT NULL, ran INTEGER NOT NULL, triggered INTEGER NOT NULL,
    PRIMARY KEY (level, pass));
CREATE TABLE IF NOT EXISTS epochs (
    epoch INTEGER PRIMARY KEY, started REAL, weights TEXT NOT NULL DEFAULT '{}',
    onnx_weights TEXT NOT NULL DEFAULT '{}', posterior TEXT NOT NULL DEFAULT '{}',
    outcomes TEXT NOT NULL DEFAULT '[]', made INTEGER NOT NULL DEFAULT 0, loaded INTEGER NOT NULL DEFAULT 0,
    coverage INTEGER, roots INTEGER, ended REAL, attribute_weights TEXT NOT NULL DEFAULT '{}');
CREATE TABLE IF NOT EXISTS allocation (
    time REAL NOT NULL, grp TEXT NOT NULL, arm TEXT NOT NULL, weight REAL NOT NULL,
    reward_per_minute REAL NOT NULL, runs INTEGER NOT NULL, roots INTEGER NOT NULL, seconds REAL NOT NULL,
    PRIMARY KEY (time, grp, arm));
"""


MIGRATIONS: tuple[tuple[str, str, str], ...] = (
    ("snapshots", "coverage_detail", "TEXT NOT NULL DEFAULT '{}'"),
    ("snapshots", "timings", "TEXT NOT NULL DEFAULT '{}'"),
    ("snapshots", "triggers", "TEXT NOT NULL DEFAULT '{}'"),
    ("findings", "kind", "TEXT NOT NULL DEFAULT 'tir'"),
    ("findings", "verdict", "TEXT NOT NULL DEFAULT 'pending'"),
    ("findings", "verdict_reason", "TEXT NOT NULL DEFAULT ''"),
    ("findings", "root", "TEXT"),
    ("corpus", "level", "TEXT NOT NULL DEFAULT ''"),
    ("epochs", "attribute_weights", "TEXT NOT NULL DEFAULT '{}'"),
)
"""Columns added since the first campaign.db format: (table, column, declaration)."""


@dataclass
class CorpusRow:
    """One corpus entry as stored in campaign.db. ``path`` is its script file, relative to the campaign
    directory; ``level`` is empty in rows written before entries carried their level (the level is
    then read off the file's suffix, :func:`seedzer.level_table.level_of_path`)."""

    id: str
    parent: str | None
    origin_model: str
    passes: str
    coverage_gain: int
    added_time: float
    path: str
    op: str = ""
    mutators: str = "[]"
    level: str = ""


@dataclass
class FindingRow:
    """One deduplicated finding as stored in campaign.db."""

    signature: str
    symptom: str
    stage: str | None
    pass_name: str | None
    message: str
    first_seen: float
    last_seen: float
    count: int
    status: str
    dir: str
    kind: str = "tir"
    verdict: str = "pending"
    verdict_reason: str = ""
    root: str | None = None


class CampaignDB:
    """Thin typed access to campaign.db (one connection, used from one thread)."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        try:
            self.conn = sqlite3.connect(self.path, isolation_level=None, timeout=30)
            self.conn.execute("PRAGMA journal_mode=WAL")
            self.conn.execute("PRAGMA synchronous=NORMAL")
            self.conn.executescript(SCHEMA)
            self._migrate()
        except sqlite3.DatabaseError as exc:
            raise CampaignError(f"{self.path}: cannot open campaign database ({exc})") from exc
        if self.get_meta("schema_version") is None:
            self.set_meta("schema_version", SCHEMA_VERSION)

    def _migrate(self) -> None:
        """Add columns newer than an old campaign.db (kept readable by ``--resume`` and ``recheck``), and
        give corpus rows written before entries carried their level the level of their file's suffix."""
        for table, column, decl in MIGRATIONS:
            cols = {r[1] for r in self.conn.execute(f"PRAGMA table_info({table})")}
            if column not in cols:
                self.conn.execute(f"ALTER TABLE {table} ADD COLUMN {column} {decl}")
        unmarked = self.conn.execute("SELECT id, path FROM corpus WHERE level = ''").fetchall()
        levels = []
        for seed_id, path in unmarked:
            with contextlib.suppress(SeedzerError):  # a path of no level stays unmarked (skipped on restore)
                levels.append((level_of_path(str(path)), seed_id))
        if levels:
            with self.transaction() as c:
                c.executemany("UPDATE corpus SET level = ? WHERE id = ?", levels)

    def close(self) -> None:
        """Close the connection (checkpointing the WAL)."""
        self.conn.close()

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """A write transaction, committed on exit; disk errors become a one-line CampaignError."""
        try:
            self.conn.execute("BEGIN IMMEDIATE")
            try:
                yield self.conn
            except BaseException:
                self.conn.execute("ROLLBACK")
                raise
            self.conn.execute("COMMIT")
        except sqlite3.OperationalError as exc:
            raise CampaignError(f"{self.path}: database write failed ({exc})") from exc

    # --- meta -----------------------------------------------------------------------------
    def set_meta(self, key: str, value: Any) -> None:
        """Store a JSON-able value under ``key``."""
        with self.transaction() as c:
            c.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, json.dumps(value)))

    def get_meta(self, key: str, default: Any = None) -> Any:
        """Read a value stored with :meth:`set_meta`."""
        row = self.conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return json.loads(row[0]) if row else default

    def set_level_api(self, api: LevelApi) -> None:
        """Record the TVM API a level exercises (:mod:`seedzer.store.api_rows`)."""
        self.set_meta(api.key, api.to_json())

    def record_allocation(self, when: float, arms: Iterable[ArmRow], state: Any) -> None:
        """One snapshot of the allocation at campaign second ``when``: every arm's row, and its state for
        ``--resume`` (:data:`~seedzer.store.allocation_rows.STATE_META`), in one transaction."""
        with self.transaction() as c:
            c.executemany("INSERT OR REPLACE INTO allocation VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                          [(when, a.group, a.arm, a.weight, a.reward_per_minute, a.runs, a.roots, a.seconds)
                           for a in arms])
            c.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (STATE_META, json.dumps(state)))

    # --- executions, snapshots, events ------------------------------------------------------
    def _add_counts(self, table: str, keys: tuple[str, ...], counts: Iterable[tuple[tuple[str, ...], int]]) -> None:
        """Add ``(key, ...), count`` pairs to the counter table ``table`` (batched by the caller)."""
        counts = list(counts)
        if not counts:
            return
        marks = ", ".join("?" for _ in range(len(keys) + 1))
        with self.transaction() as c:
            c.executemany(
                f"INSERT INTO {table} VALUES ({marks}) ON CONFLICT({', '.join(keys)}) "
                "DO UPDATE SET count = count + excluded.count",
                [(*key, n) for key, n in counts],
            )

    def add_exec_counts(self, counts: dict[tuple[str, str], int]) -> None:
        """Add per-(symptom, stage) execution counts (batched by the caller)."""
        self._add_counts("exec_summary", ("symptom", "stage"), counts.items())

    def add_level_counts(self, counts: dict[tuple[str, str], int]) -> None:
        """Add per-(level, symptom) execution counts (batched by the caller; campaigns before levels
        existed have none: their executions are all of the TIR level)."""
        self._add_counts("level_summary", ("level", "symptom"), counts.items())

    def add_filter_counts(self, counts: dict[tuple[str, str, str], int]) -> None:
        """Add per-(level, reason, pass) counts of test cases the filters before the gate turned away
        (invalid or slow; batched by the caller)."""
        self._add_counts("filter_summary", ("level", "reason", "pass"), counts.items())

    def add_filter_sample(self, level: str, reason: str, pass_name: str, folder: str, testcase: int | None,
                          rerun: str = "") -> int:
        """Record one kept sample of a filtered test case (``rerun``: ``waiting`` when it is to be run
        again at the full limits); its id."""
        with self.transaction() as c:
            cur = c.execute("INSERT INTO filter_samples (level, reason, pass, folder, testcase, time, rerun) "
                            "VALUES (?, ?, ?, ?, ?, ?, ?)", (level, reason, pass_name, folder, testcase, time.time(),
                                                             rerun))
            return int(cur.lastrowid or 0)

    def set_filter_rerun(self, sample: int, outcome: str, detail: str) -> None:
        """Record how a sample's re-run at the full limits ended."""
        with self.transaction() as c:
            c.execute("UPDATE filter_samples SET rerun = ?, rerun_detail = ? WHERE id = ?", (outcome, detail, sample))

    def filter_samples(self) -> list[tuple[int, str, str, str, str, str, str]]:
        """Every kept sample: (id, level, reason, pass, folder, rerun, rerun_detail), oldest first."""
        return [tuple(r) for r in self.conn.execute(  # type: ignore[misc]
            "SELECT id, level, reason, pass, folder, rerun, rerun_detail FROM filter_samples ORDER BY id")]

    def add_mutator_counts(self, counts: dict[tuple[str, str], int]) -> None:
        """Add per-(mutator, symptom) counts of mutants (batched by the caller)."""
        self._add_counts("mutator_summary", ("mutator", "symptom"), counts.items())

    def level_summary(self) -> dict[tuple[str, str], int]:
        """All execution counts by (level, symptom)."""
        return {(lv, s): n for lv, s, n in self.conn.execute("SELECT * FROM level_summary")}

    def exec_summary(self) -> dict[tuple[str, str], int]:
        """All execution counts by (symptom, stage)."""
        return {(s, st): n for s, st, n in self.conn.execute("SELECT * FROM exec_summary")}

    def total_execs(self) -> int:
        """Executions recorded so far."""
        row = self.conn.execute("SELECT COALESCE(SUM(count), 0) FROM exec_summary").fetchone()
        return int(row[0])

    def add_snapshot(self, row: dict[str, Any]) -> None:
        """Append one snapshot row (time, execs, coverage, corpus size, findings...).

        ``coverage`` is the chosen backend's total; the optional ``coverage_detail`` dict holds every
        backend's total (e.g. ``{"passes": n, "breakpoints": m, "breakpoints_tvm": a, ...}``); the
        optional ``timings`` dict the cumulative seconds by stage so far (see
        :mod:`seedzer.campaign.throughput`), so that any window's cost is a difference of two rows; the
        optional ``triggers`` JSON text the passes run and triggered per level
        (:mod:`seedzer.campaign.triggers`).
        """
        row = {**row, "coverage_detail": json.dumps(row.get("coverage_detail") or {}, sort_keys=True),
               "timings": json.dumps(row.get("timings") or {}, sort_keys=True),
               "triggers": row.get("triggers") or "{}"}
        with self.transaction() as c:
            c.execute(
                "INSERT INTO snapshots (time, execs, coverage, coverage_backend, corpus_size, findings,"
                " unique_findings, invalid, wall, coverage_detail, timings, triggers) VALUES (:time, :execs,"
                " :coverage, :coverage_backend, :corpus_size, :findings, :unique_findings, :invalid, :wall,"
                " :coverage_detail, :timings, :triggers)",
                row,
            )

    def add_pass_triggers(self, counts: Iterable[tuple[str, str, int, int]]) -> None:
        """Add ``(level, pass, test cases that ran it, test cases that triggered it)`` increments."""
        rows = list(counts)
        if not rows:
            return
        with self.transaction() as c:
            c.executemany("INSERT INTO pass_triggers VALUES (?, ?, ?, ?) ON CONFLICT(level, pass) DO UPDATE SET "
                          "ran = ran + excluded.ran, triggered = triggered + excluded.triggered", rows)

    def pass_triggers(self) -> dict[tuple[str, str], tuple[int, int]]:
        """Every ``(level, pass) -> (ran, triggered)`` count so far."""
        return {(lv, p): (int(r), int(t)) for lv, p, r, t in self.conn.execute("SELECT * FROM pass_triggers")}

    def snapshots(self) -> list[dict[str, Any]]:
        """All snapshots in time order."""
        cur = self.conn.execute("SELECT * FROM snapshots ORDER BY time")
        names = [d[0] for d in cur.description]
        return [dict(zip(names, r, strict=True)) for r in cur]

    def add_event(self, event: str, detail: dict[str, Any]) -> None:
        """Record a campaign event (worker restart, resume, loader failure...)."""
        with self.transaction() as c:
            c.execute("INSERT INTO events (time, kind, detail) VALUES (?, ?, ?)",
                      (time.time(), event, json.dumps(detail)))

    def events(self, event: str | None = None) -> list[tuple[float, str, dict[str, Any]]]:
        """Events, optionally only ``event``'s (the column ``kind`` on disk)."""
        q = "SELECT time, kind, detail FROM events" + (" WHERE kind = ?" if event else "") + " ORDER BY id"
        return [(t, k, json.loads(d)) for t, k, d in self.conn.execute(q, (event,) if event else ())]

    # --- models -----------------------------------------------------------------------------
    def set_model(self, model: str, status: str, seeds: int, detail: dict[str, Any]) -> None:
        """Record how loading one model went."""
        with self.transaction() as c:
            c.execute("INSERT OR REPLACE INTO models VALUES (?, ?, ?, ?)",
                      (model, status, seeds, json.dumps(detail)))

    def loaded_models(self) -> set[str]:
        """Models already loaded (whatever the result)."""
        return {r[0] for r in self.conn.execute("SELECT model FROM models")}

    def killed_loads(self) -> dict[str, int]:
        """Models whose last load was SIGKILLed from outside (status ``killed``, loaded again on
        ``--resume``), with the times in a row it was (the detail's ``killed``; 1 when unreadable)."""
        found = {}
        for model, detail in self.conn.execute("SELECT model, detail FROM models WHERE status = 'killed'"):
            try:
                kills = json.loads(detail).get("killed", 1)
            except (ValueError, AttributeError):
                kills = 1
            found[str(model)] = kills if isinstance(kills, int) and kills > 0 else 1
        return found

    # --- corpus -----------------------------------------------------------------------------
    def add_corpus(self, row: CorpusRow) -> bool:
        """Insert a corpus entry; False when an entry with that id already exists."""
        with self.transaction() as c:
            cur = c.execute(
                "INSERT OR IGNORE INTO corpus (id, parent, origin_model, passes, coverage_gain, added_time, path, op,"
                " mutators, level) VALUES (:id, :parent, :origin_model, :passes, :coverage_gain, :added_time, :path,"
                " :op, :mutators, :level)",
                asdict(row),
            )
            return cur.rowcount == 1

    def corpus_rows(self) -> list[CorpusRow]:
        """All corpus entries in insertion order."""
        cur = self.conn.execute("SELECT id, parent, origin_model, passes, coverage_gain, added_time, path, op, "
                                "mutators, level FROM corpus ORDER BY rowid")
        return [CorpusRow(*r) for r in cur]

    # --- coverage ---------------------------------------------------------------------------
    def add_features(self, features: list[str], when: float) -> None:
        """Persist newly seen coverage features (hundreds of thousands in a campaign's first minute:
        inserted in key order, which halves SQLite's work on its index)."""
        if features:
            with self.transaction() as c:
                c.executemany("INSERT OR IGNORE INTO coverage_features VALUES (?, ?)",
                              [(f, when) for f in sorted(features)])

    def features(self) -> list[str]:
        """Every coverage feature seen so far."""
        return [r[0] for r in self.conn.execute("SELECT feature FROM coverage_features")]

    # --- findings ---------------------------------------------------------------------------
    def upsert_finding(self, row: FindingRow) -> bool:
        """Insert a new finding or bump the count of a known signature; True when it was new."""
        with self.transaction() as c:
            cur = c.execute(
                "UPDATE findings SET count = count + 1, last_seen = ? WHERE signature = ?",
                (row.last_seen, row.signature),
            )
            if cur.rowcount:
                return False
            c.execute(
                "INSERT INTO findings (signature, symptom, stage, pass, message, first_seen, last_seen, count,"
                " status, dir, kind, verdict, verdict_reason, root) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (row.signature, row.symptom, row.stage, row.pass_name, row.message, row.first_seen,
                 row.last_seen, row.count, row.status, row.dir, row.kind, row.verdict, row.verdict_reason, row.root),
            )
            return True

    def bump_finding(self, signature: str) -> None:
        """Count one more occurrence of a known finding."""
        with self.transaction() as c:
            c.execute("UPDATE findings SET count = count + 1, last_seen = ? WHERE signature = ?",
                      (time.time(), signature))

    def set_finding_status(self, signature: str, status: str) -> None:
        """Change a finding's status (new, confirmed, unconfirmed, known)."""
        with self.transaction() as c:
            c.execute("UPDATE findings SET status = ? WHERE signature = ?", (status, signature))

    def set_verdict(self, signature: str, verdict: str, reason: str, root: str | None) -> None:
        """Record the filing gate's verdict on a finding (and the root signature of a bug)."""
        with self.transaction() as c:
            c.execute("UPDATE findings SET verdict = ?, verdict_reason = ?, root = ? WHERE signature = ?",
                      (verdict, reason, root, signature))

    def findings(self) -> list[FindingRow]:
        """All findings, oldest first."""
        cols = ("signature, symptom, stage, pass, message, first_seen, last_seen, count, status, dir, kind, verdict,"
                " verdict_reason, root")
        return [FindingRow(*r) for r in self.conn.execute(f"SELECT {cols} FROM findings ORDER BY first_seen")]
