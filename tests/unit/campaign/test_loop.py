"""The campaign's choice of the next entry to mutate: a level by its weight, then worker affinity over
that level's scheduler."""

from __future__ import annotations

import random
from collections import Counter
from types import SimpleNamespace

from seedzer.campaign.loop import Campaign
from seedzer.campaign.scheduler import UniformScheduler
from seedzer.levels.graph.entry import GraphSeed
from seedzer.store.corpus import CorpusEntry

GRAPH = GraphSeed("/pool/m.onnx", (("x", "float32", (2,)),)).to_text()


def _entries() -> list[CorpusEntry]:
    made = [CorpusEntry(f"e{i}", "", "[]", "m", worker=i % 2, level="tir") for i in range(20)]
    return [*made, CorpusEntry("restored", "", "[]", "m", level="tir")]  # run by nobody known (after a resume)


def test_a_worker_mostly_gets_entries_it_ran_and_every_entry_is_still_chosen_alike() -> None:
    entries = _entries()
    host = SimpleNamespace(schedulers={"tir": UniformScheduler()}, corpus=SimpleNamespace(levels={"tir": entries}),
                           rng=random.Random(7))
    picks = {w: Counter(Campaign._choose_for(host, w, "tir").seed_id for _ in range(8000)) for w in (0, 1)}  # type: ignore[arg-type]
    for w in (0, 1):
        own = sum(n for name, n in picks[w].items() if name != "restored" and int(name[1:]) % 2 == w)
        assert own / (8000 - picks[w]["restored"]) > 0.99  # another's entry: a parse (30-100 ms)
    both = picks[0] + picks[1]
    made = [both[e.seed_id] for e in entries if e.worker is not None]
    assert max(made) / min(made) < 1.3  # two alike workers: the scheduler's (uniform) weights overall
    assert both["restored"] > 0  # an entry no worker holds is anyone's


def test_levels_are_drawn_by_weight_among_those_with_entries() -> None:
    levels = {"tir": _entries(), "graph": [CorpusEntry("g", GRAPH, "[]", "m", level="graph")]}
    host = SimpleNamespace(levels={"tir": 3.0, "graph": 1.0}, corpus=SimpleNamespace(levels=levels),
                           rng=random.Random(3))
    drawn = Counter(Campaign._level(host) for _ in range(4000))  # type: ignore[arg-type]
    assert 0.7 < drawn["tir"] / 4000 < 0.8
    host.corpus.levels = {"tir": levels["tir"]}  # a pool that gave no graph seed: the TIR level only
    assert {Campaign._level(host) for _ in range(100)} == {"tir"}  # type: ignore[arg-type]
    host.levels = {"graph": 1.0}
    assert Campaign._level(host) == "tir"  # nothing of the levels on: what the corpus has  # type: ignore[arg-type]
