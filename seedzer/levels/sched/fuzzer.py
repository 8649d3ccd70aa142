"""The schedule level in a worker: a plan made for an entry's PrimFunc by the schedule generator, and the
sched kernel's run of it.

A sched corpus entry is a PrimFunc's TVMScript with a plan: the instructions of a schedule trace and
the MetaSchedule postprocessors after it, as items (:mod:`seedzer.passes.sched.items`). :class:`SchedFuzzer`
mutates it with the generator (:class:`~seedzer.mutate.sched.generator.SchedGenerator`: MetaSchedule's
design space and mutators, dlight, the house's sequence mutators over the trace with primitives drawn
from the whole Schedule API, the postprocessors), publishing each way it tries as the step of stage
``mutate`` (making a plan applies primitives: a crash there is attributed to the way), and crosses a
plan with others of the same PrimFunc it has seen (:class:`PlanMemory`). It runs a case with the
kernel's :func:`~seedzer.kernel.sched.observe.observe`, publishing each instruction's kind as the step
of stage ``schedule`` (a crash in a primitive is attributed to it), keeping the parsed PrimFuncs and
the unscheduled builds across cases (:class:`~seedzer.kernel.sched.observe.SchedMemo`). It reports the
primitives (and postprocessors) each case called and those that accepted their arguments, as the
passes it ran and triggered (``status``: primitives exercised, refusals per primitive), one coverage
feature per pair of primitives accepted one after the other, one per kind of failure, and its time by
stage (``schedule``, ``build``, ``run``, ``compare``, ``reference``: the unscheduled build). Imports
TVM: only workers import this module.
"""

from __future__ import annotations

import itertools
import random
import time
from collections import OrderedDict

from seedzer.console import echo
from seedzer.coverage.collectors import Collector
from seedzer.execute.fuzzing import SlotProgress
from seedzer.execute.records import ExecResult, FuzzTask
from seedzer.execute.settings import WorkerSettings
from seedzer.kernel.common import REFERENCE, Observation, Stage, Symptom
from seedzer.kernel.messages import normalize
from seedzer.kernel.sched.case import NUM_CORES, SchedCase, SchedChecks, SchedPlan
from seedzer.kernel.sched.observe import SchedBuilder, SchedMemo, observe
from seedzer.kernel.sched.trace import TRANSFORMING
from seedzer.levels.sched.settings import SchedSettings
from seedzer.mutate.sched.generator import SchedGenerator
from seedzer.passes.sched.items import POSTPROC, items_plan, plan_items
from seedzer.seed import input_seed, passes_from_json, passes_to_json

PLANS_PER_FUNCTION = 16
"""Plans a worker remembers per PrimFunc (a crossover's partners)."""
FUNCTIONS = 256
"""PrimFuncs a worker remembers plans of (more than a pool's: a basic pool of 20 models lowers to ~150)."""
TIMING_KEYS = {Stage.SCHEDULE: "schedule", Stage.BUILD: "build", Stage.RUN: "run", Stage.COMPARE: "compare",
               Stage.PASS: "build"}
"""The campaign's timing name of each stage of a sched case (the unscheduled program's are ``reference``)."""


class PlanMemory:
    """The plans a worker has seen of each PrimFunc (its entries and their mutants), the newest last:
    what a crossover joins a plan with."""

    def __init__(self, plans: int = PLANS_PER_FUNCTION, functions: int = FUNCTIONS) -> None:
        self.plans, self.functions = plans, functions
        self.by_script: OrderedDict[str, list[SchedPlan]] = OrderedDict()

    def remember(self, script: str, plan: SchedPlan) -> None:
        """Note ``plan`` of ``script`` (an empty plan is no partner)."""
        if not plan.trace[0]:
            return
        known = self.by_script.setdefault(script, [])
        self.by_script.move_to_end(script)
        if plan not in known:
            known.append(plan)
            del known[:-self.plans]
        while len(self.by_script) > self.functions:
            self.by_script.popitem(last=False)

    def others(self, script: str, plan: SchedPlan) -> list[SchedPlan]:
        """The plans of ``script`` other than ``plan``."""
        return [p for p in self.by_script.get(script, []) if p != plan]


