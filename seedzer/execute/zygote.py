"""The zygote: a forkserver process that imports TVM once and forks workers cheaply.

The campaign process never imports TVM itself; it asks the zygote for children. A child that
segfaults or hangs dies alone, and the campaign records it and asks for a new one. (What a fork and a
fresh interpreter cost: docs/measurements.md, 'Workers and isolation'.)
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.context
import threading

PRELOAD_MODULES = [
    "seedzer.execute.preload", "seedzer.execute.worker", "seedzer.finding.tir.gate", "seedzer.tir.ub",
    "seedzer.kernel.graph.observe", "seedzer.levels.sched.fuzzer", "seedzer.finding.sched.gate",
]
"""Imported once in the zygote: TVM, the override that keeps its children from re-running the
parent's main script (see :mod:`seedzer.execute.preload`), and the modules of its most frequent
children (a worker; a filing-gate job, which imported them anew each time; the graph kernel, whose
onnx and onnxruntime a worker would import at its first graph case; the schedule level's worker
and gate, 0.1 s a child would otherwise spend at its first sched case). Named here, not imported: the
zygote sits below the layers whose code its children run (why these: docs/measurements.md, 'Workers
and isolation')."""

_lock = threading.Lock()
_ctx: multiprocessing.context.ForkServerContext | None = None


def context() -> multiprocessing.context.ForkServerContext:
    """The shared forkserver context whose server process has TVM imported."""
    global _ctx
    with _lock:
        if _ctx is None:
            ctx = multiprocessing.get_context("forkserver")
            ctx.set_forkserver_preload(PRELOAD_MODULES)
            _ctx = ctx
        return _ctx
