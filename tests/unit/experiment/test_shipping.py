"""Shipping a trial directory as tar bytes: consistent SQLite copies, mirror unpacking, path rewriting."""

from __future__ import annotations

import io
import json
import os
import sqlite3
import tarfile
from pathlib import Path

import pytest

from seedzer.experiment.shipping import absolute_paths, pack_dir, rewrite_argv, unpack_dir
from seedzer.store.db import CampaignDB


def _names(data: bytes) -> list[str]:
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        return tar.getnames()


def _snapshot(t: float) -> dict[str, object]:
    return {"time": t, "execs": int(t), "coverage": 1, "coverage_backend": "passes", "corpus_size": 1,
            "findings": 0, "unique_findings": 0, "invalid": 0, "wall": t}


def test_round_trip_keeps_files_and_the_destinations_own_names(tmp_path: Path) -> None:
    src, dest = tmp_path / "src", tmp_path / "dest"
    (src / "corpus" / "deep").mkdir(parents=True)
    (src / "corpus" / "deep" / "a.bin").write_bytes(b"\x00\x01" * 1000)
    (src / "config.yaml").write_text("x: 1\n")
    (src / "empty").mkdir()
    (src / ".lock").write_text("src lock")
    (src / "trial.json").write_text('{"status": "src"}')
    dest.mkdir()
    (dest / ".lock").write_text("dest lock")
    (dest / "trial.json").write_text('{"status": "dest"}')
    (dest / "stale.txt").write_text("gone after unpack")
    (dest / "corpus").mkdir()
    (dest / "corpus" / "old.bin").write_text("gone too")
    data = pack_dir(src)
    names = _names(data)
    assert ".lock" not in names and "trial.json" not in names
    unpack_dir(data, dest)
    assert (dest / "corpus" / "deep" / "a.bin").read_bytes() == b"\x00\x01" * 1000
    assert (dest / "config.yaml").read_text() == "x: 1\n" and (dest / "empty").is_dir()
    assert (dest / ".lock").read_text() == "dest lock" and json_status(dest) == "dest"
    assert not (dest / "stale.txt").exists() and not (dest / "corpus" / "old.bin").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dest", "src"], "no staging directory left behind"


def json_status(d: Path) -> str:
    return str(json.loads((d / "trial.json").read_text())["status"])


def test_a_live_wal_database_is_copied_whole_and_stale_side_files_go(tmp_path: Path) -> None:
    src, dest = tmp_path / "src", tmp_path / "dest"
    src.mkdir()
    db = CampaignDB(src / "campaign.db")  # WAL mode, left open: recent rows live only in the -wal file
    for t in range(50):
        db.add_snapshot(_snapshot(float(t)))
    db.set_meta("elapsed", 49.0)
    assert (src / "campaign.db-wal").exists() and (src / "campaign.db-wal").stat().st_size > 0
    data = pack_dir(src)
    db.close()
    names = _names(data)
    assert names == ["campaign.db"], names
    dest.mkdir()
    (dest / "campaign.db-wal").write_bytes(b"stale wal of an older copy")
    unpack_dir(data, dest)
    assert not (dest / "campaign.db-wal").exists()
    copy = CampaignDB(dest / "campaign.db")
    try:
        assert len(copy.snapshots()) == 50 and copy.get_meta("elapsed") == 49.0
    finally:
        copy.close()


def test_an_archive_cannot_write_outside_its_destination(tmp_path: Path) -> None:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        info = tarfile.TarInfo("../evil.txt")
        info.size = 4
        tar.addfile(info, io.BytesIO(b"evil"))
    with pytest.raises(tarfile.TarError):
        unpack_dir(buf.getvalue(), tmp_path / "dest")
    assert not (tmp_path / "evil.txt").exists()


def test_files_that_vanish_or_cannot_be_read_are_left_out(tmp_path: Path) -> None:
    (tmp_path / "ok.txt").write_text("ok")
    (tmp_path / "secret.txt").write_text("no")
    (tmp_path / "secret.txt").chmod(0)
    (tmp_path / "broken.db").write_bytes(b"SQLite format 3\x00" + b"garbage" * 10)
    try:
        names = _names(pack_dir(tmp_path))
    finally:
        (tmp_path / "secret.txt").chmod(0o644)
    assert "ok.txt" in names and "broken.db" not in names
    assert ("secret.txt" in names) == (os.geteuid() == 0)  # root reads it anyway


def test_rewrite_moves_paths_and_only_whole_components() -> None:
    paths = {"/r/exp/a/trial-1": "/tmp/t/trial", "/pools/a": "/tmp/t/pool", "/r/exp/a": "/elsewhere"}
    argv = ["/usr/bin/python", "-m", "seedzer.cli", "fuzz", "--pool", "/pools/a", "--out", "/r/exp/a/trial-1",
            "--config", "/r/exp/a/trial-1/config.yaml", "--log=/r/exp/a/trial-1/x.log", "/r/exp/a/trial-10",
            "/pools/ab", "--minutes", "1"]
    assert rewrite_argv(argv, paths) == [
        "/usr/bin/python", "-m", "seedzer.cli", "fuzz", "--pool", "/tmp/t/pool", "--out", "/tmp/t/trial",
        "--config", "/tmp/t/trial/config.yaml", "--log=/tmp/t/trial/x.log", "/elsewhere/trial-10",
        "/pools/ab", "--minutes", "1"]


def test_absolute_paths_maps_only_relative_ones(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    got = absolute_paths([Path("results/x/trial-1"), Path("/abs/pool")])
    assert got == {"results/x/trial-1": str(tmp_path / "results/x/trial-1")}
    assert rewrite_argv(["--out", "results/x/trial-1", "results/x/trial-1/config.yaml"], got) == [
        "--out", str(tmp_path / "results/x/trial-1"), str(tmp_path / "results/x/trial-1/config.yaml")]


def test_sqlite_backup_is_used_not_a_raw_copy(tmp_path: Path) -> None:
    """The raw main file of a WAL database lacks its recent rows: what pack_dir must not ship."""
    db = CampaignDB(tmp_path / "campaign.db")
    db.add_snapshot(_snapshot(1.0))
    raw = (tmp_path / "campaign.db").read_bytes()
    (tmp_path / "raw").mkdir()
    (tmp_path / "raw" / "campaign.db").write_bytes(raw)
    conn = sqlite3.connect(tmp_path / "raw" / "campaign.db")
    try:
        rows = conn.execute("SELECT count(*) FROM snapshots").fetchone()[0]
    except sqlite3.Error:
        rows = 0
    finally:
        conn.close()
    db.close()
    assert rows == 0, "the WAL premise of test_a_live_wal_database_is_copied_whole does not hold"
