"""Turning a campaign's seed pool into initial corpus entries, and load failures into findings.

Every pool model not loaded before is loaded (raw, then constant-folded, each attempt in a child
forked from the zygote): each level the campaign fuzzes makes its seeds of what loading gave
(:meth:`seedzer.levels.level.Level.seeds`), and the model's failures are ``load`` findings (filed and
gated like every finding). Ctrl-C stops at the next model; ``--resume`` loads the rest.

A load whose attempt was SIGKILLed from outside (an operator, a chaos test, the OOM killer) says
nothing about the model: the model is recorded as ``killed`` (campaign.db ``models``) and loaded
again on ``--resume``; one whose load was killed :data:`KILLED_LOADS` times in a row is given up,
recorded as failed with the reason saying so. A campaign can instead start from corpus entries it is
given (another campaign's, see :func:`seedzer.campaign.seeds.imported_entries`):
:meth:`Loading.import_entries`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Protocol

from seedzer.campaign.monitor import Monitor
from seedzer.campaign.pending import PendingSeeds
from seedzer.campaign.seeds import load_for_campaign
from seedzer.campaign.stats import CampaignStats
from seedzer.config import Config
from seedzer.errors import PoolError
from seedzer.kernel.common import Observation, Stage, Symptom
from seedzer.levels.level import ModelSeeds
from seedzer.levels.registry import level
from seedzer.load.bounds import Limits
from seedzer.load.loader import LoaderFailure
from seedzer.store.corpus import Corpus, CorpusEntry
from seedzer.store.db import CampaignDB

SeedLoader = Callable[[Path, bool, float, int, Limits], ModelSeeds]
"""(model, differential check, time limit per attempt, most seeds kept) -> what loading gave."""
KILLED_LOADS = 3
"""Loads of one model SIGKILLed from outside in a row (one per campaign session) after which the model
is given up: an OOM killer that takes it every time, not an operator's one-off."""
KILLED = "killed"
"""campaign.db ``models.status`` of a model whose load was SIGKILLed from outside (loaded again on resume)."""


class LoadFailures(Protocol):
    """Where the failures of loading a model go (:meth:`seedzer.campaign.filing.Filing.loaded`)."""

    def loaded(self, model: Path, failure: LoaderFailure) -> None:
        """File one failure of loading ``model``."""
        ...


class Loading:
    """The campaign's models and their seeds; owns the list of models (the pool's, then the epochs' it
    took in) and the count of each model's loads killed in a row."""

    def __init__(self, cfg: Config, pool: Path, models: Sequence[Path], db: CampaignDB, corpus: Corpus,
                 pending: PendingSeeds, failures: LoadFailures, stats: CampaignStats, monitor: Monitor,
                 loader: SeedLoader | None = None) -> None:
        self.cfg, self.pool, self.db, self.corpus, self.pending = cfg, pool, db, corpus, pending
        self.failures, self.stats, self.monitor = failures, stats, monitor
        self.loader: SeedLoader = loader or load_for_campaign
        self.models = list(models)
        """Every model the campaign's entries may come from: the pool's, and the epochs' taken in."""
        self.kills = db.killed_loads()
        """Model name -> its loads killed in a row (only models whose last load was killed)."""

    def load_pool(self, stopping: Callable[[], bool]) -> None:
        """Load every model not loaded before (and those whose last load was killed); loader failures
        are findings, never fatal. ``stopping``: True once a stop was requested (Ctrl-C)."""
        cfg = self.cfg
        done = self.db.loaded_models()
        for model in self.models:
            if stopping():  # Ctrl-C while loading: the models not loaded yet are loaded on --resume
                return
            if model.name in done and model.name not in self.kills:
                continue
            got = self.loader(model, cfg.fuzz.differential_load, cfg.timeouts.load, cfg.fuzz.max_seeds_per_model,
                              cfg.limits.limits())
            self.take(model, got)
        if not self.corpus.entries and self.kills:
            raise PoolError(f"{self.pool}: no usable seeds yet: the loads of {len(self.kills)} of {len(self.models)} "
                            "models were killed by SIGKILL from outside; --resume loads them again")
        if not self.corpus.entries:
            raise PoolError(f"{self.pool}: no usable seeds ({len(self.models)} models, none could be loaded)")

    def take(self, model: Path, got: ModelSeeds) -> int:
        """Take in what loading ``model`` gave: its failures are filed, the seeds of every level fuzzed join
        the corpus (and the line of seeds to run first), the model is recorded as loaded (as killed, or
        given up, when its load was SIGKILLed from outside and gave no seed); returns the number of
        entries added."""
        for failure in got.failures:
            self.failures.loaded(model, failure)
        added = 0
        entries = [entry for name in self.cfg.levels.weights() for entry in level(name).seeds(got)]
        for entry in entries:
            if self.corpus.add(entry, 0, ["initial"]):
                self.pending.append(entry)
                added += 1
        killed_before = self.kills.pop(model.name, 0)
        kills = killed_before + 1 if got.killed and not got.seeds else 0
        observations = ([self._given_up(kills)] if kills >= KILLED_LOADS else []) + list(got.observations)
        detail: dict[str, object] = {"observations": [o.to_json() for o in observations]}
        if kills:
            detail["killed"] = kills
        status = "ok" if got.seeds else KILLED if 0 < kills < KILLED_LOADS else "failed"
        self.db.set_model(model.name, status, added, detail)
        if got.seeds:
            self.stats.loaded_models += 1
        elif status == KILLED:
            self.kills[model.name] = kills
            self.monitor.message(f"warning: {model}: its load was killed by SIGKILL from outside (an operator or the "
                                 f"OOM killer; {kills} of {KILLED_LOADS} in a row); --resume loads it again")
        else:
            self.stats.failed_models += 1
            first = next((o.headline() for o in observations), "no seeds")
            self.monitor.message(f"warning: {model}: skipped, cannot be loaded ({first[:160]})")
        self.stats.corpus = len(self.corpus)
        self.monitor.update(self.stats)
        return added

    @staticmethod
    def _given_up(kills: int) -> Observation:
        return Observation(Symptom.INVALID, Stage.LOAD, None,
                           f"its load was killed by SIGKILL from outside {kills} times in a row (the OOM killer or "
                           "an operator); given up")

    def add_models(self, models: Sequence[Path]) -> None:
        """More models the campaign's entries may come from (an epoch's, taken in or resumed)."""
        self.models.extend(models)

    def import_entries(self, entries: Sequence[CorpusEntry]) -> None:
        """Add ``entries`` (e.g. another campaign's late corpus) to the corpus instead of loading pool
        models: as seeds executed first, except those marked ``executed`` (fuzzed at once); entries
        already in the corpus (a resume) are not added again."""
        for entry in entries:
            if self.corpus.add(entry, 0, ["imported"]) and not entry.executed:
                self.pending.append(entry)
        self.stats.corpus = len(self.corpus)
        self.monitor.update(self.stats)
        if not self.corpus.entries:
            raise PoolError(f"{self.pool}: no seeds to import")
