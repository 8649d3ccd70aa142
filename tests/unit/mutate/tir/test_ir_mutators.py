"""IR mutators on the fixture seeds: they change the IR, keep it well-formed and never touch indices."""

from __future__ import annotations

import random
from typing import Any

import pytest

tvm = pytest.importorskip("tvm")
import tvm_ffi  # noqa: E402
from tvm import s_tir, tirx  # noqa: E402

from seedzer.kernel.tir.case import O0  # noqa: E402
from seedzer.kernel.tir.lowering import apply_steps, make_target  # noqa: E402
from seedzer.mutate.tir import (  # noqa: E402
    IR_MUTATOR_NAMES,
    MutationStats,
    default_ir_mutators,
    ir_mutator_classes,
    mutate_ir,
)
from seedzer.passes.tir.contracts import pipeline_steps  # noqa: E402
from seedzer.tir.nodes import analyze  # noqa: E402
from seedzer.tir.wellformed import check_well_formed  # noqa: E402
from seedzer.tvmio import module_of  # noqa: E402
from tests.unit.tir.test_fixtures import load_seeds  # noqa: E402

SEEDS = load_seeds()
TRIES = 6


def _mutants(name: str, seed_name: str, n: int = TRIES, rng_seed: int = 0) -> list[Any]:
    cls = ir_mutator_classes()[name]
    rng = random.Random(rng_seed)
    return [m for m in (cls().mutate(SEEDS[seed_name], rng) for _ in range(n)) if m is not None]


_STEPS = pipeline_steps()
TO_FLAT = _STEPS[: [s.name for s in _STEPS].index("tirx.FlattenBuffer") + 1]
"""TVM's pipeline up to and including FlattenBuffer."""


def _oob_after_lowering(func: Any) -> str | None:
    """OOBChecker on the fully flattened, simplified module: catches out-of-range accesses of any
    origin (simplified first, as the pipeline does, since the checker's interval analysis cannot
    see that e.g. ``i - i`` is 0)."""
    mod = tirx.transform.BindTarget(make_target(O0))(module_of(func))
    mod = apply_steps(mod, TO_FLAT)
    with tvm.transform.PassContext(opt_level=3):
        mod = tirx.transform.StmtSimplify()(mod)
    try:
        s_tir.analysis.OOBChecker()(mod)
    except Exception as exc:
        return str(exc).splitlines()[0]
    return None


def _guarded(func: Any) -> bool:
    text = str(func.script())
    return any(k in text for k in ("T.where", "if_then_else", "if "))


def test_registry_names_match_classes() -> None:
    assert tuple(ir_mutator_classes()) == IR_MUTATOR_NAMES
    for cls in ir_mutator_classes().values():
        assert cls.__doc__ and cls.default_weight > 0


@pytest.mark.parametrize("name", IR_MUTATOR_NAMES)
def test_mutator_changes_ir_and_stays_well_formed(name: str) -> None:
    """Each mutator applies to some seed; every mutant differs from its seed and is well-formed."""
    applied = 0
    for seed_name, seed in SEEDS.items():
        for mutant in _mutants(name, seed_name):
            assert not tvm_ffi.structural_equal(mutant, seed), f"{name} left {seed_name} unchanged"
            assert check_well_formed(mutant) is None, f"{name} on {seed_name}: {check_well_formed(mutant)}"
            applied += 1
    assert applied >= len(SEEDS), f"{name} applied only {applied} times"


@pytest.mark.parametrize("name", IR_MUTATOR_NAMES)
def test_mutants_survive_text_round_trip_and_lowering_without_oob(name: str) -> None:
    for seed_name in ("conv2d", "argmax", "softmax"):
        for mutant in _mutants(name, seed_name, n=3, rng_seed=1):
            assert check_well_formed(mutant, roundtrip=True) is None
            # After flattening, OOBChecker's interval analysis ignores guards (conv2d's padding,
            # a guarded split's T.where): it would raise false alarms on guarded accesses.
            if not _guarded(mutant):
                assert _oob_after_lowering(mutant) is None, f"{name} on {seed_name}"


def test_index_constants_are_never_mutated() -> None:
    """add_broadcast reads x1[v_ax1, 0]: the 0 is an index and must survive every mutation."""

    def load_indices(func: Any) -> list[str]:
        found: list[Any] = []
        tvm_ffi.structural_walk(func.body, (tvm.ir.TensorLoad, found.append))
        return sorted(str(list(ld.indices)) for ld in found if str(ld.source.name) == "x1")

    before = load_indices(SEEDS["add_broadcast"])
    assert before  # the seed has the broadcast load
    for name in ("flip", "nilize", "delete", "insert"):
        for mutant in _mutants(name, "add_broadcast", n=30, rng_seed=3):
            after = load_indices(mutant)
            assert all(x in before for x in after), f"{name} changed an index: {after} vs {before}"


GATHER = """
@T.prim_func(s_tir=True)
def main(x: T.Buffer((T.int64(8),), "float32"), y: T.Buffer((T.int64(4),), "float32")):
    idx = T.sblock_alloc_buffer((T.int64(4),), "int64")
    for i in range(T.int64(4)):
        with T.sblock("make_idx"):
            vi = T.axis.remap("S", [i])
            T.reads()
            T.writes(idx[vi])
            idx[vi] = vi * T.int64(2) + T.int64(1)
    for i in range(T.int64(4)):
        with T.sblock("gather"):
            vi = T.axis.remap("S", [i])
            T.reads(idx[vi], x[T.int64(0):T.int64(8)])
            T.writes(y[vi])
            off: T.let[T.int64] = idx[vi] - T.int64(1)
            y[vi] = x[off] * T.float32(2)
"""


