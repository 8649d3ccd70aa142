import errno
import json
import os
from dataclasses import dataclass
from pathlib import Path

import pytest

from seedzer.errors import CampaignError, SeedzerError
from seedzer.finding.meta import BUG, FindingMeta, inside
from seedzer.finding.store import FindingStore, finding_folder
from seedzer.kernel.common import Observation, Stage, Symptom
from seedzer.kernel.messages import ir_names
from seedzer.oracles.signature import raw_key
from seedzer.store.atomic import write_atomic
from seedzer.store.corpus import Corpus, CorpusEntry
from seedzer.store.db import CampaignDB


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
    e = CorpusEntry("abc", "# script", '[{"name":"RemoveNoOp","args":{}}]', "m.onnx", None, "relu", level="tir")
    assert corpus.add(e, 5, ["Flipper"])
    assert not corpus.add(e, 5)
    db.close()
    db2 = CampaignDB(tmp_path / "campaign.db")
    c2 = Corpus(tmp_path / "corpus", db2)
    assert c2.restore() == 1
    assert c2.entries[0].script == "# script" and c2.entries[0].op == "relu"


def test_restore_runs_again_only_seeds_never_run(tmp_path: Path) -> None:
    db = CampaignDB(tmp_path / "campaign.db")
    corpus = Corpus(tmp_path / "corpus", db)
    for e in (CorpusEntry("seed-run", "# a", "[]", "m.onnx", level="tir"),
              CorpusEntry("seed-new", "# b", "[]", "m.onnx", level="tir"),
              CorpusEntry("child", "# c", "[]", "m.onnx", parent="seed-run", level="tir")):
        corpus.add(e, 1)
    db.close()
    restored = Corpus(tmp_path / "corpus", CampaignDB(tmp_path / "campaign.db"))
    restored.restore()
    assert {e.seed_id: e.executed for e in restored.entries} == {"seed-run": True, "seed-new": False, "child": True}


def _meta(obs: Observation, script: str) -> FindingMeta:
    return FindingMeta(raw_key("lowlevel", obs, ir_names(script)).digest(), "tir", obs)


@dataclass
class Files:
    """A finding of no kind in particular: its record and its files (the house writes any kind's)."""

    meta: FindingMeta
    content: dict[str, str | bytes]

    def files(self) -> dict[str, str | bytes]:
        return self.content


def test_findings_dedup_and_known(tmp_path: Path) -> None:
    db = CampaignDB(tmp_path / "campaign.db")
    store = FindingStore(tmp_path / "findings", db, [("VectorizeLoop", "upstream #1")])
    o1 = Observation(Symptom.EXCEPTION, Stage.PASS, "StorageRewrite", "Check failed: (v_i0 == 3) is false")
    o2 = Observation(Symptom.EXCEPTION, Stage.PASS, "StorageRewrite", "Check failed: (v_j7 == 12) is false")
    r1 = store.record(Files(_meta(o1, "x"), {"ir.py": "x"}))
    r2 = store.record(Files(_meta(o2, "y"), {"ir.py": "y"}))
    assert r1.new and not r2.new and r1.signature == r2.signature
    assert (r1.dir / "ir.py").read_text() == "x"  # the first reproducer is kept
    assert json.loads((r1.dir / "meta.json").read_text())["signature"] == r1.signature
    assert db.findings()[0].count == 2
    known = store.record(Files(_meta(Observation(Symptom.CRASH, Stage.PASS, "VectorizeLoop", "SIGSEGV"), ""), {}))
    assert known.status == "known"
    meta = store.load(r1.signature)
    meta.status, meta.verdict, meta.root_signature = "confirmed", BUG, "0123456789ab"
    store.update(meta)
    saved = json.loads((r1.dir / "meta.json").read_text())
    assert (saved["status"], saved["verdict"], saved["root_signature"]) == ("confirmed", BUG, "0123456789ab")
    row = next(r for r in db.findings() if r.signature == r1.signature)
    assert (row.status, row.verdict, row.root) == ("confirmed", BUG, "0123456789ab")


def test_finding_meta_reads_an_older_outcome_and_keeps_unknown_fields(tmp_path: Path) -> None:
    folder = tmp_path / "0123456789ab"
    folder.mkdir()
    (folder / "meta.json").write_text(json.dumps({
        "signature": "0123456789ab", "kind": "lowlevel", "status": "new", "parent": "p", "future": [1],
        "outcome": {"symptom": "illformed", "stage": "pass", "pass_name": "tirx.UnrollLoop",
                    "message": "IR is ill-formed after tirx.UnrollLoop: main: ValueError: multiple definitions",
                    "detail": {}}}))
    meta = FindingMeta.load(folder)
    assert meta.observation.pass_name == "tirx.UnrollLoop" and meta.observation.message.startswith("ValueError")
    assert meta.verdict == "pending" and meta.extra == {"future": [1]}
    assert json.loads(meta.dump(folder / "meta.json"))["future"] == [1]


def test_finding_paths_never_leave_their_folder(tmp_path: Path) -> None:
    with pytest.raises(SeedzerError, match="not a finding signature"):
        finding_folder(tmp_path, "../../etc")
    with pytest.raises(SeedzerError, match="leaves the finding's folder"):
        inside(tmp_path, "../x.onnx")
    with pytest.raises(SeedzerError, match="leaves the finding's folder"):
        inside(tmp_path, "/etc/passwd")
    assert inside(tmp_path, "model.onnx") == (tmp_path / "model.onnx").resolve()
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "meta.json").write_text("{\"not\": \"a finding\"}")
    with pytest.raises(SeedzerError, match="not a Seedzer finding"):
        FindingMeta.load(tmp_path / "bad")


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
