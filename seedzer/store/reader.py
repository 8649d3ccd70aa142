"""Reading a campaign.db: typed queries beside the writer (:mod:`seedzer.store.db`), the only other code
that knows the schema.

``status``, the reports, experiment progress, ``coverage export|diff``, ``fuzz --resume``'s checks and
``--import`` read a campaign through :class:`CampaignReader`, opened read-only
(:mod:`seedzer.store.readonly`: never created, migrated or written, a live campaign's WAL seen). Every
query reads older databases too: a table made later is read as empty, a column added later
(:data:`seedzer.store.db.MIGRATIONS`) as the value the migration would give it.

A database SQLite cannot read (or a meta value that is not JSON) is an :class:`UnreadableCampaign`,
one line naming the file. A value a row cannot hold (a count that is not a non-negative integer:
``'abc'``, ``1e+20``, ``-5``, bytes; a number that is not a number; text that is not text) makes its
row corrupt: it is left out of what the query returns and noted in :attr:`CampaignReader.corrupt`,
one line naming the row, so it is never shown as real.
"""

from __future__ import annotations

import json
import math
import sqlite3
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from seedzer.errors import CampaignError, SeedzerError
from seedzer.level_table import level_of_path
from seedzer.store.allocation_rows import STATE_META, AllocationSnapshot, ArmRow
from seedzer.store.api_rows import API_META, LevelApi
from seedzer.store.db import MIGRATIONS, CorpusRow, FindingRow
from seedzer.store.epoch_rows import EpochRow, epoch_rows
from seedzer.store.readonly import open_campaign, open_readonly

EXCERPT_CHARS = 40
"""Longest excerpt of a corrupt value a note shows."""


class UnreadableCampaign(CampaignError):
    """campaign.db could not be opened or read; ``cause`` is SQLite's (or JSON's) own words."""

    def __init__(self, path: Path, cause: object) -> None:
        super().__init__(f"{path}: unreadable campaign database ({cause})")
        self.cause = str(cause)


@dataclass(frozen=True)
class CorruptRow:
    """A row left out because one of its values is not what its column holds."""

    table: str
    row: str
    """The row, by its key columns (``level 'tir', reason 'x', pass '-'``) or its number."""
    column: str
    value: str
    """An excerpt of the value (its ``repr``)."""
    expected: str
    """What the column holds (``a count``, ``a number``, ``text``)."""

    def line(self) -> str:
        """The one line that shows it."""
        return (f"corrupt row in campaign.db: {self.table} ({self.row}): {self.column} {self.value} is not "
                f"{self.expected}; left out")


@dataclass(frozen=True)
class SnapshotRow:
    """One snapshot: campaign seconds, totals so far, and the JSON texts of its stage seconds and pass
    triggers (``{}`` in a database from before those columns)."""

    time: float
    execs: int
    coverage: int
    coverage_backend: str
    corpus_size: int
    findings: int
    unique_findings: int
    invalid: int
    wall: float
    timings: str
    triggers: str


@dataclass(frozen=True)
class SymptomCount:
    """Executions of one symptom at one stage (``exec_summary``)."""

    symptom: str
    stage: str
    count: int


@dataclass(frozen=True)
class LevelCount:
    """Executions of one level with one symptom (``level_summary``)."""

    level: str
    symptom: str
    count: int


@dataclass(frozen=True)
class MutationCount:
    """Mutants one mutation made, with one symptom (``mutator_summary``)."""

    mutation: str
    symptom: str
    count: int


@dataclass(frozen=True)
class FilterCount:
    """Test cases of one level turned away before the gate for one reason at one pass (``filter_summary``)."""

    level: str
    reason: str
    pass_name: str
    count: int


@dataclass(frozen=True)
class FilterSample:
    """One kept sample of a test case turned away, and how its re-run at the full limits ended."""

    id: int
    level: str
    reason: str
    pass_name: str
    folder: str
    rerun: str
    rerun_detail: str


@dataclass(frozen=True)
class PassTriggerCount:
    """Test cases of one level that ran one pass, and those it changed (``pass_triggers``)."""

    level: str
    pass_name: str
    ran: int
    triggered: int


@dataclass(frozen=True)
class ModelRow:
    """How loading one pool model went: its status, seeds and the JSON text of its details."""

    model: str
    status: str
    seeds: int
    detail: str


def _count(v: Any) -> bool:
    return type(v) is int and v >= 0


def _number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)