def test_values_flowing_into_indices_are_protected() -> None:
    """Index buffers (idx) and let-variables used as indices (off) are never value sites."""
    func = tvm.script.from_source(GATHER)
    a = analyze(func)
    protected_parents = [s for s in a.expr_sites() if s.store_buffer is not None and str(s.store_buffer.name) == "idx"]
    assert protected_parents == []
    assert not [s for s in a.expr_sites() if s.def_var is not None and str(s.def_var.name) == "off"]
    # the float value x[off] * 2 stays mutable
    assert [s for s in a.expr_sites() if isinstance(s.node, tirx.Mul) and s.dtype == "float32"]
    rng = random.Random(0)
    for _ in range(60):
        found = mutate_ir(func, rng, default_ir_mutators())
        assert found is not None
        if not _guarded(found[0]):
            assert _oob_after_lowering(found[0]) is None, found[1]


def test_guarded_loads_are_not_hoisted_out_of_if_then_else() -> None:
    """conv2d pads with if_then_else(cond, x0[v - 1], 0): binding that load outside would be OOB."""
    a = analyze(SEEDS["conv2d"])
    guarded = [s for s in a.expr_sites() if s.guarded]
    assert guarded, "the padded load should be a guarded site"
    for mutant in _mutants("insert", "conv2d", n=80, rng_seed=5):
        assert check_well_formed(mutant) is None


def test_mutate_ir_counts_and_returns_the_mutator_name() -> None:
    stats = MutationStats()
    rng = random.Random(0)
    names = set()
    for seed in SEEDS.values():
        found = mutate_ir(seed, rng, default_ir_mutators(), stats=stats)
        assert found is not None
        mutant, name = found
        assert name in IR_MUTATOR_NAMES and not tvm_ffi.structural_equal(mutant, seed)
        names.add(name)
    assert sum(stats.accepted.values()) == len(SEEDS)
    assert sum(stats.tried.values()) >= len(SEEDS)
    assert stats.as_dict()["gave_up"] == 0


def test_mutate_ir_gives_up_and_counts_inapplicable() -> None:
    class Never:
        name = "never"
        weight = 1.0

        def mutate(self, func: Any, rng: random.Random) -> Any:
            return None

    stats = MutationStats()
    assert mutate_ir(SEEDS["relu"], random.Random(0), [Never()], max_tries=3, stats=stats) is None
    assert stats.inapplicable["never"] == 3 and stats.gave_up == 1


def test_invalid_mutants_are_rejected_and_counted() -> None:
    """A mutator that builds an out-of-bounds load is caught by the gate, never returned."""

    class OutOfBounds:
        name = "oob"
        weight = 1.0

        def mutate(self, func: Any, rng: random.Random) -> Any:
            from seedzer.mutate.tir.base import replace_site

            a = analyze(func)
            site = next(s for s in a.expr_sites() if isinstance(s.node, tvm.ir.TensorLoad))
            load = site.node
            bad = tirx.BufferLoad(load.source, [i + tirx.const(100, "int64") for i in load.indices])
            return replace_site(a, site.path, bad)

    stats = MutationStats()
    assert mutate_ir(SEEDS["relu"], random.Random(0), [OutOfBounds()], max_tries=2, stats=stats) is None
    assert stats.invalid["oob"] == 2
    assert any("out-of-bounds" in r for r in stats.reasons)


def test_check_well_formed_explains_ill_formed_ir() -> None:
    seed = SEEDS["relu"]
    assert check_well_formed(seed) is None
    # use an outer loop variable inside the block: S-TIR forbids it
    loop = seed.body.block.body
    inner_loop_var = loop.loop_var
    a = analyze(seed)
    site = next(s for s in a.expr_sites() if isinstance(s.node, tirx.Max))
    from seedzer.mutate.tir.base import replace_site

    bad = replace_site(a, site.path, site.node + tirx.Cast("float32", inner_loop_var))
    reason = check_well_formed(bad)
    assert reason is not None and "ill-formed" in reason
    assert check_well_formed("not a function") is not None


def test_choice_is_weighted_by_subtree_size() -> None:
    from seedzer.tir.nodes import choose

    a = analyze(SEEDS["softmax"])
    sites = a.stmt_sites()
    big = max(sites, key=lambda s: s.size)
    rng = random.Random(0)
    picks = [choose(sites, rng) for _ in range(2000)]
    share = sum(p is big for p in picks) / len(picks)
    expected = big.size / sum(s.size for s in sites)
    assert abs(share - expected) < 0.05
    assert choose([], rng) is None


INNER_UNROLLED = """
@T.prim_func
def main(A: T.Buffer((16, 16), "float32")):
    for i in T.serial(16):
        for j in T.unroll(16):
            A[i, j] = A[i, j] + T.float32(1)
"""


def test_a_loop_around_an_unrolled_loop_is_unrolled_only_while_the_whole_nest_stays_small() -> None:
    """The nest through a loop counts the unrolled loops inside it, not only those around it."""
    from seedzer.mutate.tir.tensor_mutators import MAX_UNROLL_PRODUCT, allowed_kinds, nest_product

    a = analyze(tvm.script.from_source(INNER_UNROLLED))
    outer = next(li for li in a.loops if str(li.node.loop_var.name) == "i")
    assert nest_product(outer, a.loops) == 256 > MAX_UNROLL_PRODUCT
    assert int(tirx.ForKind.UNROLLED) not in allowed_kinds(outer, a.loops)
    assert int(tirx.ForKind.UNROLLED) in allowed_kinds(outer)  # its own extent alone would allow it
