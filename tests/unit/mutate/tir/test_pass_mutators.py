"""Pass-sequence mutators (TVM-free)."""

from __future__ import annotations

import random
import subprocess
import sys

import pytest

from seedzer.mutate.tir import MAX_LEN, MIN_LEN, default_pass_mutators, pick
from seedzer.mutate.tir.pass_mutators import Crossover, DeletePass, InsertPass, ReplacePass
from seedzer.passes.tir.catalog import PASS_NAMES, random_sequence
from seedzer.protocols import PassMutator
from seedzer.seed import PassSpec


def _seq(n: int, tag: str) -> list[PassSpec]:
    return [PassSpec("tirx.StmtSimplify", (("tag", f"{tag}{i}"),)) for i in range(n)]


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
            assert MIN_LEN <= len(out) <= MAX_LEN
            assert all(p.name in PASS_NAMES for p in out)


def test_insert_delete_replace_change_length_as_named() -> None:
    rng = random.Random(1)
    base = random_sequence(rng, 10, 10)
    assert len(InsertPass().mutate(base, rng)) > 10
    assert len(DeletePass().mutate(base, rng)) < 10
    replaced = ReplacePass().mutate(base, rng)
    assert len(replaced) == 10 and sum(a != b for a, b in zip(base, replaced, strict=True)) <= 1
    assert len(DeletePass().mutate(base[:1], rng)) == 1
    full = random_sequence(rng, MAX_LEN, MAX_LEN)
    assert len(InsertPass().mutate(full, rng)) == MAX_LEN


def test_crossover_mixes_both_parents() -> None:
    rng = random.Random(2)
    a, b = _seq(20, "a"), _seq(20, "b")
    mixed = 0
    for _ in range(100):
        out = Crossover().mutate(a, rng, other=b)
        tags = {dict(p.args)["tag"][0] for p in out}
        mixed += tags == {"a", "b"}
    assert mixed > 50
    alone = Crossover().mutate(a, rng)  # no partner: a random one is made up
    assert MIN_LEN <= len(alone) <= MAX_LEN


def test_mutators_only_insert_passes_with_a_contract_for_llvm() -> None:
    from seedzer.passes.tir.contracts import fuzzable

    rng = random.Random(5)
    allowed = set(fuzzable("llvm"))
    seq: list = []
    for _ in range(300):
        seq = pick(default_pass_mutators(), rng).mutate(seq, rng)
        assert {p.name for p in seq} <= allowed


def test_pass_side_is_tvm_free() -> None:
    code = (
        "import sys, random\n"
        "from seedzer.mutate.tir import default_pass_mutators, pick, validate_weights\n"
        "from seedzer.mutate.tir.schedule import TzerSchedule\n"
        "from seedzer.passes.tir.catalog import random_sequence\n"
        "from seedzer.passes.tir.contracts import plan\n"
        "r = random.Random(0)\n"
        "plan(pick(default_pass_mutators(), r).mutate(random_sequence(r), r))\n"
        "print(any(m == 'tvm' or m.startswith('tvm.') for m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
