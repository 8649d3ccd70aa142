"""A graph worker's cache of LLVM's code, on real TVM: ``tvm.compile`` of a module whose kernels were
compiled before (the same module again, or another Relax module lowering to the same kernels) reuses
that runtime module and computes what TVM's own build computes; other kernels, other names and a
module that gained imports are generated anew; uninstalled, TVM generates the code itself."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest
import tvm
from tvm import relax

from seedzer.levels.graph.build_reuse import equal
from seedzer.levels.graph.codegen_reuse import CodegenReuse, exported_names


def model(op: str = "add", extra_binding: bool = False) -> tvm.IRModule:
    """``main(x, y) = tanh(x <op> y)``; ``extra_binding`` adds a dead Relax binding (a Relax-level
    difference that lowers to the same kernels once the build's DeadCodeElimination drops it)."""
    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorType((2, 3), "float32"))
    y = relax.Var("y", relax.TensorType((2, 3), "float32"))
    with bb.function("main", [x, y]):
        with bb.dataflow():
            z = bb.emit(getattr(relax.op, op)(x, y))
            if extra_binding:
                bb.emit(relax.op.add(z, z))
            out = bb.emit_output(bb.emit(relax.op.tanh(z)))
        bb.emit_func_output(out)
    return bb.get()


def run(mod: tvm.IRModule) -> np.ndarray:
    """``mod`` built for llvm and run on fixed inputs."""
    executable = tvm.compile(mod, "llvm")
    vm = relax.VirtualMachine(executable, tvm.cpu())
    x = np.arange(6, dtype="float32").reshape(2, 3) / 7
    y = np.full((2, 3), 0.5, dtype="float32")
    return vm["main"](tvm.runtime.tensor(x), tvm.runtime.tensor(y)).numpy()


@pytest.fixture
def cache() -> Iterator[CodegenReuse]:
    """A cache answering ``target.build.llvm`` in this process while the test runs."""
    codegen = CodegenReuse()
    codegen.install()
    try:
        yield codegen
    finally:
        codegen.uninstall()


def test_the_same_module_built_again_reuses_the_code_and_computes_what_tvm_computes(cache: CodegenReuse) -> None:
    first = run(model())
    misses = cache.misses
    assert misses >= 1 and cache.hits == 0
    second = run(model())
    assert cache.hits == 1 and cache.misses == misses
    cache.uninstall()
    plain = run(model())
    np.testing.assert_array_equal(first, second)
    np.testing.assert_array_equal(second, plain)
    assert cache.hits == 1  # uninstalled: TVM's own code generation answered


def test_a_relax_difference_that_lowers_to_the_same_kernels_reuses_the_code(cache: CodegenReuse) -> None:
    run(model())
    got = run(model(extra_binding=True))
    assert cache.hits == 1
    np.testing.assert_array_equal(got, run(model()))


def test_other_kernels_are_generated_anew_and_compute_their_own_values(cache: CodegenReuse) -> None:
    added = run(model("add"))
    multiplied = run(model("multiply"))
    assert cache.hits == 0 and cache.misses == 2
    assert not np.array_equal(added, multiplied)
    cache.uninstall()
    np.testing.assert_array_equal(multiplied, run(model("multiply")))


def test_a_module_that_gained_an_import_is_not_handed_out_again(cache: CodegenReuse) -> None:
    run(model())
    [[kept]] = [entries for entries in cache.builds._data.values()]
    other = tvm.compile(model("multiply"), "llvm")  # another module (a device module in a real build)
    kept.runtime.import_module(other.mod)
    run(model())
    assert cache.hits == 0


def test_equal_code_needs_the_same_names_and_equal_bodies() -> None:
    lowered = []
    codegen = CodegenReuse()
    codegen.install()
    original = codegen.generate

    def spy(mod: tvm.IRModule, target: tvm.target.Target) -> object:
        lowered.append(mod)
        return original(mod, target)

    codegen.generate = spy
    try:
        run(model("add"))
        codegen.builds = type(codegen.builds)(codegen.builds.size)  # forget it: lowered again
        run(model("add"))
        run(model("multiply"))
    finally:
        codegen.uninstall()
    first, again, other = lowered
    assert first is not again and equal(first, again, map_free_vars=True)
    assert exported_names(first) == exported_names(again)
    assert not equal(first, other, map_free_vars=True)
    renamed = tvm.IRModule({tvm.ir.GlobalVar(gv.name_hint + "_x"): func for gv, func in first.functions.items()})
    assert exported_names(renamed) != exported_names(first)
