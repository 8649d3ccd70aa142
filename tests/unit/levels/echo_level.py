"""A third level for the tests, made as the issue says a level is made: this one module plus one entry
in :data:`seedzer.level_table.LEVELS` (see :func:`register`). Its test case is a text whose lines are
its coverage features; a mutation appends a line, one of ``levels.echo.lines`` (its own setting, a
section the entry names, read from the configuration like a shipped level's); it runs without TVM.
It never fails, so it files nothing (a level that fails files under the finding kind of its name)."""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from seedzer.config import Check, setting
from seedzer.coverage.collectors import Collector
from seedzer.execute.fuzzing import LevelFuzzer, SlotProgress
from seedzer.execute.records import ExecResult, FuzzTask
from seedzer.execute.settings import WorkerSettings
from seedzer.kernel.common import Observation, Stage
from seedzer.level_table import LevelEntry
from seedzer.levels.level import ModelSeeds
from seedzer.seed import JointSeed
from seedzer.store.corpus import CorpusEntry

NAME = "echo"
ENTRY = LevelEntry(NAME, "tests.unit.levels.echo_level:LEVEL", 2.0, "a text whose lines are its features.", ".echo",
                   "tests.unit.levels.echo_level:EchoSettings")
"""Its entry in the level table (registered by the tests that use it)."""
QUIET = "quiet-echo"
QUIET_ENTRY = LevelEntry(QUIET, "tests.unit.levels.echo_level:QUIET_LEVEL", 0.0, "the echo level, off by default.",
                         ".quiet")
"""A second echo level, turned off by default (a level a campaign does not fuzz)."""


@dataclass
class EchoSettings:
    """The echo level's own settings (``levels.echo.*``)."""

    lines: int = setting(6, "How many different lines a mutation appends (line0, line1, ...).",
                         Check("must be between 1 and 100", lambda v: 1 <= v <= 100))


@dataclass(frozen=True)
class EchoCase:
    """The echo level's kernel case: its text."""

    text: str


class EchoFuzzer:
    """Appends a line; a test case's features are its distinct lines."""

    def __init__(self, progress: SlotProgress, own: EchoSettings) -> None:
        self.progress = progress
        self.own = own

    def mutate(self, task: FuzzTask, rng: random.Random) -> tuple[str, str, list[str]]:
        """The entry's text with one more line."""
        return f"{task.script}\nline{rng.randrange(self.own.lines)}", task.passes, ["echo_append"]

    def case(self, script: str, passes_json: str) -> EchoCase:
        """The text as the case."""
        return EchoCase(script)

    def execute(self, case: EchoCase, passes_json: str) -> ExecResult:
        """Clean, with one feature per distinct line."""
        self.progress(Stage.RUN, "echo", "opt")
        return ExecResult(Observation.ok(), sorted(f"echo:{ln}" for ln in set(case.text.splitlines())))


def echo_fuzzer(settings: WorkerSettings, progress: SlotProgress, collector: Collector | None) -> LevelFuzzer:
    """The echo fuzzer of a worker, with the echo level's own settings."""
    return EchoFuzzer(progress, settings.section(NAME, EchoSettings))


class EchoLevel:
    """The echo level's object."""

    mutations = frozenset({"echo_append"})

    def __init__(self, name: str = NAME) -> None:
        self.name = name
        self.fuzzer = echo_fuzzer

    def seeds(self, loaded: ModelSeeds) -> list[CorpusEntry]:
        """One entry per loaded model: its name."""
        text = f"model {loaded.model.name}"
        return [CorpusEntry(JointSeed(text).seed_id, text, "[]", loaded.model.name, None, "echo", level=self.name)]

    def check_entry(self, script: str, models: Sequence[Path]) -> str | None:
        """Any text is an echo test case."""
        return None


LEVEL = EchoLevel()
QUIET_LEVEL = EchoLevel(QUIET)
