"""Turning a campaign's seed pool into initial corpus entries, and load failures into findings.

Every pool model not loaded before is loaded (raw, then constant-folded, each attempt in a child
forked from the zygote): each level the campaign fuzzes makes its seeds of what loading gave
(:meth:`seedzer.levels.level.Level.seeds`), and the model's failures are ``load`` findings (filed and
gated like every finding). Ctrl-C stops at the next model; ``--resume``
loads the rest. A campaign can instead start from corpus entries it is given (another campaign's,
see :func:`seedzer.campaign.seeds.imported_entries`): :func:`import_seeds`.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Protocol

from seedzer.campaign.filing import Filing
from seedzer.campaign.monitor import Monitor
from seedzer.campaign.seeds import load_for_campaign
from seedzer.campaign.stats import CampaignStats
from seedzer.config import Config
from seedzer.errors import PoolError
from seedzer.levels.level import ModelSeeds
from seedzer.levels.registry import level
from seedzer.load.bounds import Limits
from seedzer.store.corpus import Corpus, CorpusEntry
from seedzer.store.db import CampaignDB

SeedLoader = Callable[[Path, bool, float, int, Limits], ModelSeeds]
"""(model, differential check, time limit per attempt, most seeds kept) -> what loading gave."""


class Loading(Protocol):
    """What loading needs of a campaign (its store, corpus, filing, statistics and pool)."""

    cfg: Config
    db: CampaignDB
    corpus: Corpus
    filing: Filing
    stats: CampaignStats
    monitor: Monitor
    models: list[Path]
    pool: Path
    pending: deque[CorpusEntry]

    def stopping(self) -> bool:
        """True once a stop was requested (Ctrl-C)."""
        ...


def load_seeds(campaign: Loading, loader: SeedLoader | None = None) -> None:
    """Load every pool model of ``campaign`` not loaded before; loader failures are findings, never fatal."""
    load = loader or load_for_campaign
    cfg = campaign.cfg
    done = campaign.db.loaded_models()
    for model in campaign.models:
        if campaign.stopping():  # Ctrl-C while loading: the models not loaded yet are loaded on --resume
            return
        if model.name in done:
            continue
        got = load(model, cfg.fuzz.differential_load, cfg.timeouts.load, cfg.fuzz.max_seeds_per_model,
                   cfg.limits.limits())
        take_model(campaign, model, got)
    if not campaign.corpus.entries:
        raise PoolError(f"{campaign.pool}: no usable seeds ({len(campaign.models)} models, none could be loaded)")


def take_model(campaign: Loading, model: Path, got: ModelSeeds) -> int:
    """Take in what loading ``model`` gave: its failures are filed, the seeds of every level fuzzed join
    the corpus (and the line of seeds to run first), the model is recorded as loaded; returns the
    number of entries added."""
    for failure in got.failures:
        campaign.filing.loaded(model, failure)
    added = 0
    entries = [entry for name in campaign.cfg.levels.weights() for entry in level(name).seeds(got)]
    for entry in entries:
        if campaign.corpus.add(entry, 0, ["initial"]):
            campaign.pending.append(entry)
            added += 1
    detail = {"observations": [o.to_json() for o in got.observations]}
    campaign.db.set_model(model.name, "ok" if got.seeds else "failed", added, detail)
    if got.seeds:
        campaign.stats.loaded_models += 1
    else:
        campaign.stats.failed_models += 1
        first = next((o.headline() for o in got.observations), "no seeds")
        campaign.monitor.message(f"warning: {model}: skipped, cannot be loaded ({first[:160]})")
    campaign.stats.corpus = len(campaign.corpus)
    campaign.monitor.update(campaign.stats)
    return added


def import_seeds(campaign: Loading, entries: Sequence[CorpusEntry]) -> None:
    """Add ``entries`` (e.g. another campaign's late corpus) to the corpus instead of loading pool
    models: as seeds executed first, except those marked ``executed`` (fuzzed at once); entries
    already in the corpus (a resume) are not added again."""
    for entry in entries:
        if campaign.corpus.add(entry, 0, ["imported"]) and not entry.executed:
            campaign.pending.append(entry)
    campaign.stats.corpus = len(campaign.corpus)
    campaign.monitor.update(campaign.stats)
    if not campaign.corpus.entries:
        raise PoolError(f"{campaign.pool}: no seeds to import")
