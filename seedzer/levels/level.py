"""The seam of a level: what the campaign asks of a level, and what loading a pool model hands it.

A level implements :class:`Level`. Its name is its entry's in :mod:`seedzer.level_table` and the name
of the finding kind that files its test cases (:mod:`seedzer.finding.registry`); its ``fuzzer`` makes
the :class:`~seedzer.execute.fuzzing.LevelFuzzer` a worker runs its test cases with.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from seedzer.execute.fuzzing import FuzzerFactory
from seedzer.kernel.common import Observation
from seedzer.load.loader import LoaderFailure
from seedzer.store.api_rows import LevelApi
from seedzer.store.corpus import CorpusEntry, EntryFault


@dataclass
class ModelSeeds:
    """What loading one pool model for a campaign gave, the input of every level's seeds.

    ``observations`` are every attempt's failures and notes (``invalid`` ones included);
    ``failures`` are the bug observations with what their finding folders need (each filed as a
    ``load`` finding); ``seeds`` are ``(TVMScript, op)`` pairs of the PrimFuncs it lowered to.
    """

    model: Path
    observations: list[Observation] = field(default_factory=list)
    seeds: list[tuple[str, str]] = field(default_factory=list)
    failures: list[LoaderFailure] = field(default_factory=list)
    imports_raw: bool = True
    """Whether TVM imports the model as it is (not only once constant-folded)."""
    killed: bool = False
    """Whether an attempt was SIGKILLed from outside (an operator, the OOM killer): then the load says
    nothing about the model, and a campaign loads it again on ``--resume``."""


class Level(Protocol):
    """One level (see the module docstring)."""

    name: str
    """Its name in :mod:`seedzer.level_table`, also its finding kind's."""
    fuzzer: FuzzerFactory
    """Makes its fuzzer in a worker (a module-level callable: workers and Ray actors receive it by reference)."""
    mutations: frozenset[str]
    """The names its mutators give the mutations they make (``status``: bugs and mutants by mutation)."""

    def seeds(self, loaded: ModelSeeds) -> list[CorpusEntry]:
        """Its initial corpus entries from one loaded pool model (none where the model gives none)."""
        ...

    def check_entry(self, script: str, passes: str, models: Sequence[Path]) -> EntryFault | None:
        """Why a corpus entry's ``script`` and sequence (``passes``, JSON) read back from disk
        (``--resume``: the files may have been edited) cannot be fuzzed in a campaign of the pool
        ``models`` (resolved paths), in one line, and which of the two is at fault; None when it can."""
        ...

    def api(self) -> LevelApi | None:
        """The operations of the installed TVM's API the level means to exercise, read at run time (TVM-free
        here: a child process reads them), for "exercised N of M"; None for a level that names none (or when
        the child cannot read them)."""
        ...
