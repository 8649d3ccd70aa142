"""The UB gate (``seedzer.tir.ub``): for each rule a (parent, mutant) pair it must reject with the
right reason and a legitimate one it must accept; the mutators' own avoidance; and a fuzz run that
builds and runs accepted mutants to check they stay NaN/Inf-free."""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest

tvm = pytest.importorskip("tvm")
from tvm import tirx  # noqa: E402

from seedzer.mutate.tir import MutationStats, default_ir_mutators, mutate_ir  # noqa: E402
from seedzer.mutate.tir.base import replace_site  # noqa: E402
from seedzer.mutate.tir.ir_mutators import UNARY_MATH, Flipper, Insertor  # noqa: E402
from seedzer.tir import ub  # noqa: E402
from seedzer.tir.exprgen import safe_math  # noqa: E402
from seedzer.tir.nodes import analyze  # noqa: E402
from seedzer.tir.wellformed import check_well_formed  # noqa: E402
from tests.unit.tir.test_fixtures import load_seeds  # noqa: E402

SEEDS = load_seeds()

ONE_BLOCK = """
@T.prim_func(s_tir=True)
def main(x: T.Buffer((T.int64(8),), "float32"), x2: T.Buffer((T.int64(8),), "float32"),
         y: T.Buffer((T.int64(8),), "float32")):
    for i in range(T.int64(8)):
        with T.sblock("B"):
            vi = T.axis.remap("S", [i])
            T.reads(x[vi], x2[vi])
            T.writes(y[vi])
            {body}
"""

TWO_BLOCKS = """
@T.prim_func(s_tir=True)
def main(x: T.Buffer((T.int64(8),), "float32"), y: T.Buffer((T.int64(8),), "float32")):
    tmp = T.sblock_alloc_buffer((T.int64(8),))
    for i in range(T.int64(8)):
        with T.sblock("A"):
            vi = T.axis.remap("S", [i])
            T.reads(x[vi])
            T.writes(tmp[vi])
            {a}
    for i in range(T.int64(8)):
        with T.sblock("B"):
            vi = T.axis.remap("S", [i])
            T.reads(tmp[vi], x[vi])
            T.writes(y[vi])
            {b}
"""

REDUCE = """
@T.prim_func(s_tir=True)
def main(x: T.Buffer((T.int64(2), T.int64(7)), "float32"), y: T.Buffer((T.int64(2), T.int64(7)), "float32")):
    mx = T.sblock_alloc_buffer((T.int64(2),))
    for i, k in T.grid(T.int64(2), T.int64(7)):
        with T.sblock("max"):
            vi, vk = T.axis.remap("SR", [i, k])
            T.reads(x[vi, vk])
            T.writes(mx[vi])
            with T.init():
                {init}
            {update}
    for i, j in T.grid(T.int64(2), T.int64(7)):
        with T.sblock("exp"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.reads(x[vi, vj], mx[vi])
            T.writes(y[vi, vj])
            y[vi, vj] = T.exp(x[vi, vj] - mx[vi])
"""
MAX_INIT = "mx[vi] = T.float32(-3.4028234663852886e38)"
MAX_UPDATE = "mx[vi] = T.max(mx[vi], x[vi, vk])"


def one(body: str) -> Any:
    return tvm.script.from_source(ONE_BLOCK.format(body=body.replace("\n", "\n            ")))


def two(a: str, b: str) -> Any:
    indent = "\n            "
    return tvm.script.from_source(TWO_BLOCKS.format(a=a.replace("\n", indent), b=b.replace("\n", indent)))


def reduce(init: str = MAX_INIT, update: str = MAX_UPDATE) -> Any:
    return tvm.script.from_source(REDUCE.format(init=init, update=update.replace("\n", "\n            ")))


def rejected(mutant: Any, parent: Any, *words: str) -> str:
    reason = ub.check(mutant, parent)
    assert reason is not None and reason.startswith("ub: "), f"accepted: {mutant.script()}"
    assert all(w in reason for w in words), reason
    return reason


def accepted(mutant: Any, parent: Any) -> None:
    assert ub.check(mutant, parent) is None, ub.check(mutant, parent)


# -- rule 1: no division by a range holding zero -------------------------------------------------


def test_flipping_add_into_division_by_floor_is_rejected() -> None:
    """The real false alarm: x + floor(x) flipped into x / floor(x) (0/0 for x = 0)."""
    parent = one("y[vi] = x[vi] + T.floor(x[vi])")
    rejected(one("y[vi] = x[vi] / T.floor(x[vi])"), parent, "float division by possibly-zero", "T.floor")


