"""Optimizations triggered on real TVM: a pass that changes the module is triggered, one that returns it
unchanged (the same object or an equal copy) is not; the instrument records nested passes by name."""

from __future__ import annotations

from pathlib import Path

import pytest

tvm = pytest.importorskip("tvm")

from seedzer.coverage.triggers import PassTriggers, TriggerInstrument, module_changed  # noqa: E402
from seedzer.levels.tir.parsing import quick_parser  # noqa: E402

RELU = (Path(__file__).parent.parent.parent / "fixtures" / "seeds" / "relu.py").read_text()


def _module() -> object:
    return tvm.IRModule({"main": quick_parser()(RELU)})


def test_a_pass_that_rewrites_the_module_is_triggered_and_one_that_does_not_is_not() -> None:
    mod = _module()
    lowered = tvm.s_tir.transform.LowerInitBlock()(mod)
    converted = tvm.s_tir.transform.ConvertBlocksToOpaque()(lowered)
    assert module_changed(lowered, converted)
    assert not module_changed(mod, mod)
    copy = tvm.IRModule(dict(mod.functions.items()))  # a new object, structurally the same
    assert not copy.same_as(mod) and not module_changed(mod, copy)


def test_triggers_keep_a_pass_triggered_once_any_run_changed_the_module() -> None:
    triggers = PassTriggers()
    triggers.record("tirx.Simplify", False)
    triggers.record("tirx.Simplify", True)
    triggers.record("tirx.Simplify", False)
    triggers.record("tirx.RemoveNoOp", False)
    assert triggers.ran == {"tirx.Simplify": True, "tirx.RemoveNoOp": False}
    assert triggers.triggered() == ["tirx.Simplify"]
    triggers.clear()
    assert triggers.ran == {}


def test_the_instrument_records_each_pass_of_a_sequence_but_not_the_sequence_itself() -> None:
    triggers = PassTriggers()
    sequence = tvm.transform.Sequential([tvm.s_tir.transform.ConvertBlocksToOpaque(),
                                         tvm.s_tir.transform.ConvertBlocksToOpaque()])
    with tvm.transform.PassContext(instruments=[TriggerInstrument(triggers)]):
        sequence(_module())
    assert triggers.ran == {"s_tir.ConvertBlocksToOpaque": True}  # the second run changed nothing


def test_the_instrument_records_nothing_while_inactive() -> None:
    triggers = PassTriggers()
    with tvm.transform.PassContext(instruments=[TriggerInstrument(triggers, lambda: False)]):
        tvm.s_tir.transform.ConvertBlocksToOpaque()(_module())
    assert triggers.ran == {}


def test_a_module_of_several_functions_is_compared_function_by_function() -> None:
    func = quick_parser()(RELU)
    opaque = tvm.s_tir.transform.ConvertBlocksToOpaque()(tvm.s_tir.transform.LowerInitBlock()(
        tvm.IRModule({"main": func})))["main"]
    mod = tvm.IRModule({"a": func, "b": func})
    assert not module_changed(mod, tvm.IRModule({"a": func, "b": quick_parser()(RELU)}))  # an equal copy
    assert module_changed(mod, tvm.IRModule({"a": func, "b": opaque}))
    assert module_changed(mod, tvm.IRModule({"a": func}))
    assert module_changed(mod, mod.with_attr("note", "x"))
