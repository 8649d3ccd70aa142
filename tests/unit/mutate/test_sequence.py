"""The generic sequence mutators over a tiny real family: the echo level's passes, whose ``Close`` is in
contract only after an ``Open`` it closes (TVM-free)."""

from __future__ import annotations

import dataclasses
import random
from collections import Counter

import pytest

from seedzer.errors import ConfigError
from seedzer.mutate.sequence import (
    OPERATIONS,
    Crossover,
    Delete,
    Insert,
    Options,
    Repeat,
    Replace,
    SequenceMutator,
    Swap,
    mutator_names,
    sequence_mutators,
)
from seedzer.mutate.weighted import pick
from seedzer.protocols import PassMutator
from seedzer.seed import PassSpec
from tests.unit.levels.echo_level import CLOSE, ECHO_FAMILY, OPEN, EchoFamily

RULES = ECHO_FAMILY.rules
UPPER, REVERSE = PassSpec("echo.Upper"), PassSpec("echo.Reverse")
BRACKET = [PassSpec(OPEN), UPPER, PassSpec(CLOSE)]


def _walk(rng: random.Random, steps: int) -> list[PassSpec]:
    seq: list[PassSpec] = []
    for _ in range(rng.randint(0, steps)):
        seq = Insert(ECHO_FAMILY).mutate(seq, rng)
    return seq


def test_a_family_names_its_mutators_and_their_order() -> None:
    mutators = sequence_mutators(ECHO_FAMILY)
    assert [m.name for m in mutators] == list(mutator_names(ECHO_FAMILY)) == [f"echo_{op}" for op in RULES.operations]
    assert all(isinstance(m, PassMutator) for m in mutators) and set(RULES.operations) == set(OPERATIONS)
    assert [m.weight for m in mutators] == [0.5 if op == "crossover" else 1.0 for op in RULES.operations]
    assert {m.name: m.weight for m in sequence_mutators(ECHO_FAMILY, {"echo_swap": 3})}["echo_swap"] == 3.0
    with pytest.raises(ConfigError, match=r"unknown pass mutator.*echo_shuffle"):
        sequence_mutators(ECHO_FAMILY, {"echo_shuffle": 1.0})


@pytest.mark.parametrize("operation", RULES.operations)
def test_every_mutator_stays_in_bounds_and_in_contract_and_leaves_its_input(operation: str) -> None:
    mutator = OPERATIONS[operation](ECHO_FAMILY)
    rng = random.Random(0)
    changed = 0
    for _ in range(300):
        seq = _walk(rng, 8)
        before = list(seq)
        out = mutator.mutate(seq, rng, other=_walk(rng, 8) or None)
        assert seq == before
        assert RULES.min_len <= len(out) <= RULES.max_len and ECHO_FAMILY.in_contract(out), [p.label() for p in out]
        changed += out != seq
    assert changed > 30, operation


def test_insert_goes_only_where_the_contract_allows_and_puts_in_bracketed_runs() -> None:
    rng = random.Random(1)
    runs = 0
    for _ in range(400):
        out = Insert(ECHO_FAMILY).mutate([UPPER], rng)
        runs += len(out) == 4
        assert ECHO_FAMILY.in_contract(out) and UPPER in out
    assert abs(runs / 400 - RULES.run_share) < 0.07
    full = [UPPER] * RULES.max_len
    assert len(Insert(ECHO_FAMILY).mutate(full, rng)) == RULES.max_len  # the family makes room


def test_delete_never_strands_a_close_and_keeps_the_minimum() -> None:
    seen = {tuple(p.name for p in Delete(ECHO_FAMILY).mutate(BRACKET, random.Random(s))) for s in range(80)}
    assert (OPEN, CLOSE) in seen and (OPEN, "echo.Upper") in seen
    assert all(ECHO_FAMILY.in_contract([PassSpec(n) for n in s]) for s in seen)  # never (Upper, Close)
    assert Delete(ECHO_FAMILY).mutate([], random.Random(0)) == []

    class AtLeastOne(EchoFamily):
        rules = dataclasses.replace(EchoFamily.rules, min_len=1)

    one = Delete(AtLeastOne()).mutate([UPPER], random.Random(0))
    assert len(one) == 1  # at the minimum the last item goes and a fresh one tops the sequence up


def test_replace_puts_another_item_where_its_contract_allows() -> None:
    for seed in range(100):
        out = Replace(ECHO_FAMILY).mutate(BRACKET, random.Random(seed))
        changed = [k for k in range(3) if out[k] != BRACKET[k]]
        assert len(changed) == 1 and out[changed[0]].name != BRACKET[changed[0]].name
        assert ECHO_FAMILY.in_contract(out)
    assert Replace(ECHO_FAMILY).mutate([], random.Random(0)) == []


def test_repeat_swap_and_options() -> None:
    rng = random.Random(2)
    repeated = Repeat(ECHO_FAMILY).mutate([UPPER, REVERSE], rng)
    assert len(repeated) == 3 and repeated.count(UPPER) + repeated.count(REVERSE) == 3
    swapped = Swap(ECHO_FAMILY).mutate([UPPER, REVERSE], rng)
    assert swapped == [REVERSE, UPPER]
    assert Swap(ECHO_FAMILY).mutate([PassSpec(OPEN), PassSpec(CLOSE)], rng) == [PassSpec(OPEN), PassSpec(CLOSE)]
    marked = [UPPER, PassSpec("echo.Mark", (("mark", "#"),))]
    assert Options(ECHO_FAMILY).mutate(marked, rng) != marked  # only Mark takes an argument
    assert Options(ECHO_FAMILY).mutate([UPPER], rng) == [UPPER]  # none to resample: the input back


def test_crossover_with_a_partner_or_the_familys_own() -> None:
    rng = random.Random(3)
    a, b = [UPPER] * 5, [REVERSE] * 5
    mixed = sum({p.name for p in Crossover(ECHO_FAMILY).mutate(a, rng, other=b)} == {UPPER.name, REVERSE.name}
                for _ in range(100))
    assert mixed > 40
    children = [Crossover(ECHO_FAMILY).mutate([REVERSE], rng) for _ in range(100)]
    alone = Counter(p.name for child in children for p in child)
    assert alone[OPEN] >= alone[CLOSE] > 0 and alone["echo.Upper"] > 0  # from the family's partner
    assert all(ECHO_FAMILY.in_contract(child) for child in children)  # never a Close without its Open


def test_an_input_out_of_contract_comes_back_as_what_the_family_applies() -> None:
    stranded = [PassSpec(CLOSE), UPPER]
    assert Swap(ECHO_FAMILY).mutate([PassSpec(CLOSE)], random.Random(0)) == []
    assert ECHO_FAMILY.in_contract(Repeat(ECHO_FAMILY).mutate(stranded, random.Random(0)))


def test_new_items_prefer_those_the_entry_has_not_triggered() -> None:
    rng = random.Random(4)
    triggered = {"Upper", "Mark", "Open", "Close"}  # as they ran: the family's ran_as
    drawn = Counter(p.name for _ in range(800) for p in Insert(ECHO_FAMILY).mutate([], rng, None, triggered)
                    if p.name not in (OPEN, CLOSE))
    assert drawn["echo.Reverse"] / sum(drawn.values()) > 0.7


def test_a_weighted_pick_over_a_familys_mutators() -> None:
    mutators: list[SequenceMutator] = sequence_mutators(ECHO_FAMILY, {"echo_insert": 0})
    picked = Counter(pick(mutators, random.Random(s)).name for s in range(500))
    assert "echo_insert" not in picked and len(picked) == len(RULES.operations) - 1
