"""Imported once in the zygote (forkserver) so forked workers start with TVM already loaded.

It also keeps the zygote's children from running the parent's main script. Multiprocessing starts
every child by re-running the parent's ``__main__`` from disk (the ``seedzer`` CLI, a benchmark
script), so that functions defined there can be unpickled; preloading ``"__main__"`` in the zygote
was meant to do that once, but on Python before 3.13 the forkserver never receives the main path
(CPython issue gh-126631), and every child paid for it in CPU: each filing-gate job, reproducer,
confirmation, loader attempt and worker restart (the cost: docs/measurements.md, 'Workers and
isolation'). The zygote's children run Seedzer's own module-level functions only, never one of the
parent's ``__main__``, so they skip it.

The schedule level's MetaSchedule and dlight are preloaded too, where the installed TVM has them (a TVM
without them still runs the other levels, and the schedule level on the Schedule API alone: its worker
says so in one line). ``tvm.s_tir.tensor_intrin``, every target's tensor intrinsics, is not: its import
takes seconds idle, minutes on a loaded machine, and the llvm rules do not use it.

It makes ``onnx.reference`` ready too (:func:`~seedzer.kernel.onnx.validity.warm_reference`): the
engine children a worker forks to check a mutated model then start with its operators loaded.
"""

from __future__ import annotations

import importlib
from multiprocessing import spawn

import tvm
import tvm.relax
import tvm.s_tir
import tvm.tirx  # noqa: F401

from seedzer.kernel.onnx.validity import warm_reference

OPTIONAL_MODULES = ("tvm.s_tir.meta_schedule", "tvm.s_tir.dlight")
"""Modules preloaded when the installed TVM has them (the schedule level's generators)."""


def preload_optional(modules: tuple[str, ...] = OPTIONAL_MODULES) -> list[str]:
    """Import ``modules``; the ones this TVM lacks are left out quietly (returned: the schedule level's
    generator says why in its worker)."""
    missing = []
    for name in modules:
        try:
            importlib.import_module(name)
        except Exception:  # an installation without it, or a broken one
            missing.append(name)
    return missing


def _parent_main_not_needed(main: str) -> None:
    """Stands in for multiprocessing's re-run of the parent's main script (by path or by module
    name) in a child of the zygote."""


spawn._fixup_main_from_path = _parent_main_not_needed  # type: ignore[attr-defined]
spawn._fixup_main_from_name = _parent_main_not_needed  # type: ignore[attr-defined]
preload_optional()
warm_reference()
