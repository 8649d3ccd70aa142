"""Progress of an experiment's trials, read from their campaign.db files (read-only) as they run."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from seedzer.store.reader import CampaignReader, UnreadableCampaign


@dataclass(frozen=True)
class Snapshot:
    """The latest state of a trial's campaign."""

    elapsed: float
    execs: int
    coverage: int
    corpus: int
    unique_findings: int

    def to_dict(self) -> dict[str, Any]:
        """Plain-data form (merged into trial.json)."""
        return asdict(self)


def latest_snapshot(trial_dir: Path) -> Snapshot | None:
    """The last snapshot of the campaign in ``trial_dir`` (elapsed from its meta), or None if none yet."""
    db = Path(trial_dir) / "campaign.db"
    if not db.exists():
        return None
    try:
        with CampaignReader.open(db, checked=False) as reader:
            row = reader.last_snapshot()
            elapsed = reader.meta("elapsed", None)
    except UnreadableCampaign:  # not made yet, or being made
        return None
    if row is None:
        return None
    return Snapshot(float(elapsed if elapsed is not None else row.time), row.execs, row.coverage, row.corpus_size,
                    row.unique_findings)


def _mmss(seconds: float) -> str:
    s = int(seconds)
    return f"{s // 60:d}:{s % 60:02d}"


def progress_line(name: str, wall: float, done: int, total: int,
                  running: Sequence[tuple[str, float, Snapshot | None]]) -> str:
    """One status line: wall time, trials done, and each running trial's time, coverage and execs."""
    parts = []
    for label, minutes, snap in running:
        if snap is None:
            parts.append(f"{label} loading")
        else:
            parts.append(f"{label} {_mmss(snap.elapsed)}/{_mmss(minutes * 60)} cov {snap.coverage} "
                         f"execs {snap.execs} findings {snap.unique_findings}")
    return f"[{name}] {_mmss(wall)} | done {done}/{total} | " + ("; ".join(parts) or "idle")


def result_line(label: str, status: str, snap: Snapshot | None, returncode: int | None, note: str) -> str:
    """The line printed when a trial process ends."""
    got = (f"coverage {snap.coverage}, execs {snap.execs}, corpus {snap.corpus}, unique findings "
           f"{snap.unique_findings}, {snap.elapsed:.0f} s" if snap else "no snapshot")
    extra = f" (exit {returncode}{': ' + note if note else ''})" if status != "done" else ""
    return f"{status} {label}: {got}{extra}"
