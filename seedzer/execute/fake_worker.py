"""A cheap worker that speaks the real worker's protocol without TVM, for tests of the campaign side.

Scripts drive its behaviour: a line ``CRASH`` makes it die by SIGSEGV in the build stage (inside a
pass named ``FakePass``), ``HANG`` makes it sleep in the run stage, ``ERROR`` yields a TVM-like
error, ``PRECONDITION`` one stating a pass's precondition (the exception oracle turns it invalid),
``MISMATCH`` a confirmed mismatch, ``INVALID`` an invalid test case, ``EXIT`` an uncaught
exception that ends the worker (as Seedzer's own code failing on a test case would); anything else
runs cleanly. Coverage features are the script's distinct lines, so new lines mean new coverage.
"""

from __future__ import annotations

import os
import random
import signal
import time
from multiprocessing.connection import Connection
from typing import Any

from seedzer.execute.progress import ProgressSlot
from seedzer.execute.records import ExecResult, FuzzTask
from seedzer.execute.worker import redirect_worker_output, serve
from seedzer.kernel.common import OPT_VS_REFERENCE, Observation, Stage, Symptom
from seedzer.kernel.comparison import Difference
from seedzer.kernel.tir.case import Case
from seedzer.passes.tir.contracts import plan
from seedzer.seed import input_seed, passes_from_json

TRIGGER_LINE = "T:"
"""A script line ``T:<pass>`` makes the fake test case trigger ``<pass>`` (it always runs ``FakePass``)."""


def fake_execute(script: str, slot: ProgressSlot) -> ExecResult:
    """Execute a fake test case, publishing stages like a real level's fuzzer."""
    slot.stage(Stage.PASS, "FakePass")
    lines = set(script.splitlines())
    if "EXIT" in lines:
        raise RuntimeError("the fake worker cannot run a test case with an EXIT line")
    if "CRASH" in lines:
        slot.stage(Stage.BUILD, "FakePass")
        os.kill(os.getpid(), signal.SIGSEGV)
    if "HANG" in lines:
        slot.stage(Stage.RUN, "run")
        time.sleep(3600)
    observation = Observation.ok()
    if "ERROR" in lines:
        observation = Observation(Symptom.EXCEPTION, Stage.PASS, "FakePass",
                                  "InternalError: Check failed: (x_12 == y_3) is false")
    elif "PRECONDITION" in lines:
        observation = Observation(Symptom.EXCEPTION, Stage.PASS, "FakePass",
                                  "InternalError: FakePass must be called after LowerOpaqueBlock")
    elif "MISMATCH" in lines:
        diff = Difference(1, "values", 3, 16, 0.5)
        observation = Observation(Symptom.MISMATCH, Stage.COMPARE, None, diff.describe(),
                                  comparison=OPT_VS_REFERENCE, difference=diff)
    elif "INVALID" in lines:
        observation = Observation(Symptom.INVALID, Stage.MUTATE, None, "unusable test case")
    features = sorted(f"line:{ln}" for ln in lines)
    triggered = sorted(ln[len(TRIGGER_LINE):] for ln in lines if ln.startswith(TRIGGER_LINE))
    return ExecResult(observation, features, [], {"run": 0.001}, passes_ran=["FakePass", *triggered],
                      passes_triggered=triggered)


def fake_case(level: str, script: str, passes: str) -> Case:
    """The kernel case of a fake test case of any level: planned as the real TIR worker plans it (TVM-free)."""
    return Case(script, tuple(plan(passes_from_json(passes))), input_seed(script))


def fake_worker_main(conn: Connection, slot: ProgressSlot, settings: Any, index: int = 0) -> None:
    """Serve the real worker protocol (:func:`~seedzer.execute.worker.serve`) with fake mutation
    (append a random line) and fake execution. ``settings`` is the number of distinct lines, or an
    object with ``lines``, ``log_dir`` and optionally ``delay`` (seconds each execution takes, busy:
    a stand-in for a real test case's time when measuring what the campaign's side costs; that time:
    docs/measurements.md, 'Workers and isolation')."""
    lines = int(getattr(settings, "lines", settings) or 50)
    delay = float(getattr(settings, "delay", 0.0) or 0.0)
    redirect_worker_output(getattr(settings, "log_dir", None), index)

    def mutate(task: FuzzTask, rng: random.Random) -> tuple[str, str, list[str]]:
        return task.script + f"\nline{rng.randrange(lines)}", task.passes, ["FakeAppend"]

    def execute(level: str, case: Case, _passes: str) -> ExecResult:
        end = time.perf_counter() + delay
        while time.perf_counter() < end:  # busy, as a compile is
            pass
        return fake_execute(case.script, slot)

    serve(conn, slot, mutate, fake_case, execute)
