"""A graph worker's cache of FoldConstant's builds, on real TVM: an equal constant PrimFunc is folded
with the earlier module and the passes of its build replayed; the folded module is the one TVM makes
without the cache; another PrimFunc, a failed build or a build outside the case's steps is not reused."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest
import tvm
import tvm_ffi
from tvm import relax

from seedzer.coverage.triggers import PassTriggers, TriggerInstrument
from seedzer.levels.graph.fold_builds import FoldBuilds


def folded_module(value: float = 2.0, op: str = "add") -> tvm.IRModule:
    """``main(x) = x + (c <op> c)``, legalized: ``c <op> c`` is a call FoldConstant compiles and folds."""
    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorType((2, 3), "float32"))
    c = relax.const(np.full((2, 3), value, dtype="float32"))
    with bb.function("main", [x]):
        with bb.dataflow():
            y = bb.emit(getattr(relax.op, op)(c, c))
            out = bb.emit_output(bb.emit(relax.op.add(x, y)))
        bb.emit_func_output(out)
    return relax.transform.LegalizeOps()(bb.get())


@pytest.fixture
def cache() -> Iterator[FoldBuilds]:
    """A cache answering ``tirx.build`` in this process while the test runs (recording: always)."""
    folds = FoldBuilds(PassTriggers(), lambda: True)
    folds.install()
    try:
        yield folds
    finally:
        FoldBuilds.uninstall()


def fold(folds: FoldBuilds, mod: tvm.IRModule) -> tvm.IRModule:
    """FoldConstant on ``mod`` in a pass context recording the passes into the cache's triggers (when
    the cache's ``active()`` says so, as a worker's instrument does)."""
    folds.triggers.clear()
    with tvm.transform.PassContext(instruments=[TriggerInstrument(folds.triggers, folds.active)]):
        return relax.transform.FoldConstant()(mod)


def plain_fold(mod: tvm.IRModule) -> tvm.IRModule:
    """FoldConstant as TVM runs it, without the cache."""
    return relax.transform.FoldConstant()(mod)


def test_an_equal_constant_call_is_folded_with_the_earlier_build_and_its_passes_replayed(cache: FoldBuilds) -> None:
    first = fold(cache, folded_module())
    ran = dict(cache.triggers.ran)
    assert cache.misses == 1 and cache.hits == 0
    assert "FoldConstant" in ran and any(name.startswith(("tirx.", "s_tir.")) for name in ran)  # the build's own
    second = fold(cache, folded_module())
    assert cache.misses == 1 and cache.hits == 1
    assert cache.triggers.ran == ran  # the same passes ran and triggered
    assert tvm_ffi.structural_equal(first, second)
    FoldBuilds.uninstall()
    assert tvm_ffi.structural_equal(second, plain_fold(folded_module()))  # what TVM folds without it


def test_another_constant_call_is_built_anew_and_folded_to_its_own_value(cache: FoldBuilds) -> None:
    fold(cache, folded_module(2.0, "add"))
    other = fold(cache, folded_module(2.0, "multiply"))
    assert cache.misses == 2 and cache.hits == 0
    FoldBuilds.uninstall()
    assert tvm_ffi.structural_equal(other, plain_fold(folded_module(2.0, "multiply")))
    assert not tvm_ffi.structural_equal(other, plain_fold(folded_module(2.0, "add")))


def test_a_build_made_while_the_case_s_passes_are_not_recorded_is_built_again_for_a_recorded_step() -> None:
    recording = [False]
    folds = FoldBuilds(PassTriggers(), lambda: recording[0])
    folds.install()
    try:
        fold(folds, folded_module())  # TVM's default build of the seed: no passes recorded for it
        assert folds.triggers.ran == {} and folds.misses == 1
        fold(folds, folded_module())
        assert folds.hits == 1  # still not recorded: reused, nothing replayed
        recording[0] = True
        fold(folds, folded_module())
        assert folds.misses == 2 and any(name.startswith(("tirx.", "s_tir.")) for name in folds.triggers.ran)
        fold(folds, folded_module())
        assert folds.hits == 2 and any(name.startswith(("tirx.", "s_tir.")) for name in folds.triggers.ran)
    finally:
        FoldBuilds.uninstall()


def test_a_build_that_fails_is_not_remembered(cache: FoldBuilds) -> None:
    func = next(f for gv, f in folded_module().functions.items() if gv.name_hint != "main")
    with pytest.raises(ValueError):
        cache.build(func, "no-such-target")
    assert len(cache.builds) == 0 and cache.misses == 1
    with pytest.raises(ValueError):
        cache.build(func, "no-such-target")
    assert cache.hits == 0


def test_uninstall_gives_tirx_build_back_to_tvm(cache: FoldBuilds) -> None:
    from tvm.tirx.build import build as tirx_build

    assert tvm.get_global_func("tirx.build") is not None
    FoldBuilds.uninstall()
    fold(cache, folded_module())
    assert cache.misses == 0 and cache.hits == 0  # TVM's own build answered
    assert callable(tirx_build)
