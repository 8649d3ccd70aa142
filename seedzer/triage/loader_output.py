"""Writing a load's results: ``seeds/<id>.py``, ``seeds.jsonl``, mismatch reproducers, the report.

Layout of the output directory::

    seeds/<seed id>.py           TVMScript of one PrimFunc named main
    seeds.jsonl                  one line per unique seed: id, file, origin, op, fused, folded, passes,
                                 and every (model, op) it came from
    findings/<model stem>-<signature>/   repro.py + the model (folded if needed) + reference .npz
    load_report.json             the pool's load report
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

from seedzer.errors import CampaignError
from seedzer.load.loader import ModelLoad
from seedzer.load.refdata import find_reference
from seedzer.load.report import LoadReport
from seedzer.load.repro import repro_for_outcome
from seedzer.load.signature import signature
from seedzer.outcome import Symptom
from seedzer.seed import passes_to_json


def _write_atomic(path: Path, text: str | bytes) -> None:
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    if isinstance(text, bytes):
        tmp.write_bytes(text)
    else:
        tmp.write_text(text)
    tmp.replace(path)


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
                _write_atomic(out / "seeds" / f"{seed.seed_id}.py", seed.script)
                entry = lines[seed.seed_id] = {
                    "id": seed.seed_id,
                    "file": f"seeds/{seed.seed_id}.py",
                    "origin": seed.origin,
                    "op": loaded.op,
                    "fused": loaded.fused,
                    "folded": r.folded,
                    "passes": json.loads(passes_to_json(seed.passes)),
                    "sources": [],
                }
            entry["sources"].append({"model": r.model, "op": loaded.op, "fused": loaded.fused})
    text = "".join(json.dumps(e, sort_keys=True) + "\n" for e in lines.values())
    _write_atomic(out / "seeds.jsonl", text)
    return len(lines)


def write_findings(out: Path, results: list[ModelLoad]) -> list[Path]:
    """Write a reproducer folder for every loader mismatch; return the folders written."""
    written: list[Path] = []
    for r in results:
        for o in r.outcomes:
            if o.symptom is not Symptom.MISMATCH:
                continue
            folder = out / "findings" / f"{Path(r.model).stem}-{signature(o)}"
            folder.mkdir(parents=True, exist_ok=True)
            model_file = "model.onnx"
            if o.detail.get("attempt") == "folded" and r.folded_model:
                _write_atomic(folder / model_file, r.folded_model)
            else:
                shutil.copyfile(r.path, folder / model_file)
            ref = find_reference(Path(r.path))
            detail = dict(o.detail)
            if ref is not None and detail.get("ref_npz"):
                shutil.copyfile(ref, folder / ref.name)
            _write_atomic(folder / "repro.py", repro_for_outcome(detail, model_file, o.message))
            meta = {"model": r.model, "outcome": o.to_dict(), "signature": signature(o)}
            _write_atomic(folder / "finding.json", json.dumps(meta, indent=1, sort_keys=True))
            written.append(folder)
    return written


def write_all(out: Path, results: list[ModelLoad], report: LoadReport) -> int:
    """Seeds, ``seeds.jsonl``, mismatch reproducers and ``load_report.json`` under ``out``.

    Returns the number of unique seeds written."""
    unique = write_seeds(out, results)
    write_findings(out, results)
    report.write(out / "load_report.json")
    return unique
