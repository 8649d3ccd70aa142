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


def test_an_epochs_table_without_attribute_weights_is_read_and_migrated(tmp_path: Path) -> None:
    path = tmp_path / "campaign.db"
    CampaignDB(path).close()
    conn = sqlite3.connect(path)
    conn.execute("DROP TABLE epochs")  # the table as campaigns made before attribute weights have it
    conn.execute("CREATE TABLE epochs (epoch INTEGER PRIMARY KEY, started REAL, weights TEXT NOT NULL DEFAULT '{}', "
                 "onnx_weights TEXT NOT NULL DEFAULT '{}', posterior TEXT NOT NULL DEFAULT '{}', "
                 "outcomes TEXT NOT NULL DEFAULT '[]', made INTEGER NOT NULL DEFAULT 0, "
                 "loaded INTEGER NOT NULL DEFAULT 0, coverage INTEGER, roots INTEGER, ended REAL)")
    conn.execute("INSERT INTO epochs (epoch, started, weights) VALUES (1, 60.0, '{\"Relu\": 1.5}')")
    conn.commit()
    assert epoch_rows(conn) == [EpochRow(1, 60.0, {"Relu": 1.5})]  # read without migrating (status)
    conn.close()
    db = CampaignDB(path)  # opened to resume: migrated
    row = EpochRow(2, 120.0, attribute_weights={"nodes=more": 1.2})
    save_epoch(db, row)
    assert epoch_rows(db.conn) == [EpochRow(1, 60.0, {"Relu": 1.5}), row]
