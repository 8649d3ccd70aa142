"""Relax pass-sequence mutators (TVM-free): in contract, within bounds, input untouched."""

from __future__ import annotations

import itertools
import random

import pytest

from seedzer.mutate.graph.relax_pass_mutators import (
    MAX_LEN,
    MIN_LEN,
    RELAX_PASS_MUTATORS,
    DeleteRelaxPass,
    InsertRelaxPass,
    RelaxCrossover,
    RelaxPassOptions,
    RepeatRelaxPass,
    ReplaceRelaxPass,
    SwapRelaxPasses,
    default_relax_pass_mutators,
    in_contract,
)
from seedzer.mutate.tir import pick
from seedzer.passes.graph.catalog import RELAX_CATALOG
from seedzer.passes.graph.contracts import PIPELINE_ORDERS, out_of_contract
from seedzer.protocols import PassMutator
from seedzer.seed import PassSpec

CHAIN = PIPELINE_ORDERS["default-legalize"]


def _random_in_contract(rng: random.Random, steps: int = 30) -> list[PassSpec]:
    seq: list[PassSpec] = []
    for _ in range(rng.randint(0, steps)):
        seq = InsertRelaxPass().mutate(seq, rng)
    return seq


@pytest.mark.parametrize("mutator", default_relax_pass_mutators(), ids=lambda m: m.name)
def test_in_contract_within_bounds_and_input_untouched(mutator: PassMutator) -> None:
    assert isinstance(mutator, PassMutator)
    rng = random.Random(0)
    for _ in range(150):
        seq = _random_in_contract(rng)
        before = list(seq)
        out = mutator.mutate(seq, rng, other=_random_in_contract(rng))
        assert seq == before
        assert MIN_LEN <= len(out) <= MAX_LEN
        assert out_of_contract(out) == [], (mutator.name, [p.label() for p in out])
        assert all(p.name in RELAX_CATALOG for p in out)


def test_each_mutator_does_what_its_name_says() -> None:
    rng = random.Random(1)
    assert len(InsertRelaxPass().mutate([], rng)) >= 1
    assert len(DeleteRelaxPass().mutate(CHAIN, rng)) == 4
    repeated = RepeatRelaxPass().mutate(CHAIN, rng)
    assert len(repeated) == 6 and any(a == b for a, b in itertools.pairwise(repeated))
    swapped = SwapRelaxPasses().mutate([*CHAIN, PassSpec("relax.DeadCodeElimination")], rng)
    assert sorted(p.name for p in swapped) == sorted([*(p.name for p in CHAIN), "relax.DeadCodeElimination"])
    replaced = ReplaceRelaxPass().mutate(CHAIN, rng)
    assert len(replaced) == 5 and sum(a != b for a, b in zip(CHAIN, replaced, strict=True)) == 1
    fuse = [*CHAIN[:3], PassSpec("relax.FuseOps", (("fuse_opt_level", 0),)), CHAIN[4]]
    changed = [RelaxPassOptions().mutate(fuse, random.Random(s)) for s in range(10)]
    assert any(c[3] != fuse[3] for c in changed)
    for c in changed:  # only FuseOps and LegalizeOps take arguments here; one of them changes
        assert [p.name for p in c] == [p.name for p in fuse]
        assert sum(a != b for a, b in zip(c, fuse, strict=True)) <= 1
        assert c[1:3] == fuse[1:3] and c[4] == fuse[4]


def test_delete_never_strands_a_dependent_pass() -> None:
    rng = random.Random(2)
    for _ in range(50):
        out = DeleteRelaxPass().mutate(CHAIN, rng)
        assert out_of_contract(out) == []
        assert out != CHAIN
    # only FuseTIR or FoldConstant can go alone (removing the others strands a later pass)
    seen = {tuple(p.name for p in DeleteRelaxPass().mutate(CHAIN, random.Random(s))) for s in range(60)}
    assert all(len(s) == 4 for s in seen) and len(seen) == 2


def test_no_valid_edit_returns_the_input_and_out_of_contract_input_is_planned() -> None:
    rng = random.Random(3)
    assert SwapRelaxPasses().mutate([CHAIN[0]], rng) == [CHAIN[0]]
    assert DeleteRelaxPass().mutate([], rng) == []
    bad = [PassSpec("relax.FuseTIR"), PassSpec("relax.FoldConstant")]
    assert SwapRelaxPasses().mutate(bad, rng) == [PassSpec("relax.FoldConstant")]


def test_full_sequences_stay_bounded() -> None:
    rng = random.Random(4)
    full = [PassSpec("relax.FoldConstant")] * MAX_LEN
    assert len(InsertRelaxPass().mutate(full, rng)) == MAX_LEN
    assert len(RepeatRelaxPass().mutate(full, rng)) == MAX_LEN
    assert len(RelaxCrossover().mutate(full, rng, other=full)) <= MAX_LEN


def test_crossover_mixes_parents_and_needs_no_partner() -> None:
    rng = random.Random(5)
    a = [PassSpec("relax.FoldConstant")] * 6
    b = [PassSpec("relax.Normalize")] * 6
    mixed = sum({p.name for p in RelaxCrossover().mutate(a, rng, other=b)} == {a[0].name, b[0].name}
                for _ in range(100))
    assert mixed > 40
    assert in_contract(RelaxCrossover().mutate(a, rng))


def test_random_walk_reaches_every_phase_and_stays_in_contract() -> None:
    rng = random.Random(6)
    mutators = default_relax_pass_mutators()
    seq: list[PassSpec] = []
    names: set[str] = set()
    lengths = set()
    for _ in range(3000):
        seq = pick(mutators, rng).mutate(seq, rng, other=rng.choice(list(PIPELINE_ORDERS.values())))
        assert out_of_contract(seq) == []
        names |= {p.name for p in seq}
        lengths.add(len(seq))
    assert {"relax.FuseTIR", "relax.AnnotateTIROpPattern", "relax.ConvertLayout",
            "relax.RewriteDataflowReshape"} <= names
    assert len(names) >= 0.9 * len(RELAX_CATALOG)
    assert 0 in lengths or min(lengths) <= 2


def test_registry() -> None:
    assert set(RELAX_PASS_MUTATORS) == {m.name for m in default_relax_pass_mutators()}
    assert len(RELAX_PASS_MUTATORS) == 7
    assert RelaxCrossover(weight=2).weight == 2.0
