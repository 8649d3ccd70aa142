"""Why test cases and pool models were invalid, as ``seedzer status --invalid`` (and ``--all``) shows it.

A test case turned away before the gate is counted by its level, the *class* of its reason
(:func:`invalid_class`: the reason's first clause, e.g. "onnxruntime cannot run the model",
"unsupported input type", "the Relax mutation made ill-formed IR"; for a precondition, the pattern
that fired; for a mutant out of bounds, the bound) and its pass, in campaign.db's
``filter_summary``, with the samples :mod:`seedzer.campaign.filtered` kept; a pool model that gave
no seed is listed with the first reason its loading gave (campaign.db's ``models``).
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections import Counter
from collections.abc import Callable
from typing import Any

from rich.table import Table

from seedzer.kernel.messages import normalize
from seedzer.mutate.tir.bounds import PREFIX as BOUNDS_PREFIX
from seedzer.mutate.tir.bounds import kind_of
from seedzer.oracles.preconditions import precondition_pattern

CLASS_CHARS = 80
"""Longest reason class kept (a class is a reason's first clause, not its details)."""
_CLAUSE = re.compile(r"^(.*?)(?:: |\s\(|$)")


def _precondition(rest: str) -> str:
    return f"precondition: {precondition_pattern(rest) or 'other'}"


def _bounds(rest: str) -> str:
    return f"bounds: {kind_of(BOUNDS_PREFIX + rest) or 'other'}"


REFINED: dict[str, Callable[[str], str]] = {"precondition": _precondition, "bounds": _bounds}
"""Classes split further by the rest of the reason: a precondition by the pattern that fired
(:data:`seedzer.oracles.preconditions.PRECONDITION_PATTERNS`), a mutant out of bounds by the bound."""


def invalid_class(message: str) -> str:
    """The class of an invalid test case's reason: its first line up to the first ``: `` or `` (``,
    numbers and names normalized (so one cause is one class), at most :data:`CLASS_CHARS` long;
    the classes of :data:`REFINED` name their pattern or bound too."""
    first = next((line.strip() for line in message.splitlines() if line.strip()), "")
    found = _CLAUSE.match(first)
    clause = (found.group(1) if found else first).strip() or "(no reason given)"
    refine = REFINED.get(clause)
    if refine is not None:
        return refine(message.strip()[len(clause):].lstrip(": "))[:CLASS_CHARS]
    return normalize(clause)[:CLASS_CHARS]


def _rows(conn: sqlite3.Connection, sql: str) -> list[tuple[Any, ...]]:
    try:
        return conn.execute(sql).fetchall()
    except sqlite3.OperationalError as exc:
        if "no such table" in str(exc):  # a campaign from before the table
            return []
        raise


def invalid_table(conn: sqlite3.Connection) -> Table | None:
    """Test cases the filters before the gate turned away (invalid or slow) by level, reason and pass,
    most frequent first, with the samples kept of each (``filtered/<name>``; ``seedzer replay`` runs
    one) and how their re-runs at the full limits ended (None when none is recorded)."""
    rows = _rows(conn, "SELECT level, reason, pass, count FROM filter_summary ORDER BY count DESC, level, reason, pass")
    if not rows:
        return None
    samples: dict[tuple[str, str, str], list[tuple[str, str]]] = {}
    for level, reason, where, folder, rerun in _rows(conn, "SELECT level, reason, pass, folder, rerun "
                                                           "FROM filter_samples ORDER BY id"):
        samples.setdefault((level, reason, where), []).append((str(folder), str(rerun)))
    table = Table(title="Test cases turned away before the gate, by reason (samples: filtered/<name>)")
    for col in ("level", "reason", "pass", "count", "samples", "re-runs at full limits"):
        table.add_column(col, overflow="fold")
    for level, reason, where, count in rows:
        kept = samples.get((level, reason, where), [])
        reruns = Counter(rerun for _, rerun in kept if rerun)
        table.add_row(str(level), str(reason), str(where), str(count),
                      " ".join(folder for folder, _ in kept[:3]) + (f" (+{len(kept) - 3})" if len(kept) > 3 else ""),
                      ", ".join(f"{n} {outcome}" for outcome, n in sorted(reruns.items())))
    return table


def rerun_table(conn: sqlite3.Connection) -> Table | None:
    """Every re-run at the full limits that did not pass (a hang filed as a candidate, an allocation
    that fails again alone: a runaway allocation to look at, an error); None when there is none."""
    rows = _rows(conn, "SELECT folder, level, reason, pass, rerun, rerun_detail FROM filter_samples "
                       "WHERE rerun NOT IN ('', 'passes') ORDER BY id")
    if not rows:
        return None
    table = Table(title="Re-runs at the full limits that did not pass")
    for col in ("sample", "level", "reason", "pass", "outcome", "detail"):
        table.add_column(col, overflow="fold")
    for row in rows:
        table.add_row(*(str(v) for v in row))
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
