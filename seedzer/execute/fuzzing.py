"""A worker's fuzzing: each test case mutated and run by the fuzzer of its level.

A worker serves every level a campaign fuzzes: :class:`Fuzzing` holds one :class:`LevelFuzzer` per
level, made in the worker by the factories of :attr:`~seedzer.execute.settings.WorkerSettings.fuzzers`
(each level's object in :mod:`seedzer.levels` gives its own), and hands a task to the fuzzer its
``level`` names. Shared by every level: the worker's progress slot (:class:`SlotProgress`) and the
native coverage collector. Only workers import the level fuzzers (they import TVM).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any, Protocol

from seedzer.coverage.collectors import Collector, make_collector
from seedzer.errors import SeedzerError
from seedzer.execute.progress import ProgressSlot
from seedzer.execute.records import ExecResult, FuzzTask
from seedzer.execute.settings import WorkerSettings
from seedzer.kernel.common import Stage, step_label


class SlotProgress:
    """Publishes the kernel's progress in the worker's shared-memory slot.

    A stage's clock starts when the stage changes (so a stage limit covers all its steps); within a
    stage only the name changes. Programs other than the optimized one are named ``<program>:step``.
    """

    def __init__(self, slot: ProgressSlot) -> None:
        self.slot = slot
        self.stage: Stage | None = None

    def __call__(self, stage: Stage, name: str, program: str) -> None:
        label = step_label(name, program)
        if stage != self.stage:
            self.stage = stage
            self.slot.stage(stage, label)
        else:
            self.slot.in_pass(label)

    def reset(self) -> None:
        """A new test case starts (its first stage restarts the clock)."""
        self.stage = None


class LevelFuzzer(Protocol):
    """One level's mutation and execution inside a worker."""

    def mutate(self, task: FuzzTask, rng: random.Random) -> tuple[str, str, list[str]]:
        """A mutant of the task's corpus entry: ``(script, passes JSON, names of the mutations applied)``."""
        ...

    def case(self, script: str, passes_json: str) -> Any:
        """The kernel case of a test case (what it runs, what its reproducer will run)."""
        ...

    def execute(self, case: Any, passes_json: str) -> ExecResult:
        """Run one test case: its observation, coverage features and timings."""
        ...


FuzzerFactory = Callable[[WorkerSettings, SlotProgress, Collector | None], LevelFuzzer]
"""Makes a level's fuzzer in a worker: (the worker's settings, its progress, its coverage collector)."""


class Fuzzing:
    """Mutation and execution inside one worker, by the level of each test case (see the module docstring)."""

    def __init__(self, settings: WorkerSettings, slot: ProgressSlot) -> None:
        self.progress = SlotProgress(slot)
        self.collector: Collector | None = None
        if settings.collector is not None:
            self.collector = make_collector(settings.collector)
            self.collector.start()
        self.fuzzers: dict[str, LevelFuzzer] = {name: factory(settings, self.progress, self.collector)
                                                for name, factory in settings.fuzzers.items()}

    def fuzzer(self, level: str) -> LevelFuzzer:
        """The fuzzer of ``level`` (a level the worker was not set up for is a campaign bug)."""
        found = self.fuzzers.get(level)
        if found is None:
            raise SeedzerError(f"this worker fuzzes {', '.join(self.fuzzers) or 'no level'}, not {level!r}")
        return found

    def mutate(self, task: FuzzTask, rng: random.Random) -> tuple[str, str, list[str]]:
        """A mutant of the task's entry, made by its level's fuzzer."""
        return self.fuzzer(task.level).mutate(task, rng)

    def case(self, level: str, script: str, passes_json: str) -> Any:
        """The kernel case of a test case of ``level``."""
        return self.fuzzer(level).case(script, passes_json)

    def execute(self, level: str, case: Any, passes_json: str) -> ExecResult:
        """Run one test case of ``level`` (a new test case: its first stage restarts the clock)."""
        self.progress.reset()
        return self.fuzzer(level).execute(case, passes_json)
