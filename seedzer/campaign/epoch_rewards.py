"""What each model a campaign fuzzed yielded, the bandit's reward (:mod:`seedzer.generate.bandit`).

A model's reward adds three things its lineage (the corpus entries whose ``origin`` is the model) gave:

- **new coverage**: its entries kept beyond its seeds (each kept mutant reached new coverage);
- **rare optimizations**: for every pass one of its entries triggered (changed the IR), one over the
  number of entries of the whole corpus that triggered it (a pass only its lineage triggers counts 1);
- **bug roots**: :data:`ROOT_WEIGHT` per distinct root (or raw signature, before the gate's verdict) of
  the findings whose ``meta.json`` names the model as origin and that the gate has not dismissed,
  its loading's own findings included.
"""

from __future__ import annotations

import contextlib
import json
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from seedzer.finding.meta import NOT_A_BUG
from seedzer.generate.bandit import ModelOutcome
from seedzer.store.corpus import CorpusEntry
from seedzer.store.db import FindingRow

ROOT_WEIGHT = 5.0
"""Reward of one bug root, in kept corpus entries (a root is rarer and worth more than new coverage)."""


@dataclass(frozen=True)
class ModelInfo:
    """A model a campaign fuzzes: its file name (corpus entries' ``origin``), its epoch (0: the pool
    given) and its operators, NNSmith's (``nnsmith_ops`` of its manifest entry) and ONNX's (``ops``), and
    the attribute values it was made with (``attributes``: :mod:`seedzer.generate.attribute_arms`)."""

    name: str
    epoch: int
    nnsmith_ops: tuple[str, ...]
    onnx_ops: tuple[str, ...]
    attributes: tuple[str, ...] = ()


def models_of_manifest(manifest: dict[str, Any], epoch: int) -> list[ModelInfo]:
    """The models a pool manifest lists, as :class:`ModelInfo` of ``epoch``."""
    out = []
    for entry in manifest.get("models") or []:
        if isinstance(entry, dict) and isinstance(entry.get("file"), str):
            out.append(ModelInfo(Path(entry["file"]).name, epoch, tuple(map(str, entry.get("nnsmith_ops") or ())),
                                 tuple(map(str, entry.get("ops") or ())),
                                 tuple(map(str, entry.get("attributes") or ()))))
    return out


def finding_origins(findings_dir: Path, rows: Iterable[FindingRow]) -> dict[str, set[str]]:
    """Model name -> the roots (a pending candidate's own signature) of the findings it is the origin
    of, the gate's dismissals left out; a folder whose ``meta.json`` cannot be read is skipped."""
    out: dict[str, set[str]] = {}
    for row in rows:
        if row.verdict == NOT_A_BUG:
            continue
        with contextlib.suppress(OSError, ValueError, TypeError, AttributeError):
            origin = json.loads((findings_dir / row.signature / "meta.json").read_text()).get("origin")
            if isinstance(origin, str) and origin:
                out.setdefault(Path(origin).name, set()).add(row.root or row.signature)
    return out


def rewards(models: Iterable[ModelInfo], entries: Iterable[CorpusEntry],
            roots: dict[str, set[str]]) -> list[ModelOutcome]:
    """Each model's outcome (see the module docstring), in the order ``models`` are given."""
    entries = list(entries)
    kept: Counter[str] = Counter(e.origin for e in entries if e.parent is not None)
    triggered_by: Counter[str] = Counter(p for e in entries for p in set(e.triggered))
    lineage: dict[str, set[str]] = {}
    for e in entries:
        lineage.setdefault(e.origin, set()).update(e.triggered)
    out = []
    for m in models:
        rare = sum(1.0 / triggered_by[p] for p in lineage.get(m.name, ()))
        reward = kept[m.name] + rare + ROOT_WEIGHT * len(roots.get(m.name, ()))
        out.append(ModelOutcome(m.name, m.epoch, m.nnsmith_ops, m.onnx_ops, round(reward, 6), m.attributes))
    return out
