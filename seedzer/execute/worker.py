"""The long-lived fuzz worker, forked from the zygote: mutate, announce, execute, report.

Protocol over a duplex pipe (records of :mod:`seedzer.execute.records`): the campaign sends
:class:`FuzzTask` (mutate a corpus entry, then run it), :class:`ExecTask` (run a test case as given)
or :class:`Stop`; the worker answers :class:`Ready` once set up (or :class:`Fatal` with the reason
it cannot be), then for every task an :class:`Announcement` of the test case *before* running it
(so that a crash still leaves its reproducer with the campaign) and a :class:`Result`.
"""

from __future__ import annotations

import random
import signal
import time
from collections.abc import Callable
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from seedzer.execute.memory import limit_address_space
from seedzer.execute.orphans import die_with_parent
from seedzer.execute.progress import ProgressSlot
from seedzer.execute.records import (
    Announcement,
    ExecResult,
    ExecTask,
    Fatal,
    FuzzTask,
    Ready,
    Result,
    Stop,
)
from seedzer.execute.settings import WorkerSettings
from seedzer.kernel.common import Stage
from seedzer.logfiles import redirect_output

MutateFn = Callable[[FuzzTask, random.Random], tuple[str, str, list[str]]]
"""(task, rng) -> (script, passes JSON, names of the mutators applied)."""
CaseFn = Callable[[str, str, str], Any]
"""(level, script, passes JSON) -> the kernel case the worker runs (announced with its test case)."""
ExecuteFn = Callable[[str, Any, str], ExecResult]
"""(level, the kernel case, its passes JSON) -> the execution's result."""


def redirect_worker_output(log_dir: str | None, index: int) -> None:
    """Send a worker's stdout and stderr (TVM's C++ warnings, crash reports) to ``worker-<n>.log``."""
    redirect_output(Path(log_dir) / f"worker-{index}.log" if log_dir is not None else None)


def serve(conn: Connection, slot: ProgressSlot, mutate: MutateFn, case_of: CaseFn, execute: ExecuteFn) -> None:
    """The worker protocol loop: serve tasks until told to stop or the pipe closes.

    Every worker (the real one and the cheap test one) runs this loop; only ``mutate``, ``case_of``
    and ``execute`` differ. The kernel case of a test case is made once by its level, announced and run.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the campaign decides when workers stop
    die_with_parent()  # a campaign (or Ray actor) killed outright takes its workers with it
    conn.send(Ready())
    while True:
        try:
            task = conn.recv()
        except (EOFError, OSError):
            return
        if isinstance(task, Stop):
            return
        assert isinstance(task, FuzzTask | ExecTask)
        slot.begin_testcase(task.tc_id)
        busy, cpu = time.perf_counter(), time.process_time()
        mutate_seconds: float | None = None
        if isinstance(task, FuzzTask):
            slot.stage(Stage.MUTATE)
            start = time.perf_counter()
            try:
                script, passes, applied = mutate(task, random.Random(task.rng_seed))
            except Exception as exc:  # a mutator bug must not kill the campaign
                script, passes, applied = task.script, task.passes, [f"error:{type(exc).__name__}"]
            mutate_seconds = time.perf_counter() - start
        else:
            script, passes, applied = task.script, task.passes, []
        case = case_of(task.level, script, passes)
        conn.send(Announcement(task.tc_id, script, passes, tuple(applied), case))
        result = execute(task.level, case, passes)
        if mutate_seconds is not None:
            result.timings["mutate"] = mutate_seconds
        # what the test case took, and how much of that the worker had a processor (the rest it waited)
        result.timings["worker_busy"] = time.perf_counter() - busy
        result.timings["worker_cpu"] = time.process_time() - cpu
        slot.clear()
        conn.send(Result(task.tc_id, result))


def worker_main(conn: Connection, slot: ProgressSlot, settings: WorkerSettings, index: int = 0) -> None:
    """Entry point of a forked fuzz worker: real mutation and real TVM execution."""
    redirect_worker_output(settings.log_dir, index)
    limit_address_space(settings.exec.max_memory)  # an oversized test case fails its allocation: invalid
    try:
        from seedzer.execute.fuzzing import Fuzzing  # TVM is imported in workers only

        fuzzing = Fuzzing(settings, slot)
    except Exception as exc:  # restarting cannot help: tell the campaign why, in one line
        conn.send(Fatal(f"{type(exc).__name__}: {exc}".splitlines()[0][:500]))
        raise SystemExit(1) from exc
    serve(conn, slot, fuzzing.mutate, fuzzing.case, fuzzing.execute)
