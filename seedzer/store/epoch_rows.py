"""campaign.db's ``epochs`` table: one row per generation epoch of a campaign run with ``--epochs``.

The table is created by :data:`seedzer.store.db.SCHEMA` (``CREATE TABLE IF NOT EXISTS``), so a campaign
made before epochs existed gains it, empty, when it is opened. JSON columns hold the learned weights
(NNSmith operators, importer operators), the posterior per operator and the outcomes (model, epoch,
reward, success) the weights were learned from.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass, field
from typing import Any

from seedzer.store.db import CampaignDB


@dataclass
class EpochRow:
    """One epoch: when it started (campaign seconds), the weights its models were generated with, the
    posterior and outcomes behind them, models made and loaded, and coverage and bug roots at its end."""

    epoch: int
    started: float | None = None
    weights: dict[str, float] = field(default_factory=dict)
    onnx_weights: dict[str, float] = field(default_factory=dict)
    posterior: dict[str, list[float]] = field(default_factory=dict)
    outcomes: list[dict[str, Any]] = field(default_factory=list)
    made: int = 0
    loaded: int = 0
    coverage: int | None = None
    roots: int | None = None
    ended: float | None = None
    attribute_weights: dict[str, float] = field(default_factory=dict)
    """The weights of the attribute values (``nodes=more``...) its models drew theirs with."""


_COLUMNS = ("epoch", "started", "weights", "onnx_weights", "posterior", "outcomes", "made", "loaded", "coverage",
            "roots", "ended", "attribute_weights")
_JSON = {"weights", "onnx_weights", "posterior", "outcomes", "attribute_weights"}


def save_epoch(db: CampaignDB, row: EpochRow) -> None:
    """Insert or replace the row of ``row.epoch``."""
    values = [json.dumps(getattr(row, c)) if c in _JSON else getattr(row, c) for c in _COLUMNS]
    with db.transaction() as c:
        c.execute(f"INSERT OR REPLACE INTO epochs ({', '.join(_COLUMNS)}) VALUES ({', '.join('?' * len(_COLUMNS))})",
                  values)


def epoch_rows(conn: sqlite3.Connection) -> list[EpochRow]:
    """Every epoch row, in epoch order (none for a campaign run without epochs, or one whose campaign.db
    predates the table and is read without being migrated, e.g. by ``status``)."""
    present = {r[1] for r in conn.execute("PRAGMA table_info(epochs)")}
    if not present:
        return []
    columns = [c for c in _COLUMNS if c in present]  # read without migration: a column added later is absent
    cur = conn.execute(f"SELECT {', '.join(columns)} FROM epochs ORDER BY epoch").fetchall()
    return [EpochRow(**{c: json.loads(v) if c in _JSON else v for c, v in zip(columns, r, strict=True)})
            for r in cur]
