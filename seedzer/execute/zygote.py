"""The zygote: a forkserver process that imports TVM once and forks workers cheaply (~ms).

The campaign process never imports TVM itself; it asks the zygote for children. A child that
segfaults or hangs dies alone, and the campaign records it and asks for a new one.
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.context
import threading

PRELOAD_MODULES = ["__main__", "seedzer.execute.preload"]
"""Imported once in the zygote. ``__main__`` first: multiprocessing otherwise re-runs the parent's
main module (the ``seedzer`` CLI) from disk in every child it starts (0.3-0.4 s per worker restart,
and a worker restarted during an upgrade would run other code than its campaign)."""

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
