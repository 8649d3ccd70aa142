"""The long-lived fuzz worker, forked from the zygote: mutate, announce, execute, report.

Protocol over a duplex pipe (campaign -> worker):
  ("fuzz", tc_id, seed: dict, other_passes: list | None, rng_seed)  mutate a corpus entry, run it
  ("exec", tc_id, script, passes)                                    run a test case as given
  ("stop",)
and back (worker -> campaign), always announcing a test case before running it so that a crash
still leaves its reproducer with the campaign:
  ("tc", tc_id, script, passes, mutators)
  ("result", tc_id, record, timings)
  ("fatal", message)                         the worker cannot start (e.g. coverage set-up failed)
"""

from __future__ import annotations

import random
import signal
import time
from collections.abc import Callable
from multiprocessing.connection import Connection
from typing import Any

from seedzer.coverage.collectors import make_collector
from seedzer.execute.progress import ProgressSlot
from seedzer.execute.settings import WorkerSettings
from seedzer.outcome import Stage
from seedzer.seed import passes_from_json, passes_to_json


class Mutation:
    """Worker-side mutation of a joint seed with Tzer's tolerance schedule."""

    def __init__(self, settings: WorkerSettings, scripts: Any) -> None:
        from seedzer import mutate

        self.settings = settings
        self.scripts = scripts  # ParsedScripts, shared with the TestCaseRunner
        self.mutate = mutate
        self.ir_mutators = mutate.build_ir_mutators(settings.ir_weights)
        self.pass_mutators = mutate.default_pass_mutators()
        self.stats = mutate.MutationStats()

    def __call__(
        self, script: str, passes_json: str, failures: int, other_json: str | None, rng: random.Random
    ) -> tuple[str, str, list[str]]:
        """Return (mutated script, mutated passes JSON, names of the mutators applied)."""
        from seedzer.tvmio import script_of

        passes = passes_from_json(passes_json)
        kind = self.mutate.choose_mutation_kind(failures, self.settings.tolerance, rng)
        applied: list[str] = []
        new_script = script
        if kind in ("ir", "both"):
            func = self.scripts.get(script)
            result = self.mutate.mutate_ir(func, rng, self.ir_mutators, stats=self.stats)
            if result is not None:
                new_func, name = result
                new_script = script_of(new_func)
                self.scripts.put(new_script, new_func)  # executed as is, without parsing it back
                applied.append(name)
        if kind in ("passes", "both") or not applied or not passes:
            other = passes_from_json(other_json) if other_json else None
            mutator = self.mutate.pick(self.pass_mutators, rng)
            passes = mutator.mutate(passes, rng, other)[: self.settings.max_passes]
            applied.append(mutator.name)
        return new_script, passes_to_json(passes), applied


MutateFn = Callable[[dict[str, Any], str | None, random.Random], tuple[str, str, list[str]]]
"""(seed, other passes JSON, rng) -> (script, passes JSON, names of the mutators applied)."""
ExecuteFn = Callable[[str, str], tuple[dict[str, Any], dict[str, float]]]
"""(script, passes JSON) -> (execution record, seconds per stage)."""


def serve(conn: Connection, slot: ProgressSlot, mutate: MutateFn, execute: ExecuteFn) -> None:
    """The worker protocol loop: serve tasks until told to stop or the pipe closes.

    Every worker (the real one and the cheap test one) runs this loop; only ``mutate`` and
    ``execute`` differ.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the campaign decides when workers stop
    while True:
        try:
            msg = conn.recv()
        except (EOFError, OSError):
            return
        if msg[0] == "stop":
            return
        tc_id = msg[1]
        slot.begin_testcase(tc_id)
        mutate_seconds: float | None = None
        if msg[0] == "fuzz":
            seed, other_json, rng_seed = msg[2], msg[3], msg[4]
            slot.stage(Stage.MUTATE)
            t = time.perf_counter()
            try:
                script, passes_json, applied = mutate(seed, other_json, random.Random(rng_seed))
            except Exception as exc:  # a mutator bug must not kill the campaign
                script, passes_json, applied = seed["script"], seed["passes"], [f"error:{type(exc).__name__}"]
            mutate_seconds = time.perf_counter() - t
        else:
            script, passes_json, applied = msg[2], msg[3], []
        conn.send(("tc", tc_id, script, passes_json, applied))
        record, timings = execute(script, passes_json)
        if mutate_seconds is not None:
            timings["mutate"] = mutate_seconds
        slot.clear()
        conn.send(("result", tc_id, record, timings))


def worker_main(conn: Connection, slot: ProgressSlot, settings: WorkerSettings) -> None:
    """Entry point of a forked fuzz worker: real mutation and real TVM execution."""
    try:
        from seedzer.execute.testcase import TestCaseRunner  # TVM is imported in workers only

        runner = TestCaseRunner(settings.exec, slot)
        mutation = Mutation(settings, runner.scripts)
        collector = make_collector(settings.collector) if settings.collector is not None else None
        if collector is not None:
            collector.start()
    except Exception as exc:  # restarting cannot help: tell the campaign why, in one line
        conn.send(("fatal", f"{type(exc).__name__}: {exc}".splitlines()[0][:500]))
        raise SystemExit(1) from exc

    def mutate(seed: dict[str, Any], other_json: str | None, rng: random.Random) -> tuple[str, str, list[str]]:
        return mutation(seed["script"], seed["passes"], seed.get("failures", 0), other_json, rng)

    def execute(script: str, passes_json: str) -> tuple[dict[str, Any], dict[str, float]]:
        runner.timings = {}
        record = runner.execute(script, passes_from_json(passes_json))
        record["invalid_mutants"] = mutation.stats.invalid_total()
        if collector is not None:
            record["features"] = list(record.get("features", ())) + collector.take()
        return record, runner.timings

    serve(conn, slot, mutate, execute)