def test_division_by_an_input_or_a_nilized_sum_is_rejected() -> None:
    parent = one("y[vi] = x[vi] + x2[vi]")
    rejected(one("y[vi] = x[vi] / x2[vi]"), parent, "division by possibly-zero")
    softmax = SEEDS["softmax"]
    a = analyze(softmax)
    sums = [s for s in a.expr_sites() if isinstance(s.parent, tirx.Add) and "expsum" in str(s.store_buffer)]
    site = next(s for s in sums if s.role == "b")
    nilized = replace_site(a, site.path, tirx.const(0.0, "float32"))  # expsum + 0 stays 0: exp / 0
    rejected(nilized, softmax, "division by possibly-zero", "T_softmax_expsum")


def test_divisors_proven_nonzero_or_the_parents_own_are_accepted() -> None:
    parent = one("y[vi] = x[vi] + x2[vi]")
    accepted(one('y[vi] = x[vi] / T.Cast("float32", vi + T.int64(1))'), parent)  # i + 1 with i in [0, 8)
    accepted(one("y[vi] = x[vi] / (T.exp(x2[vi]) + T.float32(0.5))"), parent)
    accepted(one("y[vi] = x[vi] / T.float32(1e-3)"), parent)
    # the seed's own division by a sum it cannot prove nonzero stays accepted when something else changes
    own = one("y[vi] = x[vi] / (x[vi] + x2[vi])")
    accepted(one("y[vi] = x[vi] / (x[vi] + x2[vi]) * T.float32(2)"), own)
    # softmax divides by a sum of exponentials: proven positive, so a mutant keeping it is accepted
    accepted(SEEDS["softmax"], SEEDS["softmax"])
    assert ub.facts_of(SEEDS["softmax"]).hazards == {}


def test_integer_division_uses_the_analyser() -> None:
    parent = one('y[vi] = T.Cast("float32", vi)')
    accepted(one('y[vi] = T.Cast("float32", vi // (vi + T.int64(1)))'), parent)
    accepted(one('y[vi] = T.Cast("float32", vi % (vi - vi + T.int64(1)))'), parent)  # intervals fail, analyser proves
    rejected(one('y[vi] = T.Cast("float32", vi // (vi - T.int64(1)))'), parent, "integer division by possibly-zero")


# -- rule 2: no out-of-bounds access (the existing gate, now given the parent) ---------------------


def test_out_of_bounds_is_still_rejected_before_the_ub_rules() -> None:
    parent = one("y[vi] = x[vi]")
    reason = check_well_formed(one("y[vi] = x[vi + T.int64(1)]"), parent=parent)
    assert reason is not None and reason.startswith("out-of-bounds")
    assert check_well_formed(one("y[vi] = x[vi] * T.float32(2)"), parent=parent) is None


# -- rule 3: no read of uninitialised memory -------------------------------------------------------


def test_new_load_of_an_allocated_buffer_is_rejected() -> None:
    parent = two("tmp[vi] = x[vi]", "y[vi] = x[vi]")
    rejected(two("tmp[vi] = x[vi]", "y[vi] = x[vi] + tmp[vi]"), parent, "uninitialised tmp", "block B")
    accepted(two("tmp[vi] = x[vi]", "y[vi] = x[vi] * T.float32(2)"), parent)


def test_conditional_or_lost_write_to_an_allocated_buffer_is_rejected() -> None:
    parent = two("tmp[vi] = x[vi]", "y[vi] = tmp[vi]")
    rejected(two("if vi < T.int64(3):\n    tmp[vi] = x[vi]", "y[vi] = tmp[vi]"), parent, "write to allocated tmp")
    rejected(two("T.evaluate(0)", "y[vi] = tmp[vi]"), parent, "write to allocated tmp")
    # always-true guards (WrapIf's tautologies) and if/else with the write in both branches are fine
    accepted(two("if vi >= T.int64(0):\n    tmp[vi] = x[vi]", "y[vi] = tmp[vi]"), parent)
    both = "if vi < T.int64(3):\n    tmp[vi] = x[vi]\nelse:\n    tmp[vi] = x[vi]"
    accepted(two(both, "y[vi] = tmp[vi]"), parent)


def test_lost_reduction_init_is_rejected() -> None:
    parent = reduce()
    rejected(reduce(init="T.evaluate(0)"), parent, "init of mx")
    accepted(reduce(init="mx[vi] = T.float32(-1.0)"), parent)


