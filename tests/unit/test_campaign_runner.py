"""The campaign's choice of the next entry to mutate: worker affinity over the scheduler."""

from __future__ import annotations

import random
from collections import Counter
from types import SimpleNamespace

from seedzer.campaign.runner import Campaign
from seedzer.campaign.scheduler import UniformScheduler
from seedzer.store.corpus import CorpusEntry


def _entries() -> list[CorpusEntry]:
    made = [CorpusEntry(f"e{i}", "", "[]", "m", worker=i % 2) for i in range(20)]
    return [*made, CorpusEntry("restored", "", "[]", "m")]  # run by nobody known (after a resume)


def test_a_worker_mostly_gets_entries_it_ran_and_every_entry_is_still_chosen_alike() -> None:
    entries = _entries()
    host = SimpleNamespace(scheduler=UniformScheduler(), corpus=SimpleNamespace(entries=entries), rng=random.Random(7))
    picks = {w: Counter(Campaign._choose_for(host, w).seed_id for _ in range(8000)) for w in (0, 1)}  # type: ignore[arg-type]
    for w in (0, 1):
        own = sum(n for name, n in picks[w].items() if name != "restored" and int(name[1:]) % 2 == w)
        assert own / (8000 - picks[w]["restored"]) > 0.99  # another's entry: a parse (30-100 ms)
    both = picks[0] + picks[1]
    made = [both[e.seed_id] for e in entries if e.worker is not None]
    assert max(made) / min(made) < 1.3  # two alike workers: the scheduler's (uniform) weights overall
    assert both["restored"] > 0  # an entry no worker holds is anyone's
