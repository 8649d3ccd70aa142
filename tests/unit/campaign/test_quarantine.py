"""Corpus entries a campaign stops fuzzing (issue 45 row 4): one its workers keep dying on is
quarantined after :data:`QUARANTINE_DEATHS` deaths (before: the worker was restarted in a loop, 59
times a minute, and the campaign exited 0), and a resumed graph entry edited to name a file outside
the pool (``/etc/passwd``) is skipped with one line (before: the workers opened it and died on it).
Campaigns run the real loop on the fake worker (its ``EXIT`` line ends the worker as an uncaught
exception would); the graph entries are real :class:`GraphSeed` documents."""

from __future__ import annotations

from pathlib import Path

import pytest

from seedzer.campaign.quarantine import QUARANTINE_DEATHS, QUARANTINE_META, Quarantine
from seedzer.errors import CampaignError
from seedzer.kernel.sched.case import SchedPlan
from seedzer.levels.graph.entry import GraphSeed
from seedzer.passes.sched.items import plan_items
from seedzer.seed import passes_to_json
from seedzer.store.corpus import PASSES_SUFFIX, Corpus, CorpusEntry, EntryFault
from seedzer.store.db import CampaignDB
from tests.unit.campaign.test_loop_campaigns import by_symptom, campaign, events, query
from tests.unit.fake_gate import FakeGate

pytestmark = pytest.mark.usefixtures("restore_signals")


def _entry(seed_id: str, script: str = "a", level: str = "tir") -> CorpusEntry:
    return CorpusEntry(seed_id, script, "[]", "m.onnx", level=level)


def test_the_third_death_on_an_entry_quarantines_it_and_campaign_db_remembers(tmp_path: Path) -> None:
    db = CampaignDB(tmp_path / "campaign.db")
    corpus = Corpus(tmp_path / "corpus", db)
    for seed_id in ("e1", "e2"):
        corpus.add(_entry(seed_id), 0)
    said: list[str] = []
    quarantine = Quarantine(db, corpus, said.append)
    bad = corpus.by_id["e1"]
    assert [quarantine.death(bad, "exited with status 1") for _ in range(QUARANTINE_DEATHS)] == [False, False, True]
    assert "e1" in quarantine and [e.seed_id for e in corpus.entries] == ["e2"]
    assert [e.seed_id for e in corpus.levels["tir"]] == ["e2"] and "e1" in corpus.by_id
    assert said == [f"corpus entry e1 (tir, from m.onnx): quarantined, a worker died on it {QUARANTINE_DEATHS} "
                    "times (exited with status 1); it is not chosen again"]
    assert db.get_meta(QUARANTINE_META) == {"e1": quarantine.entries["e1"]}
    quarantine.check_left()  # e2 is left
    for _ in range(QUARANTINE_DEATHS):
        quarantine.death(corpus.by_id["e2"], "exited with status 1")
    with pytest.raises(CampaignError, match="cannot fuzz: every corpus entry is quarantined"):
        quarantine.check_left()
    db.close()


def test_a_graph_entry_must_name_a_model_of_the_pool(tmp_path: Path) -> None:
    model = tmp_path / "pool" / "m.onnx"
    model.parent.mkdir()
    model.write_bytes(b"model")
    (tmp_path / "link.onnx").symlink_to(model)
    db = CampaignDB(tmp_path / "campaign.db")
    check = Quarantine(db, Corpus(tmp_path / "corpus", db), print).entry_check([tmp_path / "pool" / "." / "m.onnx"])
    specs = (("x", "float32", (2,)),)
    assert check("graph", GraphSeed(str(model.resolve()), specs).to_text(), "[]") is None
    assert check("graph", GraphSeed(str(tmp_path / "link.onnx"), specs).to_text(), "[]") is None  # the same file
    refused = check("graph", GraphSeed("/etc/passwd", specs).to_text(), "[]")
    assert refused == EntryFault("names the model '/etc/passwd', which is not one of the campaign's pool models")
    assert check("graph", GraphSeed("m.onnx", specs).to_text(), "[]") is not None  # relative: not the pool's
    elsewhere = GraphSeed(str(tmp_path / "pool" / ".." / "pool" / "x.onnx"), specs).to_text()
    assert check("graph", elsewhere, "[]") is not None
    unreadable = check("graph", "{not json", "[]")
    assert unreadable is not None and unreadable.reason.startswith("not a graph seed document")
    assert not unreadable.in_sequence  # the document is the script file
    assert check("tir", "# any TVMScript", "[]") is None
    unknown = check("nonsense", "x", "[]")
    assert unknown is not None and unknown.reason.startswith("no level 'nonsense'")
    db.close()


def test_a_campaign_quarantines_the_entry_its_workers_die_on_and_fuzzes_the_rest(tmp_path: Path, pool: Path) -> None:
    out = tmp_path / "camp"
    c, probe = campaign(out, pool, ["a", "EXIT\nb"], FakeGate(by_symptom),
                        lambda c: bool(c.quarantine.entries) and c.stats.execs >= 20)
    stats = c.run()
    assert stats.execs >= 20 and stats.restarts == QUARANTINE_DEATHS
    assert any("quarantined, a worker died on it 3 times" in m for m in probe.messages), probe.messages
    assert [e["reason"] for e in events(out, "quarantine")] and len(c.quarantine.entries) == 1
    # resumed, the entry stays out: its worker dies no more
    c2, probe2 = campaign(out, pool, ["a", "EXIT\nb"], FakeGate(by_symptom), lambda c: c.stats.session_execs >= 10,
                          resume=True)
    assert c2.run().restarts == 0
    assert "1 corpus entry stays quarantined (campaign.db meta 'quarantined')" in probe2.messages


