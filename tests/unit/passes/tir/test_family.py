"""The TIR pass family: its mutators (the generic ones made with it) keep TIR sequences in bounds and
put in only passes with a contract for llvm, with Tzer's shapes of edit (TVM-free)."""

from __future__ import annotations

import random
import subprocess
import sys
from collections import Counter

import pytest

from seedzer.mutate.sequence import Crossover, Delete, Insert, Replace, sequence_mutators
from seedzer.mutate.tir import default_pass_mutators
from seedzer.mutate.weighted import pick
from seedzer.passes.tir.catalog import PASS_NAMES, random_sequence
from seedzer.passes.tir.family import FUZZABLE, TIR_FAMILY
from seedzer.protocols import PassMutator
from seedzer.seed import PassSpec

RULES = TIR_FAMILY.rules


def _seq(n: int, tag: str) -> list[PassSpec]:
    return [PassSpec("tirx.StmtSimplify", (("tag", f"{tag}{i}"),)) for i in range(n)]


def test_the_mutators_are_named_as_campaigns_recorded_them() -> None:
    assert [m.name for m in default_pass_mutators()] == ["pass_insert", "pass_delete", "pass_replace",
                                                         "pass_crossover"]
    assert [m.weight for m in default_pass_mutators()] == [1.0, 1.0, 1.0, 0.5]


@pytest.mark.parametrize("mutator", default_pass_mutators(), ids=lambda m: m.name)
def test_length_bounds_and_input_untouched(mutator: PassMutator) -> None:
    assert isinstance(mutator, PassMutator)
    rng = random.Random(0)
    for n in (1, 2, 25, 49, 50):
        for _ in range(40):
            seq = random_sequence(rng, n, n)
            before = list(seq)
            out = mutator.mutate(seq, rng, other=random_sequence(rng))
            assert seq == before
            assert RULES.min_len <= len(out) <= RULES.max_len
            assert all(p.name in PASS_NAMES for p in out)


def test_insert_delete_replace_change_length_as_named() -> None:
    rng = random.Random(1)
    base = random_sequence(rng, 10, 10)
    assert len(Insert(TIR_FAMILY).mutate(base, rng)) > 10
    assert len(Delete(TIR_FAMILY).mutate(base, rng)) < 10
    replaced = Replace(TIR_FAMILY).mutate(base, rng)
    assert len(replaced) == 10 and sum(a != b for a, b in zip(base, replaced, strict=True)) <= 1
    assert len(Delete(TIR_FAMILY).mutate(base[:1], rng)) == 1  # never empty: a fresh pass instead
    assert len(Replace(TIR_FAMILY).mutate([], rng)) == 1
    full = random_sequence(rng, RULES.max_len, RULES.max_len)
    assert len(Insert(TIR_FAMILY).mutate(full, rng)) == RULES.max_len  # a random pass made room


def test_crossover_mixes_both_parents() -> None:
    rng = random.Random(2)
    a, b = _seq(20, "a"), _seq(20, "b")
    mixed = 0
    for _ in range(100):
        out = Crossover(TIR_FAMILY).mutate(a, rng, other=b)
        tags = {dict(p.args)["tag"][0] for p in out}
        mixed += tags == {"a", "b"}
    assert mixed > 50
    alone = Crossover(TIR_FAMILY).mutate(a, rng)  # no partner: a random one is made up
    assert RULES.min_len <= len(alone) <= RULES.max_len


def test_insert_puts_in_a_run_a_quarter_of_the_time_anywhere() -> None:
    """Tzer's insertion: one fresh pass, or one time in four a run of one to five, at a uniform position
    (the draws of the generic mutator come in another order than the old TIR module's; these shares
    are the same: docs/measurements.md, 'Pass families')."""
    base = _seq(9, "a")
    runs, positions = Counter(), Counter()
    for seed in range(4000):
        out = Insert(TIR_FAMILY).mutate(base, random.Random(seed))
        fresh = [k for k, p in enumerate(out) if p not in base]
        runs[len(fresh)] += 1
        positions[fresh[0]] += 1
    assert abs(runs[1] / 4000 - (0.75 + 0.25 / 5)) < 0.03
    assert {2, 3, 4, 5} <= set(runs) and max(runs) == 5
    assert set(positions) == set(range(10)) and max(positions.values()) < 2 * min(positions.values())


def test_replace_resamples_the_arguments_three_times_in_ten() -> None:
    base = [PassSpec("tirx.UnrollLoop", (("tag", i),)) for i in range(6)]
    same = sum(p.name == "tirx.UnrollLoop" and p not in base
               for seed in range(3000) for p in Replace(TIR_FAMILY).mutate(base, random.Random(seed)))
    assert abs(same / 3000 - RULES.resample_share) < 0.03


def test_mutators_only_insert_passes_with_a_contract_for_llvm() -> None:
    from seedzer.passes.tir.contracts import fuzzable

    rng = random.Random(5)
    allowed = set(fuzzable("llvm"))
    assert set(FUZZABLE) == allowed
    seq: list = []
    for _ in range(300):
        seq = pick(default_pass_mutators(), rng).mutate(seq, rng)
        assert {p.name for p in seq} <= allowed


def test_weights_override_the_defaults_by_name() -> None:
    muts = {m.name: m.weight for m in sequence_mutators(TIR_FAMILY, {"pass_insert": 3})}
    assert muts == {"pass_insert": 3.0, "pass_delete": 1.0, "pass_replace": 1.0, "pass_crossover": 0.5}


def test_pass_side_is_tvm_free() -> None:
    code = (
        "import sys, random\n"
        "from seedzer.mutate.tir import default_pass_mutators, validate_weights\n"
        "from seedzer.mutate.weighted import pick\n"
        "from seedzer.mutate.tir.schedule import TzerSchedule\n"
        "from seedzer.passes.tir.catalog import random_sequence\n"
        "from seedzer.passes.tir.contracts import plan\n"
        "r = random.Random(0)\n"
        "plan(pick(default_pass_mutators(), r).mutate(random_sequence(r), r))\n"
        "print(any(m == 'tvm' or m.startswith('tvm.') for m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
