"""The TIR level's object: its seeds (every PrimFunc a pool model lowers to, with no pass) and its
mutations (Tzer's IR and pass-sequence mutators). TVM-free: the campaign process uses it."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from seedzer.coverage.collectors import Collector
from seedzer.execute.fuzzing import LevelFuzzer, SlotProgress
from seedzer.execute.settings import WorkerSettings
from seedzer.levels.level import ModelSeeds
from seedzer.levels.tir.settings import TirSettings
from seedzer.mutate.tir import IR_MUTATOR_NAMES, PASS_MUTATOR_NAMES
from seedzer.store.api_rows import LevelApi
from seedzer.store.corpus import CorpusEntry, EntryFault, entry_id

NAME = "tir"
"""The level's name (:mod:`seedzer.level_table`), also its finding kind's."""


def tir_fuzzer(settings: WorkerSettings, progress: SlotProgress, collector: Collector | None) -> LevelFuzzer:
    """The TIR fuzzer of a worker (imports TVM: called in workers only)."""
    from seedzer.levels.tir.fuzzer import TirFuzzer

    return TirFuzzer(settings, progress, collector, settings.section(NAME, TirSettings))


class TirLevel:
    """A PrimFunc (TVMScript) from a pool model's lowering with a TIR pass sequence (docs/design.md §4, §11)."""

    name = NAME
    mutations = frozenset(IR_MUTATOR_NAMES) | frozenset(PASS_MUTATOR_NAMES)

    def __init__(self) -> None:
        self.fuzzer = tir_fuzzer

    def seeds(self, loaded: ModelSeeds) -> list[CorpusEntry]:
        """Every PrimFunc the model lowered to (per operator and fused), with an empty pass sequence."""
        return [CorpusEntry(entry_id(self.name, script), script, "[]", loaded.model.name, None, op, level=self.name)
                for script, op in loaded.seeds]

    def api(self) -> LevelApi | None:
        """None: the level's figures of TVM's API are its passes (the table of optimizations triggered)."""
        return None

    def check_entry(self, script: str, passes: str, models: Sequence[Path]) -> EntryFault | None:
        """Any TVMScript text can be fuzzed (it names no file; one that does not parse is an invalid
        test case in the worker)."""
        return None


LEVEL = TirLevel()
"""The registry's entry (:data:`seedzer.level_table.LEVELS`)."""
