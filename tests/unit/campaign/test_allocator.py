"""The campaign's allocation at work (:class:`seedzer.campaign.allocator.Allocator`): rewards of test cases,
credit of roots new to the ledger, entry energy, mutation factors, and the state across --resume."""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path
from types import SimpleNamespace

from seedzer.campaign.allocation import LEVELS, MODELS, mutation_group
from seedzer.campaign.allocator import Allocator
from seedzer.campaign.feeding import Feeder
from seedzer.campaign.pending import PendingSeeds
from seedzer.campaign.scheduler import UniformScheduler
from seedzer.config import Config
from seedzer.execute.records import TestCaseInfo
from seedzer.finding.meta import FindingMeta
from seedzer.kernel.common import Observation, Stage, Symptom
from seedzer.store.allocation_rows import STATE_META
from seedzer.store.corpus import Corpus, CorpusEntry
from seedzer.store.db import CampaignDB
from seedzer.store.reader import CampaignReader


def _corpus(tmp_path: Path) -> tuple[CampaignDB, Corpus]:
    db = CampaignDB(tmp_path / "campaign.db")
    corpus = Corpus(tmp_path / "corpus", db)
    for i, model in enumerate(("a.onnx", "a.onnx", "b.onnx")):
        corpus.add(CorpusEntry(f"e{i}", f"s{i}", "[]", model, level="tir"), 0)
    return db, corpus


def _meta(root: str, kind: str = "tir", parent: str = "e0", mutators: tuple[str, ...] = ("flip",)) -> FindingMeta:
    observation = Observation(Symptom.EXCEPTION, Stage.PASS, "p", "x")
    return FindingMeta(signature="f" + root, kind=kind, observation=observation, verdict="bug", root_signature=root,
                       parent=parent, mutators=list(mutators))


def _allocator(cfg: Config, corpus: Corpus, known: set[str] | None = None) -> tuple[Allocator, list[str]]:
    said: list[str] = []
    mutations = {"tir": ("flip", "pass_insert"), "graph": ("model_insert",)}
    return Allocator(cfg, mutations, corpus, lambda: set(known or ()), said.append), said


def test_a_root_new_to_the_ledger_is_credited_once_and_a_known_one_never(tmp_path: Path) -> None:
    db, corpus = _corpus(tmp_path)
    allocator, _ = _allocator(Config(), corpus, known={"old"})
    assert allocator.filed(_meta("r1"))
    assert not allocator.filed(_meta("r1"))  # once per root
    assert not allocator.filed(_meta("old"))  # the ledger held it: no reward
    assert allocator.seen_before == 1
    rows = {(r.group, r.arm): r for r in allocator.rows()}
    assert rows[(LEVELS, "tir")].roots == 1 and rows[(mutation_group("tir"), "flip")].roots == 1
    assert rows[(MODELS, "a.onnx")].roots == 1
    db.close()


def test_a_pool_models_loading_failure_credits_its_model_only(tmp_path: Path) -> None:
    db, corpus = _corpus(tmp_path)
    allocator, _ = _allocator(Config(), corpus)
    meta = _meta("r2", kind="load", parent="")
    meta.origin = "/pool/b.onnx"
    assert allocator.filed(meta)
    rows = {(r.group, r.arm): r for r in allocator.rows()}
    assert (LEVELS, "load") not in rows and rows[(MODELS, "b.onnx")].roots == 1
    db.close()


def test_fixed_weights_send_no_mutation_factors_and_adaptive_ones_follow_the_yield(tmp_path: Path) -> None:
    db, corpus = _corpus(tmp_path)
    cfg = Config()
    cfg.allocation.adaptive = False
    fixed, _ = _allocator(cfg, corpus)
    adaptive, _ = _allocator(Config(), corpus)
    for allocator in (fixed, adaptive):
        assert allocator.mutation_factors("tir") == ()  # nothing learned yet: the configured weights
        for i in range(200):
            tc = TestCaseInfo(i, "fuzz", "e0", "tir", mutators=["flip" if i % 2 else "pass_insert"])
            allocator.ran(tc, 0.5, 50 if i % 2 else 0, 0)
    assert fixed.mutation_factors("tir") == ()
    factors = dict(adaptive.mutation_factors("tir"))
    assert factors["flip"] > 1.0 > factors["pass_insert"]
    db.close()


def test_an_entry_that_keeps_rehitting_filed_roots_is_chosen_less(tmp_path: Path) -> None:
    db, corpus = _corpus(tmp_path)
    allocator, _ = _allocator(Config(), corpus)
    for i in range(10):
        allocator.ran(TestCaseInfo(i, "fuzz", "e1", "tir", mutators=["flip"]), 0.1, 0, 0, repeat=True)
    cfg = Config()
    feeder = Feeder(cfg, corpus, PendingSeeds(), {}, random.Random(4), allocator)
    feeder.schedulers = {"tir": UniformScheduler()}
    picks = Counter(feeder.choose_for(0, "tir").seed_id for _ in range(3000))
    assert picks["e1"] * 4 < picks["e0"] and picks["e1"] > 0  # tired, not starved
    db.close()


def test_the_state_survives_a_resume_and_a_corrupt_one_starts_over_in_one_line(tmp_path: Path) -> None:
    db, corpus = _corpus(tmp_path)
    allocator, _ = _allocator(Config(), corpus)
    for i in range(50):
        allocator.ran(TestCaseInfo(i, "fuzz", "e2", "tir", mutators=["flip"]), 1.0, 10, 1)
    allocator.filed(_meta("r3", parent="e2"))
    allocator.save(db, 12.5)
    resumed, said = _allocator(Config(), corpus)
    resumed.restore(db)
    assert resumed.rows() == allocator.rows() and said == []
    with CampaignReader.open(tmp_path / "campaign.db") as reader:
        snapshots = reader.allocation()
    assert [s.time for s in snapshots] == [12.5] and set(snapshots[0].arms) == set(allocator.rows())
    db.set_meta(STATE_META, {"version": 1, "groups": {"level": "garbage"}})
    fresh, said = _allocator(Config(), corpus)
    fresh.restore(db)
    assert len(said) == 1 and "corrupt" in said[0] and "configured weights" in said[0]
    db.conn.execute("DELETE FROM meta WHERE key = ?", (STATE_META,))
    empty, said = _allocator(Config(), corpus)
    empty.restore(db)
    assert len(said) == 1 and "no saved state" in said[0]
    db.close()


def test_levels_are_drawn_by_the_allocations_weights(tmp_path: Path) -> None:
    db, corpus = _corpus(tmp_path)
    corpus.add(CorpusEntry("g0", "{}", "[]", "a.onnx", level="graph"), 0)
    allocator, _ = _allocator(Config(), corpus)
    for i in range(400):  # the graph level yields, the TIR level does not
        level = "graph" if i % 4 == 0 else "tir"
        allocator.ran(TestCaseInfo(i, "fuzz", "g0" if level == "graph" else "e0", level), 1.0,
                      100 if level == "graph" else 0, 0)
    feeder = Feeder(Config(), SimpleNamespace(levels=corpus.levels, by_id=corpus.by_id, entries=corpus.entries),  # type: ignore[arg-type]
                    PendingSeeds(), {}, random.Random(2), allocator)
    drawn = Counter(feeder.level() for _ in range(2000))
    assert drawn["graph"] > drawn["tir"]  # configured 1:3, adapted to the yield
    db.close()
