"""Inserted passes prefer those the entry has not triggered (TVM-free); without triggers, today's draws."""

from __future__ import annotations

import random
from collections import Counter

from seedzer.mutate.sequence import Insert
from seedzer.mutate.untriggered import UNTRIGGERED_SHARE, insertion_names, untriggered
from seedzer.passes.family import PassFamily
from seedzer.passes.graph.catalog import RELAX_PASS_NAMES
from seedzer.passes.graph.family import RELAX_FAMILY
from seedzer.passes.tir.family import FUZZABLE, TIR_FAMILY
from seedzer.seed import PassSpec


def test_untriggered_candidates_match_names_as_the_passes_ran() -> None:
    relax = RELAX_FAMILY.ran_as
    assert untriggered(["relax.FoldConstant", "relax.FuseOps"], {"FoldConstant"}, relax) == ["relax.FuseOps"]
    assert untriggered(["relax.FoldConstant", "relax.FuseOps"], {"FoldConstant"}) == ["relax.FoldConstant",
                                                                                     "relax.FuseOps"]
    tir = TIR_FAMILY.ran_as
    assert untriggered(["tirx.Simplify", "tirx.RemoveNoOp"], {"tirx.Simplify"}, tir) == ["tirx.RemoveNoOp"]


def test_insertion_names_draw_among_untriggered_at_the_configured_share() -> None:
    rng = random.Random(3)
    picks = [insertion_names(["a", "b", "c"], {"a"}, rng) for _ in range(4000)]
    share = sum(p == ["b", "c"] for p in picks) / len(picks)
    assert abs(share - UNTRIGGERED_SHARE) < 0.03 and all(p in (None, ["b", "c"]) for p in picks)
    assert insertion_names(["a"], {"a"}, rng) is None  # every candidate triggered: any
    before = random.Random(5)
    assert insertion_names(["a"], (), before) is None and before.random() == random.Random(5).random()  # no draw


def _inserted(family: PassFamily, triggered: tuple[str, ...], start: list[PassSpec]) -> Counter[str]:
    rng = random.Random(11)
    mutator = Insert(family)
    seen: Counter[str] = Counter()
    for _ in range(600):
        out = mutator.mutate(list(start), rng, None, triggered)
        seen.update(p.name for p in out if p not in start)
    return seen


def test_insert_prefers_passes_the_entry_has_not_triggered_at_both_levels() -> None:
    tir = _inserted(TIR_FAMILY, tuple(FUZZABLE[1:]), [PassSpec(FUZZABLE[1], ())])
    assert tir[FUZZABLE[0]] / sum(tir.values()) > UNTRIGGERED_SHARE - 0.05  # the one pass never triggered
    names = [n for n in RELAX_PASS_NAMES if n != "relax.FoldConstant"]
    relax = _inserted(RELAX_FAMILY, tuple(RELAX_FAMILY.ran_as(n) for n in names), [])
    assert relax["relax.FoldConstant"] / sum(relax.values()) > 0.5
    assert _inserted(RELAX_FAMILY, (), [])["relax.FoldConstant"] / sum(relax.values()) < 0.3

