"""campaign.db's epochs table (seedzer.store.epoch_rows)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from seedzer.store.db import CampaignDB
from seedzer.store.epoch_rows import EpochRow, epoch_rows, save_epoch


def test_an_epoch_row_round_trips_and_is_replaced(tmp_path: Path) -> None:
    db = CampaignDB(tmp_path / "campaign.db")
    row = EpochRow(1, 60.0, {"Relu": 1.5}, {}, {"Relu": [2.0, 1.0]},
                   [{"model": "model_000000.onnx", "epoch": 0, "reward": 3.0, "success": True}], made=4)
    save_epoch(db, row)
    row.loaded, row.coverage, row.roots, row.ended = 3, 1234, 2, 120.0
    save_epoch(db, row)
    save_epoch(db, EpochRow(0, 0.0))
    assert epoch_rows(db.conn) == [EpochRow(0, 0.0), row]


def test_a_campaign_made_before_epochs_gains_the_table_and_status_reads_none(tmp_path: Path) -> None:
    path = tmp_path / "campaign.db"
    CampaignDB(path).close()
    conn = sqlite3.connect(path)
    conn.execute("DROP TABLE epochs")  # as an older Seedzer left it
    conn.commit()
    assert epoch_rows(conn) == []  # read without migrating (status)
    conn.close()
    db = CampaignDB(path)  # opened to resume: migrated
    save_epoch(db, EpochRow(0, 0.0))
    assert [r.epoch for r in epoch_rows(db.conn)] == [0]
