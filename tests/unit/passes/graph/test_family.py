"""The Relax pass family: its mutators (the generic ones made with it) keep Relax sequences in contract,
within bounds, input untouched (TVM-free)."""

from __future__ import annotations

import itertools
import random

import pytest

from seedzer.mutate.sequence import Crossover, Delete, Insert, Options, Repeat, Replace, Swap, sequence_mutators
from seedzer.mutate.weighted import pick
from seedzer.passes.graph.catalog import RELAX_CATALOG
from seedzer.passes.graph.contracts import PIPELINE_ORDERS, out_of_contract
from seedzer.passes.graph.family import RELAX_FAMILY
from seedzer.protocols import PassMutator
from seedzer.seed import PassSpec

CHAIN = PIPELINE_ORDERS["default-legalize"]
MIN_LEN, MAX_LEN = RELAX_FAMILY.rules.min_len, RELAX_FAMILY.rules.max_len


def _random_in_contract(rng: random.Random, steps: int = 30) -> list[PassSpec]:
    seq: list[PassSpec] = []
    for _ in range(rng.randint(0, steps)):
        seq = Insert(RELAX_FAMILY).mutate(seq, rng)
    return seq


@pytest.mark.parametrize("mutator", sequence_mutators(RELAX_FAMILY), ids=lambda m: m.name)
def test_in_contract_within_bounds_and_input_untouched(mutator: PassMutator) -> None:
    assert isinstance(mutator, PassMutator)
    rng = random.Random(0)
    for _ in range(150):
        seq = _random_in_contract(rng)
        before = list(seq)
        out = mutator.mutate(seq, rng, other=_random_in_contract(rng))
        assert seq == before
        assert MIN_LEN <= len(out) <= MAX_LEN and RELAX_FAMILY.in_contract(out)
        assert out_of_contract(out) == [], (mutator.name, [p.label() for p in out])
        assert all(p.name in RELAX_CATALOG for p in out)


def test_each_mutator_does_what_its_name_says() -> None:
    rng = random.Random(1)
    assert len(Insert(RELAX_FAMILY).mutate([], rng)) >= 1
    assert len(Delete(RELAX_FAMILY).mutate(CHAIN, rng)) == 4
    repeated = Repeat(RELAX_FAMILY).mutate(CHAIN, rng)
    assert len(repeated) == 6 and any(a == b for a, b in itertools.pairwise(repeated))
    swapped = Swap(RELAX_FAMILY).mutate([*CHAIN, PassSpec("relax.DeadCodeElimination")], rng)
    assert sorted(p.name for p in swapped) == sorted([*(p.name for p in CHAIN), "relax.DeadCodeElimination"])
    replaced = Replace(RELAX_FAMILY).mutate(CHAIN, rng)
    assert len(replaced) == 5 and sum(a != b for a, b in zip(CHAIN, replaced, strict=True)) == 1
    fuse = [*CHAIN[:3], PassSpec("relax.FuseOps", (("fuse_opt_level", 0),)), CHAIN[4]]
    changed = [Options(RELAX_FAMILY).mutate(fuse, random.Random(s)) for s in range(10)]
    assert any(c[3] != fuse[3] for c in changed)
    for c in changed:  # only FuseOps and LegalizeOps take arguments here; one of them changes
        assert [p.name for p in c] == [p.name for p in fuse]
        assert sum(a != b for a, b in zip(c, fuse, strict=True)) <= 1
        assert c[1:3] == fuse[1:3] and c[4] == fuse[4]


def test_delete_never_strands_a_dependent_pass() -> None:
    rng = random.Random(2)
    for _ in range(50):
        out = Delete(RELAX_FAMILY).mutate(CHAIN, rng)
        assert out_of_contract(out) == []
        assert out != CHAIN
    # only FuseTIR or FoldConstant can go alone (removing the others strands a later pass)
    seen = {tuple(p.name for p in Delete(RELAX_FAMILY).mutate(CHAIN, random.Random(s))) for s in range(60)}
    assert all(len(s) == 4 for s in seen) and len(seen) == 2


def test_no_valid_edit_returns_the_input_and_out_of_contract_input_is_planned() -> None:
    rng = random.Random(3)
    assert Swap(RELAX_FAMILY).mutate([CHAIN[0]], rng) == [CHAIN[0]]
    assert Delete(RELAX_FAMILY).mutate([], rng) == []
    bad = [PassSpec("relax.FuseTIR"), PassSpec("relax.FoldConstant")]
    assert Swap(RELAX_FAMILY).mutate(bad, rng) == [PassSpec("relax.FoldConstant")]


def test_full_sequences_stay_bounded() -> None:
    rng = random.Random(4)
    full = [PassSpec("relax.FoldConstant")] * MAX_LEN
    assert Insert(RELAX_FAMILY).mutate(full, rng) == full  # no room: the family makes none, the input comes back
    assert len(Repeat(RELAX_FAMILY).mutate(full, rng)) == MAX_LEN
    assert len(Crossover(RELAX_FAMILY).mutate(full, rng, other=full)) <= MAX_LEN


def test_crossover_mixes_parents_and_needs_no_partner() -> None:
    rng = random.Random(5)
    a = [PassSpec("relax.FoldConstant")] * 6
    b = [PassSpec("relax.Normalize")] * 6
    mixed = sum({p.name for p in Crossover(RELAX_FAMILY).mutate(a, rng, other=b)} == {a[0].name, b[0].name}
                for _ in range(100))
    assert mixed > 40
    assert RELAX_FAMILY.in_contract(Crossover(RELAX_FAMILY).mutate(a, rng))


def test_random_walk_reaches_every_phase_and_stays_in_contract() -> None:
    rng = random.Random(6)
    mutators = sequence_mutators(RELAX_FAMILY)
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


def test_the_mutators_are_named_as_campaigns_recorded_them() -> None:
    mutators = sequence_mutators(RELAX_FAMILY)
    assert [m.name for m in mutators] == ["relax_insert", "relax_delete", "relax_repeat", "relax_swap",
                                          "relax_replace", "relax_options", "relax_crossover"]
    assert [m.weight for m in mutators] == [1.0] * 6 + [0.5]
    assert Crossover(RELAX_FAMILY, weight=2).weight == 2.0


def test_relax_steps_run_without_their_namespace() -> None:
    assert RELAX_FAMILY.ran_as("relax.FoldConstant") == "FoldConstant"
    assert RELAX_FAMILY.ran_as("mutate.SplitDataflow") == "mutate.SplitDataflow"