def test_scratch_buffer_written_before_it_is_read_is_accepted() -> None:
    """WrapAlloc's pattern: alloc, store, load back in the same block."""
    parent = one("y[vi] = x[vi]")
    scratch = 'tmp = T.alloc_buffer((1,), "float32", scope="local")\ntmp[0] = x[vi]\ny[vi] = tmp[0]'
    accepted(one(scratch), parent)


# -- rule 4: no second write of one location in one block ----------------------------------------


def test_second_store_to_the_same_location_is_rejected() -> None:
    parent = one("y[vi] = x[vi]")
    rejected(one("y[vi] = x[vi]\ny[vi] = x[vi] + x2[vi]"), parent, "second write of y")
    rejected(one("y[vi] = x[vi]\ny[vi + T.int64(0)] = x2[vi]"), parent, "second write of y")  # equal once simplified
    cond = "y[vi] = x[vi]\nif vi < T.int64(4):\n    y[vi] = x2[vi]"
    rejected(one(cond), parent, "second write of y")


def test_exclusive_or_separate_stores_are_accepted() -> None:
    parent = one("y[vi] = x[vi]")
    accepted(one("if vi < T.int64(4):\n    y[vi] = x[vi]\nelse:\n    y[vi] = x2[vi]"), parent)
    loop = "for j in range(2):\n    y[vi] = x[vi] + T.Cast('float32', j)"
    accepted(one(loop), parent)  # stores separated by a loop inside the block


def test_insertor_never_duplicates_a_store() -> None:
    rng = random.Random(0)
    for name, seed in SEEDS.items():
        for _ in range(20):
            mutant = Insertor()._duplicate(analyze(seed), rng)
            assert mutant is None or ub.check(mutant, seed) is None, name


# -- rule 5: NaN/Inf-free on the harness inputs ---------------------------------------------------


def test_math_outside_its_domain_or_overflowing_is_rejected() -> None:
    parent = one("y[vi] = x[vi] + x2[vi]")
    rejected(one("y[vi] = T.log(x[vi])"), parent, "NaN/Inf", "log")
    rejected(one("y[vi] = T.sqrt(x[vi] - T.float32(0.5))"), parent, "sqrt")
    rejected(one("y[vi] = T.exp(x[vi] * T.float32(1000))"), parent, "exp may overflow")
    rejected(one("y[vi] = (x[vi] + T.float32(2)) * T.float32(-3.4028234663852886e38)"), parent, "Mul may overflow")
    rejected(one('y[vi] = T.Cast("float32", T.Cast("float16", x[vi] * T.float32(70000)))'), parent, "float16")
    accepted(one("y[vi] = T.log(x[vi] + T.float32(2))"), parent)
    accepted(one("y[vi] = T.exp(x[vi] * T.float32(10)) + T.float32(-3.4028234663852886e38)"), parent)
    accepted(one("y[vi] = T.tanh(x[vi] * T.float32(1000)) / (T.sigmoid(x2[vi]) + T.float32(1))"), parent)


def test_skipped_max_update_makes_softmax_exp_overflow() -> None:
    """If the max is not updated for some rows it stays -3.4e38 and exp(x - max) overflows."""
    parent = reduce()
    rejected(reduce(update="if vi < T.int64(1):\n    " + MAX_UPDATE), parent, "exp may overflow")
    accepted(reduce(update="if vk >= T.int64(0):\n    " + MAX_UPDATE), parent)  # a tautology runs it every time


def test_accumulator_growing_without_bound_is_rejected() -> None:
    """exp applied round after round: the 6th round overflows (e^(e^...)), found while iterating."""
    parent = reduce()
    rejected(reduce(update="mx[vi] = T.exp(T.max(mx[vi], x[vi, vk]))"), parent, "grows without bound", "mx")
    accepted(reduce(update="mx[vi] = T.exp(T.max(mx[vi], x[vi, vk])) * T.float32(0.1)"), parent)  # settles


def test_flipper_only_swaps_math_for_intrinsics_safe_on_the_operand() -> None:
    parent = one("y[vi] = T.sin(x[vi])")
    allowed = set(safe_math(UNARY_MATH, [(-1.0, 1.0)], "float32"))
    rng = random.Random(0)
    seen = set()
    for _ in range(60):
        mutant = Flipper().mutate(parent, rng)
        call = mutant.body.block.body.body.block.body.value if mutant is not None else None
        if isinstance(call, tvm.ir.Call):
            seen.add(str(call.op.name).split(".", 1)[1])
    assert seen and "log" not in seen and "atanh" not in seen
    assert seen <= allowed | {"fabs"}  # tirx.abs builds a fabs call