def _text(v: Any) -> bool:
    return isinstance(v, str)


def _optional_text(v: Any) -> bool:
    return v is None or isinstance(v, str)


EXPECTED: dict[Callable[[Any], bool], str] = {_count: "a count", _number: "a number", _text: "text",
                                              _optional_text: "text"}
"""What each kind of column holds, as a corrupt row's note says it."""
_ADDED = {(table, column): decl for table, column, decl in MIGRATIONS}
_MIGRATED_DEFAULT: dict[tuple[str, str], str | None] = {
    (table, column): decl.split("DEFAULT ", 1)[1].strip("'") if "DEFAULT" in decl else None
    for (table, column), decl in _ADDED.items()}
"""A column added since the first campaign.db format -> the value its migration gives old rows."""


def _excerpt(value: Any) -> str:
    text = repr(value) if not isinstance(value, bytes) or len(value) <= EXCERPT_CHARS else repr(value[:EXCERPT_CHARS])
    return text if len(text) <= EXCERPT_CHARS else text[:EXCERPT_CHARS - 3] + "..."


class CampaignReader:
    """Typed, read-only queries of one campaign.db (see the module docstring)."""

    def __init__(self, conn: sqlite3.Connection, path: Path) -> None:
        self.conn = conn
        self.path = Path(path)
        self.corrupt: list[CorruptRow] = []
        """Every row a query left out, in the order met (each once)."""
        self._columns: dict[str, set[str]] = {}

    @classmethod
    def open(cls, db: Path, *, checked: bool = True) -> CampaignReader:
        """Open ``db`` read-only; ``checked``: refuse (one-line CampaignError) a file that is not a Seedzer
        campaign database, else any SQLite file is opened (:class:`UnreadableCampaign` when it cannot be)."""
        if checked:
            return cls(open_campaign(db), db)
        try:
            return cls(open_readonly(db), db)
        except sqlite3.Error as exc:
            raise UnreadableCampaign(db, exc) from None

    def close(self) -> None:
        """Close the connection."""
        self.conn.close()

    def __enter__(self) -> CampaignReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def unreadable(self) -> Iterator[None]:
        """SQLite's errors, and values decoded from the file that are not what they should be (a
        ``ValueError`` or ``TypeError`` within), as an :class:`UnreadableCampaign`."""
        try:
            yield
        except (sqlite3.Error, ValueError, TypeError) as exc:
            raise UnreadableCampaign(self.path, exc) from None

    def _execute(self, sql: str, args: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        with self.unreadable():
            return self.conn.execute(sql, tuple(args)).fetchall()

    # --- the schema as this file has it ------------------------------------------------------
    def columns(self, table: str) -> set[str]:
        """The columns of ``table`` (empty when the database has no such table)."""
        if table not in self._columns:
            self._columns[table] = {r[1] for r in self._execute(f"PRAGMA table_info({table})")}
        return self._columns[table]

    def _select(self, table: str, columns: Sequence[str], tail: str = "",
                args: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """Rows of ``columns`` of ``table`` (``tail``: its WHERE/ORDER BY clauses), a column the file does
        not have yet read as its migration's default; none when the table is absent."""
        present = self.columns(table)
        if not present:
            return []
        wanted = [c if c in present else "?" for c in columns]
        defaults = [_MIGRATED_DEFAULT.get((table, c)) for c in columns if c not in present]
        return self._execute(f"SELECT {', '.join(wanted)} FROM {table} {tail}", (*defaults, *args))

    def _valid(self, table: str, rows: list[tuple[Any, ...]], checks: Sequence[Callable[[Any], bool]],
               names: Sequence[str], key: Callable[[tuple[Any, ...]], str]) -> list[tuple[Any, ...]]:
        """The rows whose every value passes its column's check; each other one noted in :attr:`corrupt`."""
        good = []
        for row in rows:
            bad = next((i for i, (check, value) in enumerate(zip(checks, row, strict=True)) if not check(value)), None)
            if bad is None:
                good.append(row)
                continue
            note = CorruptRow(table, key(row), names[bad], _excerpt(row[bad]), EXPECTED[checks[bad]])
            if note not in self.corrupt:
                self.corrupt.append(note)
        return good

    def _counts(self, table: str, keys: Sequence[str], counts: Sequence[str] = ("count",),
                tail: str = "") -> list[tuple[Any, ...]]:
        names = [*keys, *counts]

        def key(row: tuple[Any, ...]) -> str:
            return ", ".join(f"{name} {_excerpt(value)}" for name, value in zip(keys, row, strict=False))

        return self._valid(table, self._select(table, names, tail), [_text] * len(keys) + [_count] * len(counts),
                           names, key)

    # --- meta --------------------------------------------------------------------------------
    def meta(self, key: str, default: Any = None) -> Any:
        """A JSON value of the meta table (``default`` when absent)."""
        rows = self._select("meta", ("value",), "WHERE key = ?", (key,))
        with self.unreadable():
            return json.loads(rows[0][0]) if rows else default

    def level_apis(self) -> list[LevelApi]:
        """The TVM API each level recorded at the campaign's start (:mod:`seedzer.store.api_rows`), by level
        name; a value that is not one is left out."""
        rows = self._select("meta", ("key", "value"), "WHERE key LIKE ? ORDER BY key", (API_META + "%",))
        found = []
        for key, value in rows:
            try:
                api = LevelApi.from_json(str(key)[len(API_META):], json.loads(value))
            except ValueError:  # not JSON
                api = None
            if api is not None:
                found.append(api)
        return found

    # --- counters ----------------------------------------------------------------------------
    def exec_counts(self) -> list[SymptomCount]:
        """Executions by symptom and stage."""
        return [SymptomCount(*r) for r in self._counts("exec_summary", ("symptom", "stage"))]

    def level_counts(self) -> list[LevelCount]:
        """Executions by level and symptom (none in a campaign from before the levels)."""
        return [LevelCount(*r) for r in self._counts("level_summary", ("level", "symptom"))]

    def mutation_counts(self) -> list[MutationCount]:
        """Mutants by mutation and symptom (none in a campaign from before the mutation counters)."""
        return [MutationCount(*r) for r in self._counts("mutator_summary", ("mutator", "symptom"))]

    def filter_counts(self) -> list[FilterCount]:
        """Test cases turned away before the gate by level, reason and pass, most frequent first."""
        rows = self._counts("filter_summary", ("level", "reason", "pass"))
        return [FilterCount(*r) for r in sorted(rows, key=lambda r: (-r[3], r[0], r[1], r[2]))]

    def pass_trigger_counts(self) -> list[PassTriggerCount]:
        """Test cases that ran and that triggered each pass, by level."""
        return [PassTriggerCount(*r) for r in self._counts("pass_triggers", ("level", "pass"), ("ran", "triggered"))]

    def filter_samples(self) -> list[FilterSample]:
        """Every kept sample of a test case turned away, oldest first."""
        names = ("id", "level", "reason", "pass", "folder", "rerun", "rerun_detail")
        rows = self._valid("filter_samples", self._select("filter_samples", names, "ORDER BY id"),
                           [_count, *[_text] * 6], names, lambda r: f"id {_excerpt(r[0])}")
        return [FilterSample(*r) for r in rows]

    def event_count(self, events: Sequence[str]) -> int:
        """Events named any of ``events`` recorded (the column ``kind`` on disk)."""
        if not self.columns("events"):
            return 0
        marks = ", ".join("?" for _ in events)
        return int(self._execute(f"SELECT COUNT(*) FROM events WHERE kind IN ({marks})", events)[0][0])

    # --- snapshots ---------------------------------------------------------------------------
    _SNAPSHOT = ("time", "execs", "coverage", "coverage_backend", "corpus_size", "findings", "unique_findings",
                 "invalid", "wall", "timings", "triggers")
    _SNAPSHOT_CHECKS = (_number, _count, _count, _text, _count, _count, _count, _count, _number, _text, _text)

    def _snapshots(self, tail: str) -> list[SnapshotRow]:
        rows = self._select("snapshots", self._SNAPSHOT, tail)
        found = self._valid("snapshots", rows, self._SNAPSHOT_CHECKS, self._SNAPSHOT,
                            lambda r: f"time {_excerpt(r[0])}")
        return [SnapshotRow(float(r[0]), r[1], r[2], r[3], r[4], r[5], r[6], r[7], float(r[8]), r[9], r[10])
                for r in found]

    def snapshots(self) -> list[SnapshotRow]:
        """Every snapshot, in time order."""
        return self._snapshots("ORDER BY time")

    def last_snapshot(self) -> SnapshotRow | None:
        """The latest snapshot (None before the first)."""
        found = self._snapshots("ORDER BY time DESC LIMIT 1")
        return found[0] if found else None

    # --- corpus ------------------------------------------------------------------------------
    def corpus_size(self) -> int:
        """Corpus entries recorded."""
        if not self.columns("corpus"):
            return 0
        return int(self._execute("SELECT COUNT(*) FROM corpus")[0][0])

    def corpus_paths(self) -> list[str]:
        """Every corpus entry's script file, relative to the campaign directory, in insertion order."""
        return [r[0] for r in self._valid("corpus", self._select("corpus", ("path",), "ORDER BY rowid"), [_text],
                                          ("path",), lambda r: f"path {_excerpt(r[0])}")]

    def corpus_rows(self) -> list[CorpusRow]:
        """Every corpus entry in the order they were added (a row from before entries carried their level
        has the level of its file's suffix, or none)."""
        names = ("id", "parent", "origin_model", "passes", "coverage_gain", "added_time", "path", "op", "mutators",
                 "level")
        checks = (_text, _optional_text, _text, _text, _count, _number, _text, _text, _text, _text)
        rows = self._valid("corpus", self._select("corpus", names, "ORDER BY added_time, rowid"), checks, names,
                           lambda r: f"id {_excerpt(r[0])}")
        return [CorpusRow(r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], r[9] or _suffix_level(r[6]))
                for r in rows]

    def corpus_levels(self) -> dict[str, int]:
        """Corpus entries by level (a row of no level is not counted)."""
        counts: dict[str, int] = {}
        for row in self.corpus_rows():
            if row.level:
                counts[row.level] = counts.get(row.level, 0) + 1
        return counts

    # --- models, findings, coverage, epochs ----------------------------------------------------
    def models(self) -> list[ModelRow]:
        """How loading each pool model went, by model name."""
        names = ("model", "status", "seeds", "detail")
        rows = self._valid("models", self._select("models", names, "ORDER BY model"), (_text, _text, _count, _text),
                           names, lambda r: f"model {_excerpt(r[0])}")
        return [ModelRow(*r) for r in rows]

    def findings(self) -> list[FindingRow]:
        """Every finding, oldest first (with its verdict and kind as the migration gives older rows)."""
        names = ("signature", "symptom", "stage", "pass", "message", "first_seen", "last_seen", "count", "status",
                 "dir", "kind", "verdict", "verdict_reason", "root")
        checks = (_text, _text, _optional_text, _optional_text, _text, _number, _number, _count, _text, _text, _text,
                  _text, _text, _optional_text)
        rows = self._valid("findings", self._select("findings", names, "ORDER BY first_seen"), checks, names,
                           lambda r: f"signature {_excerpt(r[0])}")
        return [FindingRow(*r) for r in rows]

    def features(self, prefix: str = "") -> list[str]:
        """The coverage features seen (those starting with ``prefix``)."""
        tail, args = ("WHERE feature LIKE ?", (prefix + "%",)) if prefix else ("", ())
        rows = self._select("coverage_features", ("feature",), tail, args)
        return [r[0] for r in self._valid("coverage_features", rows, [_text], ("feature",),
                                          lambda r: f"feature {_excerpt(r[0])}")]

    def allocation(self) -> list[AllocationSnapshot]:
        """The allocation's weights at every snapshot, oldest first (none for a campaign from before it)."""
        names = ("time", "grp", "arm", "weight", "reward_per_minute", "runs", "roots", "seconds")
        rows = self._valid("allocation", self._select("allocation", names, "ORDER BY time, grp, arm"),
                           [_number, _text, _text, _number, _number, _count, _count, _number], names,
                           lambda r: f"time {_excerpt(r[0])}, group {_excerpt(r[1])}, arm {_excerpt(r[2])}")
        by_time: dict[float, list[ArmRow]] = {}
        for when, *arm in rows:
            by_time.setdefault(float(when), []).append(ArmRow(str(arm[0]), str(arm[1]), float(arm[2]), float(arm[3]),
                                                             int(arm[4]), int(arm[5]), float(arm[6])))
        return [AllocationSnapshot(when, tuple(arms)) for when, arms in by_time.items()]

    def allocation_state(self) -> Any:
        """The allocation's saved state (None: none saved, or not JSON)."""
        try:
            return self.meta(STATE_META)
        except CampaignError:
            return None

    def epochs(self) -> list[EpochRow]:
        """Every generation epoch, in order (none for a campaign run without epochs)."""
        with self.unreadable():
            return epoch_rows(self.conn)


def _suffix_level(path: str) -> str:
    try:
        return level_of_path(path)
    except SeedzerError:
        return ""
