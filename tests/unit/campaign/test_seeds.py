"""Seeding a campaign with another campaign's corpus entries (the long mode of fuzz_throughput)."""

from __future__ import annotations

from pathlib import Path

import pytest

from seedzer.campaign.seeds import imported_entries
from seedzer.errors import CampaignError
from seedzer.seed import PassSpec, passes_to_json
from seedzer.store.corpus import CORPUS_DIR, entry_id
from seedzer.store.db import CampaignDB, CorpusRow


def fake_campaign(out: Path, n: int) -> list[str]:
    """A finished campaign's corpus of ``n`` entries (added one second apart, in reverse id order so
    that rowid and added_time disagree); entry i has i passes. Their ids, oldest first."""
    (out / CORPUS_DIR).mkdir(parents=True)
    db = CampaignDB(out / "campaign.db")
    ids = []
    for i in range(n):
        script = f"# script {i}\n"
        passes = passes_to_json([PassSpec("tirx.Simplify")] * i)
        ids.append(entry_id("tir", script, [PassSpec("tirx.Simplify")] * i))
        (out / CORPUS_DIR / f"{ids[-1]}.py").write_text(script)
        (out / CORPUS_DIR / f"{ids[-1]}.passes.json").write_text(passes)
    for i in reversed(range(n)):
        db.add_corpus(CorpusRow(ids[i], ids[i - 1] if i else None, f"m{i % 2}.onnx", "[]", 1, 1000.0 + i,
                                f"{CORPUS_DIR}/{ids[i]}.py", f"op{i}", "[]"))  # level: from the path, as before levels
    db.close()
    return ids


def test_the_late_share_by_added_time_with_scripts_and_pass_files(tmp_path: Path) -> None:
    ids = fake_campaign(tmp_path / "src", 10)
    before = (tmp_path / "src" / "campaign.db").read_bytes()
    late = imported_entries(tmp_path / "src", 0.3)
    assert [e.seed_id for e in late] == ids[7:]  # the last 30% added, oldest first
    e = late[0]
    assert e.script == "# script 7\n" and e.origin == "m1.onnx" and e.op == "op7" and e.parent is None
    assert e.passes.count("tirx.Simplify") == 7 and not e.executed  # the pass file, not the db's "[]"
    assert [x.seed_id for x in imported_entries(tmp_path / "src")] == ids
    assert len(imported_entries(tmp_path / "src", 0.01)) == 1  # at least one
    assert (tmp_path / "src" / "campaign.db").read_bytes() == before  # read-only


def test_missing_files_fall_back_or_are_skipped(tmp_path: Path) -> None:
    ids = fake_campaign(tmp_path / "src", 4)
    corpus = tmp_path / "src" / CORPUS_DIR
    (corpus / f"{ids[3]}.passes.json").unlink()  # the database's sequence ("[]") is used
    (corpus / f"{ids[2]}.py").unlink()  # no script: skipped
    late = imported_entries(tmp_path / "src", 0.5)
    assert [(e.script, e.passes) for e in late] == [("# script 3\n", "[]")]
    assert late[0].seed_id == entry_id("tir", "# script 3\n")


def test_errors_are_one_line(tmp_path: Path) -> None:
    with pytest.raises(CampaignError, match="cannot read the corpus"):
        imported_entries(tmp_path, 0.5)
    ids = fake_campaign(tmp_path / "src", 2)
    for sid in ids:
        (tmp_path / "src" / CORPUS_DIR / f"{sid}.py").unlink()
    with pytest.raises(CampaignError, match="no corpus entry to import"):
        imported_entries(tmp_path / "src", 1.0)
    with pytest.raises(CampaignError, match="late share"):
        imported_entries(tmp_path / "src", 0.0)
