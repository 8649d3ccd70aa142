"""Turning a seed pool into initial corpus entries, each model loaded in an isolated process."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from seedzer.errors import PoolError
from seedzer.execute.isolated import run_isolated
from seedzer.outcome import Outcome, Stage
from seedzer.protocols import LoadResult


def list_pool(pool: Path) -> list[Path]:
    """The models of a pool: those in ``manifest.json`` (in order) or, without one, ``*.onnx``."""
    pool = Path(pool)
    if not pool.is_dir():
        raise PoolError(f"{pool}: seed pool directory does not exist")
    manifest = pool / "manifest.json"
    if manifest.exists():
        try:
            data = json.loads(manifest.read_text())
            models = [pool / m["file"] for m in data.get("models", [])]
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise PoolError(f"{manifest}: unreadable pool manifest ({exc})") from exc
    else:
        models = sorted(pool.glob("*.onnx"))
    if not models:
        raise PoolError(f"{pool}: seed pool has no models (no manifest.json entries and no *.onnx files)")
    return models


def load_model_task(path: str, differential: bool) -> LoadResult:
    """Worker-side: load one model with the ONNX loader (runs in a forked child)."""
    from seedzer.load import OnnxLoader

    return OnnxLoader(differential=differential).load(Path(path))


@dataclass
class ModelSeeds:
    """The outcome of loading one model for a campaign."""

    model: Path
    result: LoadResult | None
    failure: Outcome | None = None
    seeds: list[tuple[str, str]] = field(default_factory=list)  # (script, op)


def load_for_campaign(model: Path, differential: bool, timeout: float, max_seeds: int) -> ModelSeeds:
    """Load ``model`` in an isolated child; a crash or hang of the importer becomes an outcome."""
    res = run_isolated(load_model_task, str(model), differential, timeout=timeout, stage=Stage.LOAD)
    if not res.ok:
        return ModelSeeds(model, None, res.outcome)
    result: LoadResult = res.value
    seeds = [(s.seed.script, s.op) for s in result.seeds]
    if max_seeds > 0:
        seeds = seeds[:max_seeds]
    return ModelSeeds(model, result, None, seeds)