def test_mutate_ir_counts_ub_rejections_and_never_returns_them() -> None:
    class Divide:
        name = "divide"
        weight = 1.0

        def mutate(self, func: Any, rng: random.Random) -> Any:
            a = analyze(func)
            site = next(s for s in a.expr_sites() if isinstance(s.node, tirx.Add))
            return replace_site(a, site.path, tirx.Div(site.node.a, site.node.b))

    parent = one("y[vi] = x[vi] + T.floor(x[vi])")
    stats = MutationStats()
    assert mutate_ir(parent, random.Random(0), [Divide()], max_tries=2, stats=stats) is None
    assert stats.invalid["divide"] == 2
    assert all(r.startswith("divide: ub: ") for r in stats.reasons)
    found = mutate_ir(parent, random.Random(0), [Divide()], max_tries=1, ub_check=False)
    assert found is not None  # the same mutant passes when the UB gate is off


def test_mutate_ir_returns_only_mutants_the_gate_accepts() -> None:
    """100 chained mutations without building: each result passes the gate against its parent, and
    (all seeds being hazard-free) carries no hazard at all."""
    rng, mutators = random.Random(3), default_ir_mutators()
    for i in range(100):
        parent = SEEDS[sorted(SEEDS)[i % len(SEEDS)]]
        for _ in range(3):
            found = mutate_ir(parent, rng, mutators)
            if found is None:
                break
            assert ub.check(found[0], parent) is None
            assert ub.facts_of(found[0]).hazards == {}, found[1]
            parent = found[0]


def test_seeds_have_no_hazards_and_the_check_is_cheap() -> None:
    import time

    for name, seed in SEEDS.items():
        facts = ub.Interp(seed).facts
        assert facts.hazards == {} and not facts.unproven, name
        start = time.process_time()  # this process's CPU time: other work on the machine does not count
        for _ in range(5):
            ub.Interp(seed)
        assert (time.process_time() - start) / 5 < 0.005, name  # ~0.05-0.3 ms; generous for slow CI


# -- the fuzz run ---------------------------------------------------------------------------------


def make_inputs(func: Any, seed: int) -> list[np.ndarray]:
    """Copied from the harness's ``make_inputs`` (seedzer.triage.standalone, now seedzer.kernel.tir.observe):
    floats uniform in [-1, 1), integers zero."""
    rng = np.random.default_rng(seed)
    out = []
    for param in func.params:
        shape = [int(d) for d in param.ty.shape]
        dtype = str(param.ty.dtype)
        if dtype.startswith("float"):
            out.append(rng.uniform(-1.0, 1.0, size=shape).astype(dtype))
        else:
            out.append(np.zeros(shape, dtype=dtype))
    return out


def _non_finite(func: Any) -> bool | None:
    """Whether running ``func`` on the harness inputs leaves a NaN/Inf in a buffer (None: no build)."""
    from seedzer.tvmio import module_of

    try:
        exe = tvm.compile(module_of(func), target=tvm.target.Target({"kind": "llvm", "opt-level": 0}))
    except Exception:  # known codegen bugs (e.g. compute_scope): not what this test is about
        return None
    args = [tvm.runtime.tensor(a, tvm.cpu()) for a in make_inputs(func, 0)]
    exe["main"](*args)
    return any(a.dtype.kind == "f" and not np.all(np.isfinite(a)) for a in (x.numpy() for x in args))


@pytest.mark.integration
def test_fuzzed_mutants_are_ub_free_and_stay_finite() -> None:
    """300 mutations (30 per fixture seed, in chains of up to 3 mutations from the seed): every
    accepted mutant passes the gate and, built for llvm and run on the harness inputs, leaves no
    NaN/Inf in any buffer (no seed does). ~15 s."""
    rng = random.Random(1)
    mutators = default_ir_mutators()
    stats = MutationStats()
    ran = 0
    for name, seed in SEEDS.items():
        assert _non_finite(seed) is False, name
        func = seed
        for i in range(30):
            parent = func if i % 3 else seed
            found = mutate_ir(parent, rng, mutators, stats=stats)
            if found is None:
                continue
            func = found[0]
            assert check_well_formed(func, parent=parent) is None
            bad = _non_finite(func)
            assert bad is not True, f"{name} via {found[1]}: NaN/Inf\n{func.script()}"
            ran += bad is not None
    assert ran >= 250, stats.as_dict()
