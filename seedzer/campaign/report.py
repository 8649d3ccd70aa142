"""A textual summary of a campaign directory, read from its campaign.db alone."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from rich.table import Table

from seedzer.campaign.monitor import summary_table
from seedzer.campaign.stats import CampaignStats
from seedzer.errors import CampaignError
from seedzer.store.db import CampaignDB


def campaign_summary(campaign: Path) -> Table:
    """The summary table of a campaign as recorded so far."""
    path = Path(campaign) / "campaign.db"
    if not path.exists():
        raise CampaignError(f"{campaign}: not a campaign directory (no campaign.db)")
    db = CampaignDB(path)
    try:
        snaps = db.snapshots()
        last = snaps[-1] if snaps else {}
        findings = db.findings()
        st = CampaignStats(
            execs=db.total_execs(), coverage=int(last.get("coverage", 0)),
            corpus=len(db.corpus_rows()), elapsed=float(db.get_meta("elapsed", 0.0)),
            budget=float((db.get_meta("config") or {}).get("fuzz", {}).get("minutes", 0)) * 60,
            invalid=sum(n for (s, _), n in db.exec_summary().items() if s == "invalid"),
            unique=Counter(f.symptom for f in findings),
            restarts=len(db.events("worker_restart")),
        )
        models = db.conn.execute("SELECT status, COUNT(*) FROM models GROUP BY status").fetchall()
        counts = dict(models)
        st.loaded_models, st.failed_models = counts.get("ok", 0), counts.get("failed", 0)
        st.session_execs, st.session_seconds = st.execs, st.elapsed
        rows = [(f.signature, f.symptom, f"{f.stage or '?'} / {f.pass_name or '-'}", f.status, f.count)
                for f in findings]
        return summary_table(st, str(campaign), rows)
    finally:
        db.close()
