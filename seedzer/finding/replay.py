"""Replaying findings: run their ``repro.py`` in a clean interpreter and say whether the bug is still there.

Works on one finding folder or on every finding of a campaign, with any Python interpreter (e.g. a
virtualenv holding another TVM version). A reproducer exits 1 (a crash: dies by its signal) while the
bug is present, 0 once it is gone, 2 on a different failure and 3 when its environment is broken (an
import failed): only 1 (or the crash's signal) is ``still-present`` and only 0 is ``fixed``; anything
else is an ``error`` with the reason, never a verdict on the bug.
"""

from __future__ import annotations

import signal
import sys
from dataclasses import dataclass
from pathlib import Path

from seedzer.errors import SeedzerError
from seedzer.finding.layout import META_FILE, REDUCED_DIR, REPRO_FILE
from seedzer.finding.meta import FindingMeta
from seedzer.finding.registry import kind
from seedzer.finding.repro import run_repro
from seedzer.kernel.common import (
    EXIT_BROKEN,
    EXIT_DIFFERENT,
    EXIT_GONE,
    EXIT_PRESENT,
    GONE_LINE,
    HANG_LINE,
    PRESENT_LINE,
)


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
    if (path / META_FILE).exists():
        return [path]
    root = path / "findings" if (path / "findings").is_dir() else path
    found = sorted(p.parent for p in root.glob(f"*/{META_FILE}") if not p.parent.name.startswith("."))
    if not found:
        raise SeedzerError(f"{path}: neither a finding folder nor a campaign with findings")
    return found


def verdict(symptom: str, returncode: int | None, output: str) -> tuple[str, str]:
    """``(still-present | fixed | error, why)`` from how a reproducer ended and what it printed.

    A verdict needs the reproducer's own verdict line as well as its exit status, so an interpreter
    that is not running it (``/bin/false`` exits 1 too) is an error, never a verdict on the bug."""
    if returncode is None:
        return "error", "the reproducer ran over its time limit"
    if symptom == "crash" and returncode < 0 and -returncode != signal.SIGKILL:
        return "still-present", ""
    if returncode == EXIT_PRESENT and (PRESENT_LINE in output or (symptom == "hang" and HANG_LINE in output)):
        return "still-present", ""
    if returncode == EXIT_GONE and GONE_LINE in output:
        return "fixed", ""
    if returncode == EXIT_BROKEN:
        return "error", "broken environment: the interpreter cannot import what the reproducer needs"
    if returncode == EXIT_DIFFERENT and "observed" in output:
        return "error", "a different failure"
    if returncode < 0:
        return "error", f"killed by signal {-returncode}"
    return "error", f"exit status {returncode} without the reproducer's verdict (not a working interpreter?)"


def replay_one(folder: Path, python: str = sys.executable, reduced: bool = False,
               timeout: float = 900.0) -> ReplayResult:
    """Run one finding's reproducer (``reduced/repro.py`` with ``reduced``); a TIR finding
    without ``repro.py`` gets one written from its case first."""
    meta = FindingMeta.load(folder)
    symptom = meta.observation.symptom.value
    path = folder / REDUCED_DIR / REPRO_FILE if reduced else kind(meta.kind).ensure_repro(folder, meta)
    if not path.exists():
        return ReplayResult(folder.name, symptom, "error", None, 0.0, f"no {path.relative_to(folder)}")
    run = run_repro(path, python, timeout)
    outcome, why = verdict(symptom, run.returncode, run.output)
    tail = [ln for ln in run.output.strip().splitlines() if ln.startswith(("observed", "broken", "reproduced"))]
    detail = why or (tail[-1] if tail else "")
    reason = meta.extra.get("filter_reason")
    if reason:  # a sample of what the filters turned away: the reproducer applies no filter
        detail = f"filtered before the gate ({reason}){': ' + detail if detail else ''}"
    return ReplayResult(folder.name, symptom, outcome, run.returncode, run.seconds, detail[:200])


__all__ = ["ReplayResult", "finding_dirs", "replay_one", "verdict"]