class StepClock:
    """A case's seconds by stage, from the kernel's progress (each step runs until the next one starts)."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self.current: str | None = None
        self.since = time.perf_counter()

    def step(self, stage: Stage, program: str) -> None:
        """A step of ``stage`` of ``program`` starts."""
        self.stop()
        self.current = "reference" if program == REFERENCE else TIMING_KEYS.get(stage, stage.value)

    def stop(self) -> None:
        """The running step ends."""
        now = time.perf_counter()
        if self.current is not None:
            self.seconds[self.current] = self.seconds.get(self.current, 0.0) + now - self.since
        self.since = now


def disabled_lines(disabled: dict[str, str]) -> list[str]:
    """One line per reason the installed TVM gives for ways it cannot do (MetaSchedule missing turns off
    three ways: one line naming them)."""
    by_reason: dict[str, list[str]] = {}
    for way, why in sorted(disabled.items()):
        by_reason.setdefault(why, []).append(way)
    return [f"sched: {', '.join(ways)} off in this worker (the Schedule API's ways still run): {why}"
            for why, ways in by_reason.items()]


def error_feature(observation: Observation) -> str | None:
    """A coverage feature for a failure (a new kind of refusal or error is new behaviour)."""
    if observation.symptom in (Symptom.OK, Symptom.MISMATCH):
        return None
    return f"err/sched/{observation.stage}/{observation.pass_name}/{normalize(observation.message)[:80]}"


def exercised(steps: list[str], instructions: int, observation: Observation) -> tuple[list[str], list[str]]:
    """The primitives and postprocessors (``postproc.<Name>``) a case called, and those that accepted their
    arguments: every schedule step up to the one that failed, and those before it (``steps``: what the
    kernel published at stage ``schedule``, one per instruction, the first ``instructions`` of them the
    trace's, then the postprocessors)."""
    failed = observation.step_index if observation.stage is Stage.SCHEDULE and observation.step_index is not None \
        else len(steps)
    named = [s if i < instructions else POSTPROC + s for i, s in enumerate(steps)]
    called = {n for n in named[:failed + 1] if n in TRANSFORMING or n.startswith(POSTPROC)}
    accepted = {n for n in named[:failed] if n in TRANSFORMING or n.startswith(POSTPROC)}
    return sorted(called), sorted(accepted)


class SchedFuzzer:
    """Mutation and execution of schedule-level test cases in one worker (see the module docstring)."""

    def __init__(self, settings: WorkerSettings, progress: SlotProgress, collector: Collector | None,
                 own: SchedSettings | None = None) -> None:
        self.settings = settings
        self.progress = progress
        self.collector = collector
        self.own = own or SchedSettings()
        self.generator = SchedGenerator(NUM_CORES, self.own.weights(), max_instructions=self.own.max_instructions,
                                        space_first=self.own.space_first)
        for line in disabled_lines(self.generator.disabled):
            echo(line, err=True)
        self.memo = SchedMemo()
        self.plans = PlanMemory()
        self.steps: list[str] = []
        self.clock = StepClock()

    def on_step(self, stage: Stage, name: str, program: str) -> None:
        """The kernel's progress: published (a crash is attributed to it), timed, schedule steps noted."""
        self.clock.step(stage, program)
        if stage is Stage.SCHEDULE:
            self.steps.append(name)
        self.progress(stage, name, program)

    def mutate(self, task: FuzzTask, rng: random.Random) -> tuple[str, str, list[str]]:
        """A mutant of the entry's plan by the generator (the entry's PrimFunc parsed once per worker), or
        the entry as it is when no way made one."""
        builder = SchedBuilder(memo=self.memo)
        func = builder.parse(task.script)
        plan = items_plan(passes_from_json(task.passes))
        self.plans.remember(task.script, plan)

        def on_way(way: str) -> None:
            self.progress(Stage.MUTATE, way, "opt")

        made = self.generator.mutate(func, plan, rng, self.plans.others(task.script, plan),
                                     factors=dict(task.mutation_factors), on_way=on_way)
        if made is None:
            return task.script, task.passes, []
        return task.script, passes_to_json(plan_items(made.plan)), list(made.mutations)

    def case(self, script: str, passes_json: str) -> SchedCase:
        """The kernel case of a test case: the plan's trace and postprocessors on the script's PrimFunc."""
        plan = items_plan(passes_from_json(passes_json))
        ex = self.settings.exec
        return SchedCase(script, plan.trace, input_seed(script), plan.postprocs, rtol=ex.rtol, atol=ex.atol,
                         checks=SchedChecks(illformed=ex.illformed, compare=ex.compare),
                         max_elems=ex.max_buffer_elems)

    def execute(self, case: SchedCase, passes_json: str) -> ExecResult:
        """Run one sched case: its observation, features, the primitives it called and that accepted their
        arguments, and its seconds by stage."""
        self.steps, self.clock = [], StepClock()
        observation = observe(case, SchedBuilder(self.on_step, self.memo))
        self.clock.stop()
        instructions = len(case.trace[0]) if case.trace else 0
        called, accepted = exercised(self.steps, instructions, observation)
        failed = observation.step_index if observation.stage is Stage.SCHEDULE else None
        done = [s for s in self.steps[:min(instructions, failed if failed is not None else instructions)]
                if s in TRANSFORMING]
        features = {f"sched/pair/{a}/{b}" for a, b in itertools.pairwise(done)}
        err = error_feature(observation)
        if err is not None:
            features.add(err)
        if self.collector is not None:
            features.update(self.collector.take())
        return ExecResult(observation, sorted(features), [], dict(self.clock.seconds), passes_ran=called,
                          passes_triggered=accepted)
