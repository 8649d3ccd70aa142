"""A cheap worker that speaks the real worker's protocol without TVM, for tests of the campaign side.

Scripts drive its behaviour: a line ``CRASH`` makes it die by SIGSEGV in the build stage (inside a
pass named ``FakePass``), ``HANG`` makes it sleep in the run stage, ``ERROR`` yields a TVM-like
error, ``MISMATCH`` a confirmed opt/nopt mismatch; anything else runs cleanly. Coverage features
are the script's distinct lines, so new lines mean new coverage.
"""

from __future__ import annotations

import os
import random
import signal
import time
from multiprocessing.connection import Connection
from typing import Any

from seedzer.execute.progress import ProgressSlot
from seedzer.execute.worker import serve
from seedzer.outcome import Stage


def fake_execute(script: str, slot: ProgressSlot) -> dict[str, Any]:
    """Execute a fake test case, publishing stages like the real runner."""
    slot.stage(Stage.PASS)
    slot.in_pass("FakePass")
    lines = set(script.splitlines())
    if "CRASH" in lines:
        slot.stage(Stage.BUILD, "FakePass")
        os.kill(os.getpid(), signal.SIGSEGV)
    if "HANG" in lines:
        slot.stage(Stage.RUN)
        time.sleep(3600)
    record: dict[str, Any] = {"features": sorted(f"line:{ln}" for ln in lines)}
    if "ERROR" in lines:
        record["error"] = {"stage": "pass", "pass": "FakePass", "type": "InternalError",
                           "message": "InternalError: Check failed: (x_12 == y_3) is false"}
    if "MISMATCH" in lines:
        record["compare"] = {"mismatch": True, "deterministic": True,
                             "detail": {"reason": "values", "buffer": 1}, "last_pass": "FakePass"}
    return record


def fake_worker_main(conn: Connection, slot: ProgressSlot, settings: Any) -> None:
    """Serve the real worker protocol (:func:`~seedzer.execute.worker.serve`) with fake mutation
    (append a random line) and fake execution."""
    lines = int(settings or 50)

    def mutate(seed: dict[str, Any], _other: str | None, rng: random.Random) -> tuple[str, str, list[str]]:
        return seed["script"] + f"\nline{rng.randrange(lines)}", seed["passes"], ["FakeAppend"]

    def execute(script: str, _passes: str) -> tuple[dict[str, Any], dict[str, float]]:
        return fake_execute(script, slot), {"run": 0.001}

    serve(conn, slot, mutate, execute)
