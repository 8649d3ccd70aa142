"""findings/<signature>/: one folder per deduplicated finding, written before it is reported."""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from seedzer.config import KnownIssue
from seedzer.oracles.signature import ir_names, signature
from seedzer.outcome import Outcome
from seedzer.store.atomic import write_atomic
from seedzer.store.db import CampaignDB, FindingRow


@dataclass
class FindingReport:
    """What reporting one bug outcome did."""

    signature: str
    new: bool
    status: str
    dir: Path


class FindingStore:
    """Writes finding folders and keeps campaign.db's findings table in step."""

    def __init__(self, root: Path, db: CampaignDB, known: list[KnownIssue]) -> None:
        self.root = Path(root)
        self.db = db
        self.known = [(re.compile(k.pattern), k.note) for k in known]

    def _known_note(self, outcome: Outcome) -> str | None:
        text = f"{outcome.symptom.value} {outcome.pass_name or ''} {outcome.message}"
        for pattern, note in self.known:
            if pattern.search(text):
                return note or pattern.pattern
        return None

    def report(
        self,
        outcome: Outcome,
        files: dict[str, str],
        meta: dict[str, Any],
        status: str = "new",
    ) -> FindingReport:
        """Record one bug outcome. A new signature gets its folder (``files`` plus ``meta.json``)
        written atomically before its database row is committed; a known one just counts. Names the
        IR in ``files["ir.py"]`` defines do not enter the signature (renamed variants merge)."""
        sig = signature(outcome, ir_names(files.get("ir.py", "")))
        folder = self.root / sig
        note = self._known_note(outcome)
        if note is not None:
            status = "known"
        now = time.time()
        row = FindingRow(sig, outcome.symptom.value, outcome.stage.value if outcome.stage else None,
                         outcome.pass_name, outcome.message[:2000], now, now, 1, status, str(folder))
        if not (folder / "meta.json").exists():
            for name, text in files.items():
                write_atomic(folder / name, text)
            full_meta = dict(meta, signature=sig, outcome=outcome.to_dict(), status=status, first_seen=now)
            if note is not None:
                full_meta["known_issue"] = note
            write_atomic(folder / "meta.json", json.dumps(full_meta, indent=2, default=str))
        new = self.db.upsert_finding(row)
        return FindingReport(sig, new, status if new else self._status(sig), folder)

    def _status(self, sig: str) -> str:
        for f in self.db.findings():
            if f.signature == sig:
                return f.status
        return "new"

    def set_status(self, sig: str, status: str, extra: dict[str, Any] | None = None) -> None:
        """Update a finding's status in the database and in its meta.json."""
        self.db.set_finding_status(sig, status)
        meta_path = self.root / sig / "meta.json"
        try:
            meta = json.loads(meta_path.read_text())
        except (OSError, ValueError):
            return
        meta["status"] = status
        if extra:
            meta.update(extra)
        write_atomic(meta_path, json.dumps(meta, indent=2, default=str))
