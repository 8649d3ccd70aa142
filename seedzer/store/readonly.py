"""Read-only access to a campaign.db that may still be written by a running campaign (WAL mode).

Readers (``status``, ``report``, ``coverage export|diff``, ``fuzz --resume``'s checks) never write
a database, never create one, and never leave files next to it:

* a database whose ``-wal`` file exists (a campaign running, or killed) is opened ``mode=ro``, which
  sees the WAL's latest commits;
* one without (a campaign that ended and checkpointed, or one on read-only media) is opened
  ``immutable=1``: SQLite then reads the file as it is and creates no ``-shm``/``-wal`` files.

:func:`open_campaign` also checks that the file is a Seedzer campaign (an SQLite database with a
``meta`` table holding ``schema_version``), so a 0-byte file, a text file or another program's
SQLite database is refused in one line instead of being read as an empty campaign.
"""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path
from typing import Any
from urllib.parse import quote

from seedzer.errors import CampaignError, SeedzerError
from seedzer.level_table import level_of_path

SQLITE_MAGIC = b"SQLite format 3\x00"


def _uri(path: Path, mode: str) -> str:
    return f"file:{quote(os.fsencode(path), safe='/')}?{mode}"


def open_readonly(db: Path) -> sqlite3.Connection:
    """A read-only connection to a (possibly live) campaign.db; never creates or writes the file."""
    path = Path(db).resolve()
    if not path.is_file():
        raise sqlite3.OperationalError(f"{db}: no such database")
    live = path.with_name(path.name + "-wal").exists()
    if live:
        try:
            conn = sqlite3.connect(_uri(path, "mode=ro"), uri=True, timeout=10)
            conn.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchall()
            return conn
        except sqlite3.OperationalError:
            pass  # e.g. a killed campaign's WAL on read-only media: read the main file as it is
    conn = sqlite3.connect(_uri(path, "immutable=1"), uri=True, timeout=10)
    conn.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchall()
    return conn


def is_sqlite(path: Path) -> bool:
    """True when ``path`` is a regular file starting with SQLite's header (a database of any program)."""
    try:
        with open(path, "rb") as fh:
            return Path(path).is_file() and fh.read(16) == SQLITE_MAGIC
    except OSError:
        return False


def open_campaign(db: Path) -> sqlite3.Connection:
    """A read-only connection to a Seedzer campaign database; a one-line CampaignError otherwise."""
    path = Path(db)
    if not path.exists():
        raise CampaignError(f"{path.parent}: not a campaign directory (no {path.name})")
    if not path.is_file():
        raise CampaignError(f"{path}: not a regular file, so not a campaign database")
    try:
        with open(path, "rb") as fh:
            head = fh.read(16)
    except OSError as exc:
        raise CampaignError(f"{path}: cannot read ({exc.strerror or exc})") from None
    if not head:
        raise CampaignError(f"{path}: empty file (0 bytes), not a Seedzer campaign database")
    if head != SQLITE_MAGIC:
        raise CampaignError(f"{path}: not an SQLite database, so not a Seedzer campaign database")
    try:
        conn = open_readonly(path)
    except sqlite3.Error as exc:
        raise CampaignError(f"{path}: cannot open read-only ({exc})") from None
    try:
        row = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    except sqlite3.Error:
        row = None
    if row is None:
        conn.close()
        raise CampaignError(f"{path}: an SQLite database but not a Seedzer campaign (no meta table with a "
                            "schema_version)")
    return conn


def read_meta(conn: sqlite3.Connection, key: str, default: Any = None) -> Any:
    """A JSON value from the meta table (``default`` when absent)."""
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    return json.loads(row[0]) if row else default


def corpus_by_level(conn: sqlite3.Connection) -> dict[str, int]:
    """Corpus entries by level of a campaign.db opened read-only: the ``level`` column, or for rows
    written before it (or a database without it), the level of the file's suffix."""
    try:
        columns = {r[1] for r in conn.execute("PRAGMA table_info(corpus)")}
        sql = "SELECT path, level FROM corpus" if "level" in columns else "SELECT path, '' FROM corpus"
        rows = conn.execute(sql).fetchall()
    except sqlite3.OperationalError as exc:
        if "no such table" in str(exc):
            return {}
        raise
    counts: dict[str, int] = {}
    for path, level in rows:
        try:
            name = str(level or level_of_path(str(path)))
        except SeedzerError:
            continue
        counts[name] = counts.get(name, 0) + 1
    return counts
