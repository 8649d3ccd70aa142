"""What a worker runs next (:class:`seedzer.campaign.feeding.Feeder`): a pending seed first, else a mutant
of an entry chosen by a level's weight, then worker affinity over that level's scheduler, within limits
relative to its parent's cost."""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path
from types import SimpleNamespace

from seedzer.campaign.allocator import Allocator
from seedzer.campaign.feeding import Feeder
from seedzer.campaign.pending import PendingSeeds
from seedzer.campaign.scheduler import UniformScheduler
from seedzer.config import Config
from seedzer.execute.records import ExecTask, FuzzTask, Task, TestCaseInfo
from seedzer.kernel.common import Stage
from seedzer.levels.graph.entry import GraphSeed
from seedzer.store.corpus import Corpus, CorpusEntry
from seedzer.store.db import CampaignDB

GRAPH = GraphSeed("/pool/m.onnx", (("x", "float32", (2,)),)).to_text()


def _entries() -> list[CorpusEntry]:
    made = [CorpusEntry(f"e{i}", "", "[]", "m", worker=i % 2, level="tir") for i in range(20)]
    return [*made, CorpusEntry("restored", "", "[]", "m", level="tir")]  # run by nobody known (after a resume)


def _feeder(levels: dict[str, list[CorpusEntry]], seed: int, cfg: Config | None = None) -> Feeder:
    """A feeder over a corpus holding ``levels`` (only its entries by level are read)."""
    cfg = cfg or Config()
    corpus = SimpleNamespace(levels=levels, by_id={}, entries=[e for es in levels.values() for e in es])
    allocator = Allocator(cfg, {}, corpus, set, print)  # type: ignore[arg-type]
    return Feeder(cfg, corpus, PendingSeeds(), {}, random.Random(seed), allocator)  # type: ignore[arg-type]


def test_a_worker_mostly_gets_entries_it_ran_and_every_entry_is_still_chosen_alike() -> None:
    entries = _entries()
    feeder = _feeder({"tir": entries}, 7)
    feeder.schedulers = {"tir": UniformScheduler()}
    picks = {w: Counter(feeder.choose_for(w, "tir").seed_id for _ in range(8000)) for w in (0, 1)}
    for w in (0, 1):
        own = sum(n for name, n in picks[w].items() if name != "restored" and int(name[1:]) % 2 == w)
        assert own / (8000 - picks[w]["restored"]) > 0.99  # another's entry: a parse (30-100 ms)
    both = picks[0] + picks[1]
    made = [both[e.seed_id] for e in entries if e.worker is not None]
    assert max(made) / min(made) < 1.3  # two alike workers: the scheduler's (uniform) weights overall
    assert both["restored"] > 0  # an entry no worker holds is anyone's


def test_levels_are_drawn_by_weight_among_those_with_entries() -> None:
    levels = {"tir": _entries(), "graph": [CorpusEntry("g", GRAPH, "[]", "m", level="graph")]}
    feeder = _feeder(levels, 3)
    feeder.levels = {"tir": 3.0, "graph": 1.0}
    drawn = Counter(feeder.level() for _ in range(4000))
    assert 0.7 < drawn["tir"] / 4000 < 0.8
    feeder.corpus.levels = {"tir": levels["tir"]}  # a pool that gave no graph seed: the TIR level only
    assert {feeder.level() for _ in range(100)} == {"tir"}
    feeder.levels = {"graph": 1.0}
    assert feeder.level() == "tir"  # nothing of the levels on: what the corpus has


class Slot:
    """A worker with room: keeps what it is given."""

    def __init__(self, index: int) -> None:
        self.index = index
        self.given: list[tuple[Task, TestCaseInfo]] = []

    def submit(self, task: Task, info: TestCaseInfo) -> None:
        self.given.append((task, info))


def test_pending_seeds_run_first_then_mutants_of_chosen_entries(tmp_path: Path) -> None:
    db = CampaignDB(tmp_path / "campaign.db")
    corpus, pending = Corpus(tmp_path / "corpus", db), PendingSeeds()
    seed = CorpusEntry("s1", "a", "[]", "m.onnx", level="tir")
    corpus.add(seed, 0)
    pending.append(seed)
    cfg = Config()
    cfg.timeouts.relative, cfg.timeouts.floor, cfg.timeouts.hang_share = 4.0, 0.5, 0.0
    allocator = Allocator(cfg, {}, corpus, set, print)
    feeder = Feeder(cfg, corpus, pending, {Stage.PASS: 30.0, Stage.RUN: 1.0}, random.Random(5), allocator)
    slot = Slot(0)
    feeder.feed(slot)
    task, info = slot.given[0]
    assert isinstance(task, ExecTask) and (info.tc_id, info.task, info.parent) == (1, "exec", "s1")
    feeder.feed(slot)  # the line is empty: a mutant of the only entry, limits of a parent not measured yet
    task, info = slot.given[1]
    assert isinstance(task, FuzzTask) and task.script == "a" and info.task == "fuzz" and info.limits is None
    assert seed.chosen == 1
    seed.cost = 2.0
    feeder.feed(slot)  # measured: 4 x its cost, within each stage's own limit
    assert slot.given[2][1].limits == {Stage.PASS: 8.0, Stage.RUN: 1.0} and feeder.tc_counter == 3
    db.close()
