"""The schedule level's object: its seeds (every PrimFunc a pool model lowers to, the TIR level's, with an
empty schedule plan) and its mutations (MetaSchedule's design space, rules and mutators, dlight's rules,
the house's sequence mutators over trace instructions, the primitives they draw, the postprocessors).
TVM-free: the campaign process uses it."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from seedzer.coverage.collectors import Collector
from seedzer.execute.fuzzing import LevelFuzzer, SlotProgress
from seedzer.execute.settings import WorkerSettings
from seedzer.levels.level import ModelSeeds
from seedzer.levels.sched.api import GENERATORS, GENERATORS_LABEL, LABEL, installed_primitives
from seedzer.levels.sched.settings import SchedSettings
from seedzer.mutate.sched.generator import MUTATIONS
from seedzer.passes.sched.items import sequence_problem
from seedzer.seed import passes_from_json
from seedzer.store.api_rows import LevelApi
from seedzer.store.corpus import CorpusEntry, EntryFault, entry_id

API_SECONDS = 120.0
"""Time the child reading the installed Schedule API may take (a fork of the zygote: well under a second idle)."""
GET_BLOCK = "GetSBlock"
"""The instruction that gets a block by its name (its first attribute)."""
NAME = "sched"
"""The level's name (:mod:`seedzer.level_table`), also its finding kind's."""


def sched_fuzzer(settings: WorkerSettings, progress: SlotProgress, collector: Collector | None) -> LevelFuzzer:
    """The schedule fuzzer of a worker (imports TVM: called in workers only)."""
    from seedzer.levels.sched.fuzzer import SchedFuzzer

    return SchedFuzzer(settings, progress, collector, settings.section(NAME, SchedSettings))


class SchedLevel:
    """A lowered PrimFunc with a schedule plan: a trace of ``tvm.s_tir.Schedule`` primitives, decisions
    included, and MetaSchedule's postprocessors after it (docs/design.md §11)."""

    name = NAME
    mutations = MUTATIONS

    def __init__(self) -> None:
        self.fuzzer = sched_fuzzer

    def seeds(self, loaded: ModelSeeds) -> list[CorpusEntry]:
        """Every PrimFunc the model lowered to (the TIR level's seeds, as loading gave them), with an empty
        plan: a worker's first mutation of one is MetaSchedule's design space half the time
        (``levels.sched.space_first``)."""
        return [CorpusEntry(entry_id(self.name, script), script, "[]", loaded.model.name, None, op, level=self.name)
                for script, op in loaded.seeds]

    def api(self) -> LevelApi | None:
        """The installed ``tvm.s_tir.Schedule``'s transforming primitives (read in a child forked from the
        zygote, which holds TVM) and the MetaSchedule and dlight generators; None when the child fails."""
        from seedzer.execute.isolated_call import run_isolated

        read = run_isolated(installed_primitives, timeout=API_SECONDS)
        if not read.ok or not read.value:
            return None
        return LevelApi(self.name, LABEL, tuple(read.value), GENERATORS, GENERATORS_LABEL)

    def check_entry(self, script: str, passes: str, models: Sequence[Path]) -> EntryFault | None:
        """Any TVMScript text can be scheduled (one that does not parse is an invalid test case in the
        worker); the plan must be a trace as far as the trace alone tells: known instructions and
        postprocessors, every random variable defined before it is used, decisions in their range
        (:func:`~seedzer.passes.sched.items.sequence_problem`), and every block it gets by name one the
        script declares (``T.sblock("name")``). The plan (``<id>.passes.json``) is at fault: the script
        is the loader's PrimFunc."""
        problem = sequence_problem(passes) or missing_block(script, passes)
        return None if problem is None else EntryFault(f"its schedule plan: {problem}", in_sequence=True)


def missing_block(script: str, passes: str) -> str | None:
    """The first ``GetSBlock`` of a (well-formed) stored plan naming a block the script does not declare."""
    for index, item in enumerate(passes_from_json(passes)):
        if item.name != GET_BLOCK:
            continue
        attrs = dict(item.args).get("attrs") or ()
        name = attrs[0] if attrs else None
        if isinstance(name, str) and f'T.sblock("{name}")' not in script:
            return f"item {index} (GetSBlock): no block {name!r} in the PrimFunc"
    return None


LEVEL = SchedLevel()
"""The registry's entry (:data:`seedzer.level_table.LEVELS`)."""
