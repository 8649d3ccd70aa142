"""The ledger's SQLite file: opened (created on first write), checked, read and written in transactions.

Every write is one ``BEGIN IMMEDIATE`` transaction: all of it lands or none of it does. A ledger another
process holds past the busy timeout, a file that is not a ledger, and a ledger written by a newer Seedzer
(a schema this one does not know) are each one line (:class:`LedgerError`) and leave the file as it was.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import quote

from seedzer.errors import ConfigError, SeedzerError, shown
from seedzer.ledger.records import KNOWN_STATES, NEW, STATES, LedgerRoot, RootSighting, Sighting, VersionVerdict
from seedzer.ledger.upstream import UpstreamIssue, issue_from

SCHEMA_VERSION = 2
"""The ledger schema this Seedzer reads and writes; a ledger with a higher one is refused untouched (a
version-1 ledger is upgraded when it is opened: the roots' ``merged_into`` column and the upstream table)."""
BUSY_SECONDS = 10.0
"""How long a write waits for another process's transaction before it gives up."""
_SCHEMA = """
CREATE TABLE IF NOT EXISTS ledger_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS roots (root TEXT PRIMARY KEY, kind TEXT NOT NULL, symptom TEXT NOT NULL,
    culprit TEXT NOT NULL, headline TEXT NOT NULL, first_seen REAL NOT NULL, last_seen REAL NOT NULL,
    state TEXT NOT NULL DEFAULT 'new', link TEXT NOT NULL DEFAULT '', note TEXT NOT NULL DEFAULT '',
    merged_into TEXT NOT NULL DEFAULT '');
CREATE TABLE IF NOT EXISTS sightings (root TEXT NOT NULL, campaign TEXT NOT NULL, source TEXT NOT NULL,
    finding TEXT NOT NULL, count INTEGER NOT NULL, first_seen REAL NOT NULL, last_seen REAL NOT NULL,
    recorded REAL NOT NULL, PRIMARY KEY (root, campaign));
CREATE TABLE IF NOT EXISTS versions (root TEXT NOT NULL, version TEXT NOT NULL, verdict TEXT NOT NULL,
    detail TEXT NOT NULL, checked REAL NOT NULL, PRIMARY KEY (root, version));
CREATE TABLE IF NOT EXISTS upstream (repo TEXT NOT NULL, number INTEGER NOT NULL, row TEXT NOT NULL,
    updated REAL NOT NULL, PRIMARY KEY (repo, number));
"""
DISMISSED = "(not a bug)"
"""What a root is marked merged into when a recheck judged none of its findings a bug."""
_UPGRADES = {2: ("ALTER TABLE roots ADD COLUMN merged_into TEXT NOT NULL DEFAULT ''",
                 "CREATE TABLE IF NOT EXISTS upstream (repo TEXT NOT NULL, number INTEGER NOT NULL, row TEXT NOT NULL, "
                 "updated REAL NOT NULL, PRIMARY KEY (repo, number))")}
"""The statements that bring a ledger of the version before each key to it."""


class LedgerError(SeedzerError):
    """The ledger cannot be read or written (the message names the file and why; nothing was changed)."""


class NoLedger(LedgerError):
    """There is no ledger yet at the path: no file, or a file without a ledger's tables (e.g. 0 bytes)."""


class Ledger:
    """One ledger file (see the module docstring). ``create``: make it when it does not exist (or is an
    empty file); ``readonly``: open it read-only (a listing never writes, not even a schema)."""

    def __init__(self, path: Path, *, create: bool = True, readonly: bool = False,
                 busy: float = BUSY_SECONDS) -> None:
        self.path = Path(path).expanduser()
        self.create = create and not readonly
        self.readonly = readonly
        self.schema = SCHEMA_VERSION
        """The schema the file holds (a version-1 ledger opened read-only is read as it is, never upgraded)."""
        if not self.path.exists() and not self.create:
            raise self._none()
        try:
            if self.create:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            if readonly:
                self.conn = sqlite3.connect(f"file:{quote(str(self.path.absolute()))}?mode=ro", uri=True,
                                            timeout=busy, isolation_level=None)
            else:
                self.conn = sqlite3.connect(str(self.path), timeout=busy, isolation_level=None)
        except (OSError, sqlite3.Error) as exc:
            raise LedgerError(f"{shown(self.path)}: cannot open the ledger ({exc})") from None
        try:
            self._check()
        except BaseException:
            self.conn.close()
            raise

    def _none(self) -> NoLedger:
        return NoLedger(f"{shown(self.path)}: no ledger there (a campaign makes it; see ledger.path)")

    def close(self) -> None:
        """Close the file."""
        self.conn.close()

    def __enter__(self) -> Ledger:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def _fail(self, exc: sqlite3.Error, doing: str) -> LedgerError:
        text = str(exc)
        if "locked" in text or "busy" in text:
            return LedgerError(f"{shown(self.path)}: locked by another process; {doing} gave up, the ledger is "
                               "unchanged (try again when that process is done)")
        if "not a database" in text or "malformed" in text:
            return LedgerError(f"{shown(self.path)}: not a Seedzer ledger (not a readable SQLite database)")
        return LedgerError(f"{shown(self.path)}: {doing} failed ({text}); the ledger is unchanged")

    def _check(self) -> None:
        """Create the schema in a new file (only with ``create``: else an empty file is no ledger yet);
        refuse a file that is not a ledger or is a newer one."""
        try:
            tables = {r[0] for r in self.conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            if not tables and not self.create:
                raise self._none()
            if not tables:
                with self._write("creating the ledger"):
                    for statement in filter(str.strip, _SCHEMA.split(";")):
                        self.conn.execute(statement)
                    self.conn.execute("INSERT OR REPLACE INTO ledger_meta VALUES ('schema_version', ?)",
                                      (str(SCHEMA_VERSION),))
                return
            if "ledger_meta" not in tables:
                raise LedgerError(f"{shown(self.path)}: not a Seedzer ledger (it holds the tables "
                                  f"{', '.join(sorted(tables)[:4])})")
            row = self.conn.execute("SELECT value FROM ledger_meta WHERE key = 'schema_version'").fetchone()
        except sqlite3.Error as exc:
            raise self._fail(exc, "reading it") from None
        found = int(row[0]) if row and str(row[0]).isdigit() else 0
        if found > SCHEMA_VERSION:
            raise LedgerError(f"{shown(self.path)}: written by a newer Seedzer (ledger schema {found}; this one "
                              f"reads up to {SCHEMA_VERSION}); upgrade Seedzer, the ledger was left untouched")
        if found < 1:
            raise LedgerError(f"{shown(self.path)}: not a Seedzer ledger (no schema version)")
        self.schema = found
        if found < SCHEMA_VERSION and not self.readonly:
            self.schema = SCHEMA_VERSION
            with self._write("upgrading the ledger"):
                for version in range(found + 1, SCHEMA_VERSION + 1):
                    for statement in _UPGRADES[version]:
                        self.conn.execute(statement)
                self.conn.execute("INSERT OR REPLACE INTO ledger_meta VALUES ('schema_version', ?)",
                                  (str(SCHEMA_VERSION),))

    @contextmanager
    def _write(self, doing: str) -> Iterator[None]:
        """One transaction: all of it or nothing."""
        try:
            self.conn.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as exc:
            raise self._fail(exc, doing) from None
        try:
            yield
            self.conn.execute("COMMIT")
        except sqlite3.Error as exc:
            self.conn.execute("ROLLBACK")
            raise self._fail(exc, doing) from None
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise

    # --- writing ------------------------------------------------------------------------------
    def record(self, sightings: Iterable[RootSighting], source: str) -> list[str]:
        """Record a campaign's roots (``source``: what recorded them); the roots new to the ledger. A root
        seen again takes the kind name of its latest sighting (a kind renamed since is named as today)."""
        now, new = time.time(), []
        rows = list(sightings)
        with self._write("recording roots"):
            for s in rows:
                known = self.conn.execute("SELECT first_seen, last_seen FROM roots WHERE root = ?",
                                          (s.root,)).fetchone()
                if known is None:
                    new.append(s.root)
                    self.conn.execute("INSERT INTO roots (root, kind, symptom, culprit, headline, first_seen, "
                                      "last_seen) VALUES (?, ?, ?, ?, ?, ?, ?)",
                                      (s.root, s.kind, s.symptom, s.culprit, s.headline, s.first_seen, s.last_seen))
                else:
                    self.conn.execute("UPDATE roots SET kind = ?, first_seen = ?, last_seen = ? WHERE root = ?",
                                      (s.kind, min(known[0], s.first_seen), max(known[1], s.last_seen), s.root))
                self.conn.execute("INSERT OR REPLACE INTO sightings VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                                  (s.root, s.campaign, source, s.finding, s.count, s.first_seen, s.last_seen, now))
        return new

    def find(self, prefix: str) -> str:
        """The one root whose signature starts with ``prefix`` (a one-line error otherwise)."""
        rows = [r[0] for r in self.conn.execute("SELECT root FROM roots WHERE root LIKE ?", (prefix + "%",))]
        if len(rows) != 1:
            what = "no root" if not rows else f"{len(rows)} roots ({', '.join(rows[:4])})"
            raise LedgerError(f"{shown(self.path)}: {what} match {prefix!r}")
        return rows[0]

    def set_state(self, root: str, state: str, link: str = "", note: str = "") -> str:
        """Give ``root`` (or the one root its prefix names) a state; its full signature."""
        if state not in STATES:
            raise LedgerError(f"state {state!r}: must be one of {', '.join(STATES)}")
        full = self.find(root)
        with self._write("setting the state"):
            self.conn.execute("UPDATE roots SET state = ?, link = ?, note = ? WHERE root = ?",
                              (state, link, note, full))
        return full

    def rekey(self, campaign: str, moves: Mapping[str, Sequence[str]], source: str) -> list[str]:
        """A campaign's roots re-keyed by ``recheck`` (``moves``: each old root -> the roots its findings are
        filed under now; none: none is a bug now): the campaign's sightings of an old root leave it (the new
        roots' sightings are recorded by :meth:`record`); an old root is marked merged into its new roots
        (:data:`DISMISSED` when it has none and no campaign sees it any more), and a state the user gave it
        (reported, with its link) goes to a new root that has none. The old roots no campaign sees any more."""
        gone = []
        with self._write("re-keying roots"):
            for old, new in moves.items():
                targets = [n for n in dict.fromkeys(new) if n != old]
                if old in new:
                    continue  # still a root of the campaign (a split keeps it too): its sighting stays
                self.conn.execute("DELETE FROM sightings WHERE root = ? AND campaign = ?", (old, campaign))
                row = self.conn.execute("SELECT state, link, note FROM roots WHERE root = ?", (old,)).fetchone()
                if row is None:
                    continue
                left = self.conn.execute("SELECT COUNT(*) FROM sightings WHERE root = ?", (old,)).fetchone()[0]
                if not left:
                    gone.append(old)
                if targets or not left:
                    self.conn.execute("UPDATE roots SET merged_into = ? WHERE root = ?",
                                      (", ".join(targets) or DISMISSED, old))
                for target in targets:
                    if row[0] != NEW:
                        self.conn.execute("UPDATE roots SET state = ?, link = ?, note = ? WHERE root = ? AND state = ?",
                                          (row[0], row[1], row[2] or f"from {old} ({source})", target, NEW))
        return gone

    def upstream(self) -> list[UpstreamIssue]:
        """The user's upstream table (rows ``bugs mark ... reported`` and ``bugs upstream import`` wrote)."""
        if self.schema < 2:
            return []  # a version-1 ledger read as it is: no upstream table yet
        try:
            rows = self.conn.execute("SELECT repo, number, row FROM upstream ORDER BY repo, number").fetchall()
        except sqlite3.Error as exc:
            raise self._fail(exc, "reading it") from None
        try:
            return [issue_from(json.loads(r[2]), f"{shown(self.path)}: upstream {r[0]}#{r[1]}") for r in rows]
        except (ValueError, ConfigError) as exc:
            raise LedgerError(f"{shown(self.path)}: unreadable upstream row ({exc})") from None

    def put_upstream(self, issues: Iterable[UpstreamIssue]) -> list[str]:
        """Add or replace rows of the user's upstream table; the names of the rows written."""
        now, names = time.time(), []
        with self._write("recording upstream issues"):
            for issue in issues:
                self.conn.execute("INSERT OR REPLACE INTO upstream VALUES (?, ?, ?, ?)",
                                  (issue.repo, issue.number, json.dumps(issue.to_json()), now))
                names.append(issue.name)
        return names

    def record_versions(self, root: str, verdicts: Iterable[VersionVerdict]) -> None:
        """Record how the root's plain reproducer ended on each TVM (the latest run per version wins)."""
        with self._write("recording versions"):
            for v in verdicts:
                self.conn.execute("INSERT OR REPLACE INTO versions VALUES (?, ?, ?, ?, ?)",
                                  (root, v.version, v.verdict, v.detail, v.checked or time.time()))

    # --- reading ------------------------------------------------------------------------------
    def roots(self) -> list[LedgerRoot]:
        """Every root, first seen first."""
        try:
            sightings: dict[str, list[Sighting]] = {}
            for r in self.conn.execute("SELECT root, campaign, source, finding, count, first_seen, last_seen "
                                       "FROM sightings ORDER BY first_seen"):
                sightings.setdefault(r[0], []).append(Sighting(*r[1:]))
            versions: dict[str, list[VersionVerdict]] = {}
            for r in self.conn.execute("SELECT root, version, verdict, detail, checked FROM versions"):
                versions.setdefault(r[0], []).append(VersionVerdict(*r[1:]))
            merged_into = "merged_into" if self.schema >= 2 else "''"
            rows = self.conn.execute("SELECT root, kind, symptom, culprit, headline, first_seen, last_seen, state, "
                                     f"link, note, {merged_into} FROM roots ORDER BY first_seen").fetchall()
        except sqlite3.Error as exc:
            raise self._fail(exc, "reading it") from None
        return [LedgerRoot(r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], r[9],
                           tuple(sightings.get(r[0], [])), tuple(versions.get(r[0], [])), r[10]) for r in rows]

    def known(self) -> dict[str, str]:
        """Root -> why it is known (``reported <link>``...), for the roots a campaign must not report again."""
        return {r.root: f"ledger: {r.state}" + (f" {r.link}" if r.link else "")
                for r in self.roots() if r.state in KNOWN_STATES}
