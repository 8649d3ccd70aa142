"""A graph worker's build reuse, on real TVM: an equal module gets the earlier executable and its
build's triggered passes; another module, or a build that fails, does not."""

from __future__ import annotations

import numpy as np
import pytest
import tvm
import tvm_ffi
from tvm import relax

from seedzer.coverage.triggers import PassTriggers, TriggerInstrument
from seedzer.kernel.onnx.model import build, run
from seedzer.levels.graph.build_reuse import ReusingMemo

SPECS = (("x", "float32", (2, 3)),)


def module(op: str = "add", name: str = "lv") -> tvm.IRModule:
    """``main(x) = x <op> x`` (``name``: the bound variable's name)."""
    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorType((2, 3), "float32"))
    with bb.function("main", [x]):
        with bb.dataflow():
            y = bb.emit(getattr(relax.op, op)(x, x), name_hint=name)
            out = bb.emit_output(y)
        bb.emit_func_output(out)
    return bb.get()


def built(memo: ReusingMemo, mod: tvm.IRModule, target: str = "llvm") -> object:
    """``memo.build`` under a pass context recording the passes into the memo's triggers."""
    memo.triggers.clear()
    with tvm.transform.PassContext(instruments=[TriggerInstrument(memo.triggers)]):
        return memo.build(mod, target)


def test_an_equal_module_reuses_the_executable_and_replays_the_build_s_passes() -> None:
    memo = ReusingMemo(PassTriggers())
    first = built(memo, module("add", "a"))
    ran = dict(memo.triggers.ran)
    assert "LegalizeOps" in ran and ran["LegalizeOps"] and memo.reused == 0
    memo.triggers.clear()
    memo.triggers.record("FoldConstant", True)  # a fuzzed step of this case, before its build
    second = memo.build(module("add", "b"), "llvm")  # another variable name: the same program
    assert second is first and memo.reused == 1
    assert memo.triggers.ran == {"FoldConstant": True, **ran}
    x = np.arange(6, dtype="float32").reshape(2, 3)
    assert np.array_equal(run(second, SPECS, {"x": x})[0], x + x)  # run again for real


def test_another_module_or_target_is_built_anew() -> None:
    memo = ReusingMemo(PassTriggers())
    first = built(memo, module("add"))
    other = built(memo, module("multiply"))
    assert other is not first and memo.reused == 0
    x = np.full((2, 3), 3.0, dtype="float32")
    assert np.array_equal(run(other, SPECS, {"x": x})[0], x * x)
    assert built(memo, module("add"), '{"kind": "llvm", "opt-level": 3}') is not first and memo.reused == 0


def test_a_build_that_fails_is_not_remembered_and_its_passes_are_kept() -> None:
    memo = ReusingMemo(PassTriggers())
    memo.triggers.record("FoldConstant", False)
    with pytest.raises(ValueError):
        memo.build(module(), "no-such-target")
    assert len(memo.builds) == 0 and memo.triggers.ran == {"FoldConstant": False}
    with pytest.raises(ValueError):
        memo.build(module(), "no-such-target")
    assert memo.reused == 0


def test_a_module_the_hash_cannot_walk_is_built_as_without_the_memo() -> None:
    source = tvm.get_global_func("runtime.SourceModuleCreate")
    mod = module().with_attr("external_mods", [source("int x;", "c")])  # what RunCodegen attaches
    with pytest.raises(TypeError):
        tvm_ffi.structural_hash(mod)
    memo = ReusingMemo(PassTriggers())
    try:
        expected: object = build(mod, "llvm")
    except Exception as exc:  # whatever tvm.compile says of it, the memo must say the same
        expected = exc
    try:
        got: object = memo.build(mod, "llvm")
    except Exception as exc:
        got = exc
    assert type(got) is type(expected) and len(memo.builds) == 0 and memo.reused == 0
