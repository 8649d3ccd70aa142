"""The TIR level in a worker: Tzer-style mutation of a joint seed and the kernel's execution of the mutant.

A corpus entry of the TIR level is a PrimFunc's TVMScript with a TIR pass sequence. :class:`TirFuzzer`
mutates it with Tzer's tolerance schedule (:mod:`seedzer.mutate.tir.schedule`), keeps a mutant out of the
bounds (:mod:`seedzer.mutate.tir.bounds`) from running, plans its sequence into flat steps through the pass
contracts (:func:`seedzer.passes.tir.contracts.plan`) and judges it with the kernel's
:func:`~seedzer.kernel.tir.observe.observe` through the worker's caching builder. Imports TVM: only
workers import this module.
"""

from __future__ import annotations

import hashlib
import random
from typing import Any

from seedzer.coverage.collectors import Collector
from seedzer.execute.fuzzing import SlotProgress
from seedzer.execute.records import ExecResult, FuzzTask
from seedzer.execute.settings import WorkerSettings
from seedzer.kernel.common import Observation, Stage, Symptom
from seedzer.kernel.messages import normalize
from seedzer.kernel.tir.case import Case, Checks
from seedzer.kernel.tir.observe import observe
from seedzer.levels.tir.caching_builder import CachingBuilderSettings, CachingTirBuilder
from seedzer.levels.tir.parsed_scripts import ParsedScripts
from seedzer.levels.tir.parsing import quick_parser
from seedzer.levels.tir.settings import TirSettings
from seedzer.mutate.tir.bounds import bound_of, out_of_bounds
from seedzer.passes.tir.contracts import placeable, plan
from seedzer.seed import input_seed, passes_from_json, passes_to_json


class WorkerTirBuilder(CachingTirBuilder):
    """The caching builder with the worker's parsed-script cache."""

    def __init__(self, settings: CachingBuilderSettings, progress: SlotProgress, scripts: ParsedScripts) -> None:
        super().__init__(settings, progress)
        self.scripts = scripts

    def parse(self, script: str) -> Any:
        """The PrimFunc of ``script`` from the worker's cache."""
        return self.scripts.get(script)


def sampled(script: str, passes: str, rate: float) -> bool:
    """Deterministic sampling of test cases for the (expensive) performance check."""
    digest = hashlib.blake2b(f"{script}\x1f{passes}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") / 2**64 < rate


def error_feature(observation: Observation) -> str | None:
    """A coverage feature for an error observation: a new sort of failure is new behaviour. An
    out-of-bounds mutant's is the bound it breaks (one feature per bound, not per size)."""
    if observation.symptom.value in ("ok", "mismatch", "perf"):
        return None
    bound = bound_of(observation.message) if observation.stage is Stage.MUTATE else None
    if bound is not None:
        return f"err/{Stage.MUTATE}/bounds/{bound}"
    return f"err/{observation.stage}/{observation.pass_name}/{normalize(observation.message)[:80]}"


