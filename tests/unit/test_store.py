import errno
import json
import os
from pathlib import Path

import pytest

from seedzer.config import KnownIssue
from seedzer.errors import CampaignError
from seedzer.outcome import Outcome, Stage, Symptom
from seedzer.store.atomic import write_atomic
from seedzer.store.corpus import Corpus, CorpusEntry
from seedzer.store.db import CampaignDB
from seedzer.store.findings import FindingStore


def test_db_is_wal_and_counts(tmp_path: Path) -> None:
    db = CampaignDB(tmp_path / "campaign.db")
    assert db.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    db.add_exec_counts({("ok", ""): 3, ("exception", "pass"): 1})
    db.add_exec_counts({("ok", ""): 2})
    assert db.total_execs() == 6
    assert db.exec_summary()[("ok", "")] == 5


def test_corpus_survives_reopen(tmp_path: Path) -> None:
    db = CampaignDB(tmp_path / "campaign.db")
    corpus = Corpus(tmp_path / "corpus", db)
    e = CorpusEntry("abc", "# script", '[{"name":"RemoveNoOp","args":{}}]', "m.onnx", None, "relu")
    assert corpus.add(e, 5, ["Flipper"])
    assert not corpus.add(e, 5)
    db.close()
    db2 = CampaignDB(tmp_path / "campaign.db")
    c2 = Corpus(tmp_path / "corpus", db2)
    assert c2.restore() == 1
    assert c2.entries[0].script == "# script" and c2.entries[0].op == "relu"


def test_findings_dedup_and_known(tmp_path: Path) -> None:
    db = CampaignDB(tmp_path / "campaign.db")
    store = FindingStore(tmp_path / "findings", db, [KnownIssue(pattern="VectorizeLoop", note="upstream #1")])
    o1 = Outcome(Symptom.EXCEPTION, Stage.PASS, "StorageRewrite", "Check failed: (v_i0 == 3) is false")
    o2 = Outcome(Symptom.EXCEPTION, Stage.PASS, "StorageRewrite", "Check failed: (v_j7 == 12) is false")
    r1 = store.report(o1, {"ir.py": "x"}, {"a": 1})
    r2 = store.report(o2, {"ir.py": "y"}, {"a": 2})
    assert r1.new and not r2.new and r1.signature == r2.signature
    assert (r1.dir / "ir.py").read_text() == "x"  # the first reproducer is kept
    assert json.loads((r1.dir / "meta.json").read_text())["signature"] == r1.signature
    assert db.findings()[0].count == 2
    known = store.report(Outcome(Symptom.CRASH, Stage.PASS, "VectorizeLoop", "SIGSEGV"), {}, {})
    assert known.status == "known"
    store.set_status(r1.signature, "confirmed")
    assert json.loads((r1.dir / "meta.json").read_text())["status"] == "confirmed"


def test_write_atomic_full_disk_is_one_line_and_keeps_old(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "f.txt"
    write_atomic(target, "old")

    def boom(*a: object, **k: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(CampaignError, match=r"f.txt: cannot write \(disk full\)"):
        write_atomic(target, "new")
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["f.txt"]


def test_write_atomic_files_get_the_usual_mode(tmp_path: Path) -> None:
    mask = os.umask(0o022)
    os.umask(mask)
    target = tmp_path / "f.txt"
    write_atomic(target, "x")
    assert target.stat().st_mode & 0o777 == 0o666 & ~mask
