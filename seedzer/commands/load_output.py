"""What ``seedzer load --out`` writes: ``seeds/<id>.py``, ``seeds.jsonl``, load findings, the report.

Layout of the output directory::

    seeds/<seed id>.py           TVMScript of one PrimFunc named main
    seeds.jsonl                  one line per unique seed: id, file, origin, op, fused, folded, passes,
                                 and every (model, op) it came from
    findings/<model stem>-<signature>/   a load finding folder (:mod:`seedzer.finding.load.folder`,
                                 the same as a campaign files): meta.json, model.onnx, case.json, repro.py
    load_report.json             the pool's load report
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from seedzer.commands.load_report import LoadReport
from seedzer.errors import CampaignError
from seedzer.finding.kind import FileSettings, Observed, Provenance
from seedzer.finding.registry import POOL_KIND, kind
from seedzer.finding.store import dump
from seedzer.load.loader import ModelLoad
from seedzer.seed import passes_to_json
from seedzer.store.atomic import write_atomic


def prepare(out: Path) -> None:
    """Create the output directory and its ``seeds/`` folder; raise :class:`CampaignError` naming it."""
    try:
        (out / "seeds").mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise CampaignError(f"cannot create output directory {out}: {exc.strerror or exc}") from exc


def write_seeds(out: Path, results: list[ModelLoad]) -> int:
    """Write every unique seed of ``results`` and ``seeds.jsonl``; return the number of unique seeds."""
    prepare(out)
    lines: dict[str, dict[str, Any]] = {}
    for r in results:
        for loaded in r.seeds:
            seed = loaded.seed
            entry = lines.get(seed.seed_id)
            if entry is None:
                write_atomic(out / "seeds" / f"{seed.seed_id}.py", seed.script)
                entry = lines[seed.seed_id] = {
                    "id": seed.seed_id, "file": f"seeds/{seed.seed_id}.py", "origin": seed.origin, "op": loaded.op,
                    "fused": loaded.fused, "folded": r.folded, "passes": json.loads(passes_to_json(seed.passes)),
                    "sources": [],
                }
            entry["sources"].append({"model": r.model, "op": loaded.op, "fused": loaded.fused})
    write_atomic(out / "seeds.jsonl", "".join(json.dumps(e, sort_keys=True) + "\n" for e in lines.values()))
    return len(lines)


def write_findings(out: Path, results: list[ModelLoad]) -> list[Path]:
    """Write a ``load`` finding folder (as a campaign files them) for every bug a model's load showed
    (one per model and signature); return the folders written."""
    written: list[Path] = []
    pool = kind(POOL_KIND)
    for r in results:
        for failure in r.failures():
            observed = Observed(failure.observation, failure, Provenance(origin=Path(r.path).name), log=failure.log,
                                source=Path(r.path))
            folder = out / "findings" / f"{Path(r.model).stem}-{pool.signature(observed)}"
            if folder not in written:
                written.append(dump(folder, pool.file(observed, FileSettings()).finding))
    return written


def write_all(out: Path, results: list[ModelLoad], report: LoadReport) -> int:
    """Seeds, ``seeds.jsonl``, load findings and ``load_report.json`` under ``out``.

    Returns the number of unique seeds written."""
    unique = write_seeds(out, results)
    write_findings(out, results)
    report.write(out / "load_report.json")
    return unique
