"""Why test cases and pool models were invalid, as ``seedzer status --all`` shows it.

An invalid test case is counted by its level and the *class* of its reason (:func:`invalid_class`:
the reason's first clause, e.g. "onnxruntime cannot run the model", "unsupported input type",
"the Relax mutation made ill-formed IR"), in campaign.db's ``invalid_summary``; a pool model that
gave no seed is listed with the first reason its loading gave (campaign.db's ``models``).
"""

from __future__ import annotations

import json
import re
import sqlite3
from typing import Any

from rich.table import Table

from seedzer.kernel.messages import normalize

CLASS_CHARS = 80
"""Longest reason class kept (a class is a reason's first clause, not its details)."""
_CLAUSE = re.compile(r"^(.*?)(?:: |\s\(|$)")


def invalid_class(message: str) -> str:
    """The class of an invalid test case's reason: its first line up to the first ``: `` or `` (``,
    numbers and names normalized (so one cause is one class), at most :data:`CLASS_CHARS` long."""
    first = next((line.strip() for line in message.splitlines() if line.strip()), "")
    found = _CLAUSE.match(first)
    clause = (found.group(1) if found else first).strip() or "(no reason given)"
    return normalize(clause)[:CLASS_CHARS]


def _rows(conn: sqlite3.Connection, sql: str) -> list[tuple[Any, ...]]:
    try:
        return conn.execute(sql).fetchall()
    except sqlite3.OperationalError as exc:
        if "no such table" in str(exc):  # a campaign from before the table
            return []
        raise


def invalid_table(conn: sqlite3.Connection) -> Table | None:
    """Invalid test cases by level and reason class, most frequent first (None when none is recorded)."""
    rows = _rows(conn, "SELECT level, reason, count FROM invalid_summary ORDER BY count DESC, level, reason")
    if not rows:
        return None
    table = Table(title="Invalid test cases by reason (never filed)")
    for col in ("level", "reason", "count"):
        table.add_column(col, overflow="fold")
    for level, reason, count in rows:
        table.add_row(str(level), str(reason), str(count))
    return table


def unloaded_models_table(conn: sqlite3.Connection) -> Table | None:
    """Pool models that gave no seed, each with the first reason its loading gave (None when every
    model gave seeds)."""
    rows = _rows(conn, "SELECT model, detail FROM models WHERE status != 'ok' ORDER BY model")
    if not rows:
        return None
    table = Table(title="Pool models that gave no seed (never fuzzed; bugs among them are load findings)")
    for col in ("model", "symptom", "step", "reason"):
        table.add_column(col, overflow="fold")
    for model, detail in rows:
        try:
            observations = json.loads(detail).get("observations") or []
        except (ValueError, AttributeError):
            observations = []
        first = observations[0] if observations and isinstance(observations[0], dict) else {}
        table.add_row(str(model), str(first.get("symptom", "?")), str(first.get("pass") or "-"),
                      str(first.get("message") or "no seeds")[:200])
    return table
