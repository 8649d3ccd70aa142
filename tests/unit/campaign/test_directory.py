"""A campaign directory on a full disk (issue 45 row 5): a new campaign that cannot write leaves no
``.write-probe``, no empty folder and no campaign.db that is none; a finding being written when the
disk fills is written whole or not at all, and ``--resume`` loses nothing (nor announces again what
it had filed, issue 55 row 11). The full disk is an
``ENOSPC`` raised by the N-th write (the real tmpfs case is tests/integration/test_full_disk.py)."""

from __future__ import annotations

import errno
import os
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from seedzer.campaign import directory, loop
from seedzer.campaign.directory import CAMPAIGN_FOLDERS, discard_new, prepare_dir
from seedzer.errors import CampaignError
from seedzer.finding.meta import BUG, PENDING, FindingMeta
from seedzer.kernel.common import Symptom
from seedzer.store import atomic
from seedzer.store.db import CampaignDB
from tests.unit.campaign.test_loop_campaigns import ROOTS, by_symptom, campaign, config, events, query
from tests.unit.fake_gate import FakeGate

pytestmark = pytest.mark.usefixtures("restore_signals")


def _enospc(*_: Any, **__: Any) -> None:
    raise OSError(errno.ENOSPC, "No space left on device")


def test_a_full_disk_leaves_no_probe_and_no_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Before: a 0-byte .write-probe and the three empty folders stayed."""
    out = tmp_path / "camp"
    out.mkdir()
    monkeypatch.setattr(directory.os, "fsync", _enospc)  # the probe's write is refused when synced
    with pytest.raises(CampaignError, match=r"camp: campaign directory is not writable \(No space left on device\)"):
        prepare_dir(out, resume=False)
    assert list(out.iterdir()) == []


def test_a_folder_that_cannot_be_made_takes_back_the_ones_made(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "camp"
    out.mkdir()
    (out / "logs").mkdir()  # already there: not ours to remove
    real = Path.mkdir

    def second_fails(self: Path, *args: Any, **kwargs: Any) -> None:
        if self.name == "findings":
            _enospc()
        real(self, *args, **kwargs)

    monkeypatch.setattr(Path, "mkdir", second_fails)
    with pytest.raises(CampaignError, match="not writable"):
        prepare_dir(out, resume=False)
    assert sorted(p.name for p in out.iterdir()) == ["logs"]


def test_prepare_dir_makes_the_folders_and_says_which(tmp_path: Path) -> None:
    out = tmp_path / "camp"
    made = prepare_dir(out, resume=False)
    assert made == [out / name for name in CAMPAIGN_FOLDERS]
    assert sorted(p.name for p in out.iterdir()) == sorted(CAMPAIGN_FOLDERS)
    (out / "corpus" / "x.py").write_text("kept")
    (out / "campaign.db").write_text("")
    discard_new(out, made)
    assert sorted(p.name for p in out.iterdir()) == ["corpus"]  # a folder with a file in it stays


def test_a_new_campaign_whose_database_cannot_be_written_leaves_nothing(tmp_path: Path, pool: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """Before: a 0-byte campaign.db stayed, and the next `seedzer fuzz` there was refused."""
    out = tmp_path / "camp"

    class FullDB:
        def __init__(self, path: Path) -> None:
            path.write_bytes(b"")  # SQLite made its file, then found the disk full
            raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(loop, "CampaignDB", FullDB)
    with pytest.raises(sqlite3.OperationalError, match="disk is full"):
        campaign(out, pool, ["a"], FakeGate(by_symptom), lambda c: True)
    assert [p.name for p in out.iterdir()] == [".seedzer.lock"]  # the lock file is the lock (empty, free)


def test_a_finding_written_when_the_disk_fills_is_whole_or_absent_and_resume_loses_nothing(
        tmp_path: Path, pool: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Before: the finding's folder stayed, empty or half-written. After: the campaign stops with one
    line, findings/ holds no partial folder, and the resumed campaign has every entry and finding."""
    out = tmp_path / "camp"
    real = atomic._write_file
    calls = [0]

    def fills_up(path: Path, data: str | bytes) -> None:
        calls[0] += "findings" in path.parts
        if calls[0] == 2:  # the finding's second file: the first is written, then the disk is full
            raise OSError(errno.ENOSPC, "No space left on device")
        real(path, data)

    monkeypatch.setattr(atomic, "_write_file", fills_up)
    c, _ = campaign(out, pool, ["a", "b", "ERROR"], FakeGate(by_symptom), lambda c: False)
    with pytest.raises(CampaignError, match=r"findings/[0-9a-f]{12}: cannot write \(disk full\)"):
        c.run()
    assert list((out / "findings").iterdir()) == []  # no folder, no empty one, no staging one
    assert query(out / "campaign.db", "SELECT count(*) FROM findings") == [(0,)]
    kept = {row[0] for row in query(out / "campaign.db", "SELECT id FROM corpus")}
    assert len(kept) == 3
    monkeypatch.setattr(atomic, "_write_file", real)
    c2, _ = campaign(out, pool, ["a", "b", "ERROR"], FakeGate(by_symptom),
                     lambda c: bool(c.db.findings()) and c.stats.session_execs > 5, resume=True, cfg=config())
    c2.run()
    assert kept <= {row[0] for row in query(out / "campaign.db", "SELECT id FROM corpus")}
    for (folder,) in query(out / "campaign.db", "SELECT dir FROM findings"):
        assert (out / folder / "meta.json").is_file() and (out / folder / "repro.py").is_file()
    assert query(out / "campaign.db", "PRAGMA integrity_check") == [("ok",)]
    assert not [p for p in (out / "findings").iterdir() if p.name.startswith(".")]
    assert os.listdir(out / "findings")


def test_a_verdict_written_to_its_folder_before_the_disk_filled_is_not_announced_as_new_again(
        tmp_path: Path, pool: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 55 row 11: the gate's verdict reached the finding's meta.json, then campaign.db's write of it
    failed (disk full) and the campaign stopped. Before: the resume judged the finding again and announced
    ``new bug`` for the root its folder already held. After: the resume takes the folder's verdict into
    campaign.db, counts the root as filed, and neither gates nor announces it again."""
    out = tmp_path / "camp"
    real = CampaignDB.set_verdict

    def disk_full(self: CampaignDB, *args: Any) -> None:
        raise CampaignError(f"{self.path}: database write failed (database or disk is full)")

    monkeypatch.setattr(CampaignDB, "set_verdict", disk_full)
    c, first = campaign(out, pool, ["a", "ERROR"], FakeGate(by_symptom), lambda c: False)
    with pytest.raises(CampaignError, match="database or disk is full"):
        c.run()
    ((sig, verdict),) = query(out / "campaign.db", "SELECT signature, verdict FROM findings")
    assert verdict == PENDING and FindingMeta.load(out / "findings" / sig).verdict == BUG  # the folder has it
    monkeypatch.setattr(CampaignDB, "set_verdict", real)
    gate = FakeGate(by_symptom)
    again, second = campaign(out, pool, ["a", "ERROR"], gate, lambda c: c.stats.session_execs >= 20, resume=True,
                             cfg=config())
    stats = again.run()
    root = ROOTS[Symptom.EXCEPTION]
    assert not [m for m in first.messages + second.messages if m.startswith(f"new bug {root}")]
    assert sig not in gate.submitted and stats.unique == {"exception": 1}
    assert query(out / "campaign.db", "SELECT verdict, root FROM findings") == [(BUG, root)]
    assert [e["signature"] for e in events(out, "verdict_restored")] == [sig]