class TirFuzzer:
    """Mutation and execution of TIR test cases inside one worker (see the module docstring)."""

    def __init__(self, settings: WorkerSettings, progress: SlotProgress, collector: Collector | None,
                 own: TirSettings | None = None) -> None:
        from seedzer.mutate import tir as mutate
        from seedzer.mutate.tir.schedule import TzerSchedule

        self.settings = settings
        self.scripts = ParsedScripts(quick_parser(), settings.exec.parse_cache_size, settings.exec.fresh_cache_size)
        self.progress = progress
        ex = settings.exec
        self.builder = WorkerTirBuilder(CachingBuilderSettings(ex.program_cache_size, ex.build_cache_size,
                                                  ex.detailed_build_coverage), self.progress, self.scripts)
        own = own or TirSettings()
        self.ir_mutators = mutate.build_ir_mutators()
        self.pass_mutators = mutate.default_pass_mutators()
        self.stats = mutate.MutationStats()
        self.collector = collector
        self.schedule = TzerSchedule(own.tolerance, own.max_passes, self.ir_mutators,
                                     self.pass_mutators, self.stats)
        self.out_of_bounds: tuple[str, str, str] | None = None
        """``(script, passes JSON, reason)`` of the last mutant when it is out of bounds."""

    def mutate(self, task: FuzzTask, rng: random.Random) -> tuple[str, str, list[str]]:
        """Mutate a corpus entry with Tzer's tolerance schedule (:mod:`seedzer.mutate.tir.schedule`);
        a mutant out of the settings' bounds (:mod:`seedzer.mutate.tir.bounds`) is remembered, and
        :meth:`execute` does not run it."""
        parent = passes_from_json(task.passes)
        other = passes_from_json(task.other_passes) if task.other_passes else None
        mutant = self.schedule.mutate(task.script, parent, task.failures, rng, self.scripts, other, task.triggered,
                                      dict(task.mutation_factors))
        passes = passes_to_json(mutant.passes)
        reason = out_of_bounds((task.script, parent), (mutant.script, mutant.passes), self.settings.bounds)
        self.out_of_bounds = None if reason is None else (mutant.script, passes, reason)
        if reason is not None:
            self.stats.out_of_bounds[bound_of(reason) or "other"] += 1
        return mutant.script, passes, mutant.applied

    def case(self, script: str, passes_json: str) -> Case:
        """The kernel case of a test case (what its reproducer will run); the perf oracle times only
        scripts of at most ``bounds.perf_max_script_bytes``."""
        ex = self.settings.exec
        small = len(script.encode()) <= self.settings.bounds.perf_max_script_bytes
        perf = ex.perf_rate > 0 and small and sampled(script, passes_json, ex.perf_rate)
        checks = Checks(illformed=ex.illformed, compare=ex.compare, pipeline=ex.pipeline, perf=perf,
                        pipeline_illformed=ex.pipeline_illformed, intended_pragmas=True, judge_minimal=True)
        return Case(script, tuple(plan(passes_from_json(passes_json))), input_seed(script), rtol=ex.rtol,
                    atol=ex.atol, checks=checks, perf_factor=ex.perf_factor, perf_repeats=ex.perf_repeats,
                    max_elems=ex.max_buffer_elems)

    def execute(self, case: Case, passes_json: str) -> ExecResult:
        """Run one test case (its kernel case, from :meth:`case`) through the kernel; the observation
        plus features and timings. The mutant just made, when out of bounds, is not run: its
        observation is ``invalid`` at ``mutate``, with the reason (``bounds: ...``) as message."""
        pending, self.out_of_bounds = self.out_of_bounds, None
        if pending is not None and pending[:2] == (case.script, passes_json):
            return self.bounded(pending[2])
        self.builder.reset()
        passes = passes_from_json(passes_json)
        kept = placeable(passes)
        observation = observe(case, self.builder)
        features = set(self.builder.features)
        err = error_feature(observation)
        if err is not None:
            features.add(err)
        if self.collector is not None:
            features.update(self.collector.take())
        kept_indices = {i for i, _ in kept}
        unchanged = sorted({kept[k][0] for k in self.builder.unchanged if k < len(kept)}
                           | (set(range(len(passes))) - kept_indices))
        return ExecResult(observation, sorted(features), unchanged, dict(self.builder.timings),
                          self.stats.invalid_total(), sorted(self.builder.triggers.ran),
                          self.builder.triggers.triggered())

    def bounded(self, reason: str) -> ExecResult:
        """The result of a mutant out of bounds: ``invalid`` at ``mutate``, one feature per bound
        (the coverage of making it is dropped: it is never kept)."""
        observation = Observation(Symptom.INVALID, Stage.MUTATE, None, reason)
        if self.collector is not None:
            self.collector.take()
        err = error_feature(observation)
        return ExecResult(observation, [err] if err is not None else [], [], {}, self.stats.invalid_total())
