"""A third level for the tests, made as the issue says a level is made: this one module plus one entry
in :data:`seedzer.level_table.LEVELS` (see :func:`register`). Its test case is a text with a sequence of
echo passes (a pass family of its own, :data:`ECHO_FAMILY`, mutated by the house's generic sequence
mutators); the lines of the text the passes make of it are its coverage features; a mutation appends
a line, one of ``levels.echo.lines`` (its own setting, a section the entry names, read from the
configuration like a shipped level's), or changes the sequence; it runs without TVM. It never fails,
so it files nothing (a level that fails files under the finding kind of its name)."""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from seedzer.config import Check, setting
from seedzer.coverage.collectors import Collector
from seedzer.execute.fuzzing import LevelFuzzer, SlotProgress
from seedzer.execute.records import ExecResult, FuzzTask
from seedzer.execute.settings import WorkerSettings
from seedzer.kernel.common import Observation, Stage
from seedzer.level_table import LevelEntry
from seedzer.levels.level import ModelSeeds
from seedzer.mutate.sequence import mutator_names, sequence_mutators
from seedzer.mutate.weighted import pick
from seedzer.passes.catalog import ArgSpec, PassInfo, choice
from seedzer.passes.family import ContextFree, SequenceRules
from seedzer.seed import PassSpec, passes_from_json, passes_to_json
from seedzer.store.api_rows import LevelApi
from seedzer.store.corpus import CorpusEntry, EntryFault, entry_id

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


OPEN, CLOSE = "echo.Open", "echo.Close"
EFFECTS: dict[str, Callable[[str, dict[str, Any]], str]] = {
    "echo.Upper": lambda text, args: text.upper(),
    "echo.Mark": lambda text, args: "\n".join(args.get("mark", "#") + line for line in text.splitlines()),
    "echo.Reverse": lambda text, args: "\n".join(reversed(text.splitlines())),
    OPEN: lambda text, args: text,
    CLOSE: lambda text, args: text,
}
"""What each echo pass does to the text."""
CATALOG: dict[str, PassInfo] = {
    name: PassInfo(name, (ArgSpec("mark", choice("#", ">")),) if name == "echo.Mark" else ())
    for name in EFFECTS
}


class EchoFamily(ContextFree):
    """The echo passes: a ``Close`` is in contract only after an ``Open`` it closes (a check that reads
    the items before it, as a schedule instruction's does); an insertion's run is a fresh pass in
    brackets."""

    rules = SequenceRules(prefix="echo_", operations=("insert", "delete", "replace", "repeat", "swap", "options",
                                                      "crossover"), min_len=0, max_len=6, run_share=0.25,
                          longest_deletion=2, make_room=True)
    catalog: Mapping[str, PassInfo] = CATALOG
    names: Sequence[str] = tuple(CATALOG)

    def in_contract(self, items: Sequence[PassSpec]) -> bool:
        return len(self.placeable(items)) == len(items)

    def placeable(self, items: Sequence[PassSpec]) -> list[tuple[int, PassSpec]]:
        kept, depth = [], 0
        for i, item in enumerate(items):
            if item.name == CLOSE and depth == 0:
                continue
            depth += {OPEN: 1, CLOSE: -1}.get(item.name, 0)
            kept.append((i, item))
        return kept

    def run(self, rng: random.Random, room: int, fresh: Callable[[random.Random], PassSpec]) -> list[PassSpec]:
        return [PassSpec(OPEN), fresh(rng), PassSpec(CLOSE)]

    def partner(self, rng: random.Random) -> list[PassSpec]:
        return [PassSpec(OPEN), PassSpec("echo.Upper"), PassSpec(CLOSE)]

    def ran_as(self, name: str) -> str:
        return name.removeprefix("echo.")


ECHO_FAMILY = EchoFamily()
APPEND = "echo_append"


@dataclass(frozen=True)
class EchoCase:
    """The echo level's kernel case: its text, made by its passes."""

    text: str


def run_passes(text: str, passes: Sequence[PassSpec]) -> str:
    """The text once the echo passes in contract ran on it, in order."""
    for _, item in ECHO_FAMILY.placeable(passes):
        text = EFFECTS[item.name](text, dict(item.args))
    return text


class EchoFuzzer:
    """Appends a line or mutates the pass sequence; a test case's features are its distinct lines."""

    def __init__(self, progress: SlotProgress, own: EchoSettings) -> None:
        self.progress = progress
        self.own = own
        self.mutators = sequence_mutators(ECHO_FAMILY)

    def mutate(self, task: FuzzTask, rng: random.Random) -> tuple[str, str, list[str]]:
        """The entry's text with one more line, or its passes mutated (half the time each)."""
        if rng.random() < 0.5:
            return f"{task.script}\nline{rng.randrange(self.own.lines)}", task.passes, [APPEND]
        mutator = pick(self.mutators, rng)
        other = passes_from_json(task.other_passes) if task.other_passes else None
        passes = mutator.mutate(passes_from_json(task.passes), rng, other, task.triggered)
        return task.script, passes_to_json(passes), [mutator.name]

    def case(self, script: str, passes_json: str) -> EchoCase:
        """The text the passes make of the script."""
        return EchoCase(run_passes(script, passes_from_json(passes_json)))

    def execute(self, case: EchoCase, passes_json: str) -> ExecResult:
        """Clean, with one feature per distinct line."""
        self.progress(Stage.RUN, "echo", "opt")
        return ExecResult(Observation.ok(), sorted(f"echo:{ln}" for ln in set(case.text.splitlines())))


def echo_fuzzer(settings: WorkerSettings, progress: SlotProgress, collector: Collector | None) -> LevelFuzzer:
    """The echo fuzzer of a worker, with the echo level's own settings."""
    return EchoFuzzer(progress, settings.section(NAME, EchoSettings))


class EchoLevel:
    """The echo level's object."""

    mutations = frozenset({APPEND, *mutator_names(ECHO_FAMILY)})

    def __init__(self, name: str = NAME) -> None:
        self.name = name
        self.fuzzer = echo_fuzzer

    def seeds(self, loaded: ModelSeeds) -> list[CorpusEntry]:
        """One entry per loaded model: its name."""
        text = f"model {loaded.model.name}"
        return [CorpusEntry(entry_id(self.name, text), text, "[]", loaded.model.name, None, "echo", level=self.name)]

    def api(self) -> LevelApi | None:
        """None: the echo level reaches no TVM API."""
        return None

    def check_entry(self, script: str, passes: str, models: Sequence[Path]) -> EntryFault | None:
        """Any text is an echo test case."""
        return None


LEVEL = EchoLevel()
QUIET_LEVEL = EchoLevel(QUIET)