def test_a_campaign_whose_every_entry_kills_its_workers_stops_with_one_line(tmp_path: Path, pool: Path) -> None:
    """Before: restarts without end and exit status 0. After: a CampaignError (the CLI's exit status 2)."""
    c, _ = campaign(tmp_path / "camp", pool, ["EXIT\na"], FakeGate(by_symptom), lambda c: False)
    with pytest.raises(CampaignError, match=r"corpus: cannot fuzz: every corpus entry is quarantined \(1, e.g. a "
                                            r"worker died on it 3 times"):
        c.run()
    assert len(events(tmp_path / "camp", "worker_restart")) == QUARANTINE_DEATHS


def test_a_resumed_graph_entry_naming_a_file_outside_the_pool_is_skipped_with_one_line(tmp_path: Path,
                                                                                      pool: Path) -> None:
    out = tmp_path / "camp"
    c, _ = campaign(out, pool, ["a"], FakeGate(by_symptom), lambda c: c.stats.execs >= 3)
    c.run()
    model = next(pool.iterdir()).resolve()
    specs = (("x", "float32", (2,)),)
    good, bad = GraphSeed(str(model), specs).to_text(), GraphSeed("/etc/passwd", specs).to_text()
    db = CampaignDB(out / "campaign.db")
    for seed_id, text in (("g1", good), ("g2", bad)):  # g2's file then edited, as a user may
        Corpus(out / "corpus", db).add(_entry(seed_id, good, "graph"), 0)
        (out / "corpus" / f"{seed_id}.graph.json").write_text(text)
    db.close()
    c2, probe = campaign(out, pool, ["a"], FakeGate(by_symptom), lambda c: True, resume=True)
    c2.run()
    assert sorted(c2.corpus.by_id) == sorted([*c.corpus.by_id, "g1"])
    skipped = [m for m in probe.messages if m.startswith("warning: corpus entry g2 skipped")]
    assert skipped == [f"warning: corpus entry g2 skipped: {out / 'corpus' / 'g2.graph.json'}: names the model "
                       "'/etc/passwd', which is not one of the campaign's pool models"]
    assert [e["entry"] for e in events(out, "corpus_skipped")] == ["g2"]
    assert query(out / "campaign.db", "SELECT count(*) FROM corpus WHERE id = 'g2'") == [(1,)]  # kept on disk


def test_a_resumed_sched_entry_with_a_hand_edited_plan_is_skipped_naming_its_plan_file(tmp_path: Path,
                                                                                      pool: Path) -> None:
    """A schedule entry's plan is its sequence file (``<id>.passes.json``); the script beside it is the
    loader's PrimFunc. Before: the line named the script file (``<id>.sched.py``), which is not at fault."""
    out = tmp_path / "camp"
    c, _ = campaign(out, pool, ["a"], FakeGate(by_symptom), lambda c: c.stats.execs >= 3)
    c.run()
    script = (Path(__file__).resolve().parents[2] / "fixtures" / "seeds" / "matmul.py").read_text()
    db = CampaignDB(out / "campaign.db")
    Corpus(out / "corpus", db).add(_entry("s1", script, "sched"), 0)
    db.close()
    plan = out / "corpus" / f"s1{PASSES_SUFFIX}"
    edited = SchedPlan([[["GetSBlock", [], ["no_such_block", "main"], ["b0"]]], []])  # a block the PrimFunc lacks
    plan.write_text(passes_to_json(plan_items(edited)))
    c2, probe = campaign(out, pool, ["a"], FakeGate(by_symptom), lambda c: True, resume=True)
    c2.run()
    assert "s1" not in c2.corpus.by_id
    skipped = [m for m in probe.messages if m.startswith("warning: corpus entry s1 skipped")]
    assert len(skipped) == 1 and skipped[0].startswith(f"warning: corpus entry s1 skipped: {plan}: its schedule plan: ")
    assert "no block 'no_such_block'" in skipped[0] and "\n" not in skipped[0]


def test_a_campaign_none_of_whose_entries_can_be_fuzzed_cannot_be_resumed(tmp_path: Path, pool: Path) -> None:
    out = tmp_path / "camp"
    out.mkdir()
    db = CampaignDB(out / "campaign.db")
    db.set_meta("pool", str(pool.resolve()))
    Corpus(out / "corpus", db).add(_entry("g1", GraphSeed("/etc/passwd", ()).to_text(), "graph"), 0)
    db.close()
    for sub in ("findings", "logs"):
        (out / sub).mkdir()
    c, _ = campaign(out, pool, ["a"], FakeGate(by_symptom), lambda c: True, resume=True)
    with pytest.raises(CampaignError, match="none of the 1 corpus entries campaign.db records can be fuzzed "
                                            r"\(e\.g\. .*g1\.graph\.json: names the model '/etc/passwd'"):
        c.run()
