"""Read-only access to a campaign.db that may still be written by a running campaign (WAL mode).

Readers (:class:`seedzer.store.reader.CampaignReader`, used by ``status``, ``report``, ``coverage
export|diff``, ``fuzz --resume``'s checks) never write a database, never create one, and never leave
files next to it:

* a database whose ``-wal`` file exists (a campaign running, or killed) is opened ``mode=ro``, which
  sees the WAL's latest commits;
* one without (a campaign that ended and checkpointed, or one on read-only media) is opened
  ``immutable=1``: SQLite then reads the file as it is and creates no ``-shm``/``-wal`` files.

:func:`open_campaign` also checks that the file is a Seedzer campaign (an SQLite database with a
``meta`` table holding ``schema_version``), so a 0-byte file, a text file or another program's
SQLite database is refused in one line instead of being read as an empty campaign.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from urllib.parse import quote

from seedzer.errors import CampaignError

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
