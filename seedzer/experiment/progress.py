"""Progress of an experiment's trials, read from their campaign.db files (read-only) as they run."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from seedzer.store.readonly import open_readonly, read_meta


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
        conn = open_readonly(db)
        try:
            row = conn.execute("SELECT time, execs, coverage, corpus_size, unique_findings FROM snapshots "
                               "ORDER BY time DESC LIMIT 1").fetchone()
            elapsed = read_meta(conn, "elapsed", None)
        finally:
            conn.close()
    except sqlite3.Error:
        return None
    if row is None:
        return None
    t, execs, cov, corpus, uniq = row
    return Snapshot(float(elapsed if elapsed is not None else t), int(execs), int(cov), int(corpus), int(uniq))


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
