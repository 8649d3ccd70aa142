"""Replaying findings: run their ``repro.py`` in a clean process and say whether the bug is still there.

Works on one finding folder or on every finding of a campaign, with any Python interpreter (e.g. a
virtualenv holding another TVM version). A reproducer exits 1 (a crash: dies by its signal) while
the bug is present, 0 once it is gone, anything else is an error (a different failure, a timeout).
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path

from seedzer.errors import SeedzerError
from seedzer.triage.materialize import materialize, read_meta, run_repro


@dataclass
class ReplayResult:
    """The verdict on one finding."""

    signature: str
    symptom: str
    verdict: str  # still-present | fixed | error
    returncode: int | None
    seconds: float
    detail: str = ""


def finding_dirs(path: Path) -> list[Path]:
    """The finding folders under ``path`` (a finding, a campaign or its findings/ directory)."""
    path = Path(path)
    if (path / "meta.json").exists():
        return [path]
    root = path / "findings" if (path / "findings").is_dir() else path
    found = sorted(p.parent for p in root.glob("*/meta.json"))
    if not found:
        raise SeedzerError(f"{path}: neither a finding folder nor a campaign with findings")
    return found


def verdict(symptom: str, returncode: int | None) -> str:
    """still-present / fixed / error from a reproducer's exit status."""
    if returncode is None:
        return "error"
    if returncode == 1 or (symptom == "crash" and returncode < 0):
        return "still-present"
    return "fixed" if returncode == 0 else "error"


def replay_one(folder: Path, python: str = sys.executable, reduced: bool = False,
               timeout: float = 900.0) -> ReplayResult:
    """Run one finding's reproducer (``reduced/repro.py`` with ``reduced``); a low-level finding
    without ``repro.py`` is materialized first."""
    meta = read_meta(folder)
    symptom = meta["outcome"]["symptom"]
    path = folder / "reduced" / "repro.py" if reduced else folder / "repro.py"
    if not path.exists() and not reduced and meta.get("kind", "lowlevel") == "lowlevel":
        materialize(folder)
    if not path.exists():
        return ReplayResult(folder.name, symptom, "error", None, 0.0, f"no {path.relative_to(folder)}")
    case_path = folder / "case.json"
    if case_path.exists():
        timeout = max(timeout, json.loads(case_path.read_text()).get("timeout", 0) + 120.0)
    code, seconds, out = run_repro(path, python, timeout)
    tail = [ln for ln in out.strip().splitlines() if ln.startswith(("observed", "error", "not reproduced"))]
    return ReplayResult(folder.name, symptom, verdict(symptom, code), code, seconds, (tail or [""])[-1][:200])
