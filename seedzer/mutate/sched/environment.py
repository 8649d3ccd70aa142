"""What the installed TVM can do for the schedule level, probed once per process.

apache-tvm 0.27.0.post1 asks for ``apache-tvm-ffi>=0.1.14.post0``; pip installs 0.1.15, whose
``ToJSONGraph`` segfaults on every object with a dtype field (``tvm.ir.save_json(tvm.ir.PrimType(
"int32"))``), which 0.1.14.post0 serializes. TVM calls it where MetaSchedule's ``MutateComputeLocation``
and ``MutateParallel`` initialize (and so in ``TuneContext`` with the default llvm mutators), where
``tensorize`` copies its intrinsic, and where a trace with an IndexMap is written as JSON
(``Trace.as_json``). :func:`json_graph_works` asks a forked child, so a broken serializer costs
a child, not the worker; the generators leave out what needs it. :func:`meta_schedule_missing`
says why MetaSchedule cannot be used at all (None: it can). Imports TVM.
"""

from __future__ import annotations

import functools
import os


@functools.cache
def json_graph_works() -> bool:
    """Whether ``tvm.ir.save_json`` serializes an object with a dtype field (probed in a forked child)."""
    pid = os.fork()
    if pid == 0:  # the child: die by the serializer's signal (quietly), or report success
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, 1)
            os.dup2(devnull, 2)
            import tvm

            tvm.ir.save_json(tvm.ir.PrimType("int32"))
        except BaseException:
            os._exit(1)
        os._exit(0)
    _, status = os.waitpid(pid, 0)
    return os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0


@functools.cache
def meta_schedule_missing() -> str | None:
    """Why ``tvm.s_tir.meta_schedule`` cannot generate design spaces here (None: it can)."""
    try:
        from tvm.s_tir.meta_schedule import space_generator  # noqa: F401
        from tvm.s_tir.meta_schedule.tune_context import TuneContext  # noqa: F401
    except Exception as exc:  # an installation without MetaSchedule, or a broken one
        return f"tvm.s_tir.meta_schedule is unavailable ({type(exc).__name__}: {exc})"
    return None


@functools.cache
def dlight_missing() -> str | None:
    """Why ``tvm.s_tir.dlight``'s CPU rules cannot be used here (None: they can)."""
    try:
        from tvm.s_tir.dlight import cpu  # noqa: F401
    except Exception as exc:  # an installation without dlight
        return f"tvm.s_tir.dlight is unavailable ({type(exc).__name__}: {exc})"
    return None
