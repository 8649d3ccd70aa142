"""Turning a seed pool into initial corpus entries; each load attempt runs in an isolated child."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from seedzer.errors import PoolError, shown
from seedzer.execute.loader import OnnxLoader
from seedzer.kernel.common import Observation
from seedzer.load.loader import LoaderFailure, LoadOptions, ModelLoad
from seedzer.load.loader import pool_models as _pool_models


def list_pool(pool: Path) -> list[Path]:
    """The models of a pool (manifest order, else ``*.onnx``); a missing or empty pool is an error.

    A pool with a ``manifest.json`` is read strictly: an unreadable manifest, a listed path that
    leaves the pool, or a listed model that is missing or differs from its recorded sha256 is a
    one-line :class:`PoolError`, before anything is created (the same rules as ``pool stats``).
    """
    from seedzer.generate.pool import MANIFEST, verified_models

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


@dataclass
class ModelSeeds:
    """What loading one model for a campaign gave.

    ``observations`` are every attempt's failures and notes (``invalid`` ones included);
    ``failures`` are the bug observations with what their finding folders need (file each with
    :func:`seedzer.finding.loader.folder.loader_finding`); ``seeds`` are ``(script, op)`` pairs.
    """

    model: Path
    observations: list[Observation] = field(default_factory=list)
    seeds: list[tuple[str, str]] = field(default_factory=list)
    failures: list[LoaderFailure] = field(default_factory=list)


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


def load_for_campaign(model: Path, differential: bool, timeout: float, max_seeds: int) -> ModelSeeds:
    """Load ``model`` (raw, then constant-folded), each attempt in a child forked from the zygote;
    crashes and hangs of the importer are observations."""
    loader = OnnxLoader(LoadOptions(differential=differential, timeout=timeout), isolate=True)
    result: ModelLoad = loader.load(model)
    items = [(s.seed.script, s.op, s.fused) for s in result.seeds]
    return ModelSeeds(model, list(result.observations), spread(items, max_seeds), result.failures())
