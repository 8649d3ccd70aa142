"""What ``seedzer load --out`` writes: ``seeds/<id>.py``, ``seeds.jsonl``, loader findings, the report.

Layout of the output directory::

    seeds/<seed id>.py           TVMScript of one PrimFunc named main
    seeds.jsonl                  one line per unique seed: id, file, origin, op, fused, folded, passes,
                                 and every (model, op) it came from
    findings/<model stem>-<signature>/   a loader finding folder (:mod:`seedzer.finding.loader.folder`,
                                 the same as a campaign files): meta.json, model.onnx, case.json, repro.py
    load_report.json             the pool's load report
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from seedzer.errors import CampaignError
from seedzer.finding.loader.folder import loader_finding, write_loader_finding
from seedzer.finding.loader.funnel import LoadReport
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
    """Write a loader finding folder for every bug a model's load showed (one per model and
    signature); return the folders written."""
    written: list[Path] = []
    for r in results:
        for failure in r.failures():
            meta, files = loader_finding(Path(r.path), failure)
            folder = out / "findings" / f"{Path(r.model).stem}-{meta.signature}"
            if folder not in written:
                written.append(write_loader_finding(folder, meta, files))
    return written


def write_all(out: Path, results: list[ModelLoad], report: LoadReport) -> int:
    """Seeds, ``seeds.jsonl``, loader findings and ``load_report.json`` under ``out``.

    Returns the number of unique seeds written."""
    unique = write_seeds(out, results)
    write_findings(out, results)
    report.write(out / "load_report.json")
    return unique
