"""Read-only access to a campaign.db that may still be written by a running campaign (WAL mode)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any


def open_readonly(db: Path) -> sqlite3.Connection:
    """A read-only connection to a (possibly live) campaign.db; never creates or writes the file."""
    path = Path(db).resolve()
    if not path.is_file():
        raise sqlite3.OperationalError(f"{db}: no such database")
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=10)
        conn.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchall()
        return conn
    except sqlite3.OperationalError:
        # A finished campaign on a read-only volume has no -shm file; read it as immutable.
        conn = sqlite3.connect(f"file:{path}?immutable=1", uri=True, timeout=10)
        conn.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchall()
        return conn


def read_meta(conn: sqlite3.Connection, key: str, default: Any = None) -> Any:
    """A JSON value from the meta table (``default`` when absent)."""
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    return json.loads(row[0]) if row else default
