"""Turning a seed pool into initial corpus entries (each load attempt runs in an isolated child), or
another campaign's corpus entries into seeds (:func:`imported_entries`)."""

from __future__ import annotations

import contextlib
import math
from pathlib import Path

from seedzer.errors import CampaignError, PoolError, SeedzerError, shown
from seedzer.execute.isolated_load import OnnxLoader
from seedzer.finding.meta import inside
from seedzer.levels.level import ModelSeeds
from seedzer.load.bounds import Limits
from seedzer.load.loader import LoadOptions, ModelLoad
from seedzer.load.loader import pool_models as _pool_models
from seedzer.seed import passes_from_json, passes_to_json
from seedzer.store.corpus import CORPUS_DIR, CorpusEntry, entry_id
from seedzer.store.reader import CampaignReader, UnreadableCampaign


def list_pool(pool: Path) -> list[Path]:
    """The models of a pool (manifest order, else ``*.onnx``); a missing or empty pool is an error.

    A pool with a ``manifest.json`` is read strictly: an unreadable manifest, a listed path that
    leaves the pool, or a listed model that is missing or differs from its recorded sha256 is a
    one-line :class:`PoolError`, before anything is created (the same rules as ``pool stats``).
    """
    from seedzer.generate.seed_pool import MANIFEST, verified_models

    pool = Path(pool)
    if pool.exists() and not pool.is_dir():
        raise PoolError(f"{pool}: not a directory (a seed pool is a directory of models)")
    if not pool.is_dir():
        raise PoolError(f"{pool}: seed pool directory does not exist")
    if (pool / MANIFEST).exists():
        return verified_models(pool)
    models = _pool_models(pool)
    if not models:
        raise PoolError(f"{pool}: seed pool has no models (no manifest.json entries and no *.onnx files)")
    for model in models:
        try:
            str(model).encode("utf-8")
        except UnicodeEncodeError:
            raise PoolError(f"{shown(model)}: the file name is not UTF-8 text; rename the file") from None
    return models


def spread(items: list[tuple[str, str, bool]], limit: int) -> list[tuple[str, str]]:
    """Keep at most ``limit`` seeds (0 = all), alternating fused and per-operator ones."""
    fused = [(s, op) for s, op, f in items if f]
    plain = [(s, op) for s, op, f in items if not f]
    out: list[tuple[str, str]] = []
    while (fused or plain) and (limit <= 0 or len(out) < limit):
        for group in (plain, fused):
            if group and (limit <= 0 or len(out) < limit):
                out.append(group.pop(0))
    return out


def load_for_campaign(model: Path, differential: bool, timeout: float, max_seeds: int,
                      limits: Limits | None = None) -> ModelSeeds:
    """Load ``model`` (raw, then constant-folded), each attempt in a child forked from the zygote and
    bounded by ``limits`` (None: the defaults); crashes and hangs of the importer are observations."""
    loader = OnnxLoader(LoadOptions(differential=differential, timeout=timeout, limits=limits or Limits()),
                        isolate=True)
    result: ModelLoad = loader.load(model)
    items = [(s.seed.script, s.op, s.fused) for s in result.seeds]
    return ModelSeeds(model, list(result.observations), spread(items, max_seeds), result.failures(),
                      result.final_attempt == "raw" and "import" in result.reached.get("raw", []), result.killed)


def imported_entries(source: Path, late_share: float = 1.0) -> list[CorpusEntry]:
    """The corpus entries of another campaign (``source``, finished or running, opened read-only),
    the last ``late_share`` of them by the time they were added, oldest first: seeds that start a
    new campaign where ``source`` ended (its late, larger programs with long pass sequences).

    Each entry is read from its script file (``corpus/<id><suffix>``, its level's) and
    ``corpus/<id>.passes.json`` (the database's pass sequence when that file is missing); an entry
    without its script is skipped. A campaign with no
    readable entry is a one-line :class:`CampaignError`.
    """
    source = Path(source)
    if not 0 < late_share <= 1:
        raise CampaignError(f"late share must be in (0, 1], got {late_share}")
    try:
        with CampaignReader.open(source / "campaign.db", checked=False) as reader:
            rows = reader.corpus_rows()
    except UnreadableCampaign as exc:
        raise CampaignError(f"{source}: cannot read the corpus of campaign.db ({exc.cause})") from None
    late = rows[len(rows) - max(1, math.ceil(late_share * len(rows))):] if rows else []
    entries = []
    for row in late:
        seed_id, origin, passes, op, level = row.id, row.origin_model, row.passes, row.op, row.level
        folder = source / CORPUS_DIR
        if not level:  # a path of no level's suffix, from before entries carried their level
            continue
        try:
            script = inside(source, row.path).read_text()
        except (OSError, SeedzerError):
            continue
        with contextlib.suppress(OSError):  # without the file, the database's copy of the sequence
            passes = (folder / f"{seed_id}.passes.json").read_text()
        try:
            steps = passes_from_json(passes)
        except (ValueError, KeyError, TypeError):
            continue
        entries.append(CorpusEntry(entry_id(level, script, steps), script, passes_to_json(steps), str(origin),
                                   None, str(op or ""), level=level))
    if not entries:
        raise CampaignError(f"{source}: no corpus entry to import (no readable corpus file)")
    return entries
