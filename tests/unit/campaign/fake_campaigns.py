"""Campaign directories written by hand for the ledger's tests: a campaign.db whose findings the gate judged,
and their folders' meta.json (no TVM, no fuzzing)."""

from __future__ import annotations

from pathlib import Path

from seedzer.finding.meta import BUG, FindingMeta
from seedzer.kernel.common import Observation, Stage, Symptom
from seedzer.store.db import CampaignDB, FindingRow


def fake_campaign(out: Path, pool: Path, roots: dict[str, list[str]], ledger: Path | None = None) -> Path:
    """A campaign in ``out`` of ``pool`` whose bugs are ``roots`` (root -> its findings' signatures)."""
    out.mkdir(parents=True, exist_ok=True)
    db = CampaignDB(out / "campaign.db")
    db.set_meta("pool", str(pool.resolve()))
    if ledger is not None:
        db.set_meta("ledger", str(ledger))
    for n, (root, signatures) in enumerate(roots.items()):
        for k, sig in enumerate(signatures):
            obs = Observation(Symptom.EXCEPTION, Stage.PASS, "tirx.VectorizeLoop", f"Check failed: {root}")
            meta = FindingMeta(sig, "tir", obs, verdict=BUG, verdict_reason="bug", root_signature=root,
                               culprit=["tirx.VectorizeLoop"])
            folder = out / "findings" / sig
            folder.mkdir(parents=True)
            (folder / "meta.json").write_text(meta.dump(folder / "meta.json"))
            when = 100.0 * n + k
            db.upsert_finding(FindingRow(sig, "exception", "pass", "tirx.VectorizeLoop", obs.message, when, when + 1,
                                         2, "new", f"findings/{sig}", "tir", BUG, "bug", root))
    db.close()
    return out
