"""A textual summary of a campaign directory, read from its campaign.db alone (read-only).

``status`` works on a running campaign, a finished one and one on read-only media; it never
creates, migrates or writes a database (see :mod:`seedzer.report.readonly`), and refuses a file
that is not a Seedzer campaign in one line.
"""

from __future__ import annotations

import sqlite3
from collections import Counter
from pathlib import Path
from typing import Any

from rich.table import Table

from seedzer.campaign.monitor import summary_table
from seedzer.campaign.stats import CampaignStats
from seedzer.errors import CampaignError
from seedzer.report.readonly import open_campaign, read_meta


def _rows(conn: sqlite3.Connection, sql: str) -> list[tuple[Any, ...]]:
    try:
        return conn.execute(sql).fetchall()
    except sqlite3.OperationalError as exc:
        if "no such table" in str(exc):  # a campaign that has not created every table yet
            return []
        raise


def campaign_summary(campaign: Path) -> Table:
    """The summary table of a campaign as recorded so far."""
    path = Path(campaign) / "campaign.db"
    if not path.exists():
        raise CampaignError(f"{campaign}: not a campaign directory (no campaign.db)")
    conn = open_campaign(path)
    try:
        try:
            last = _rows(conn, "SELECT coverage FROM snapshots ORDER BY time DESC LIMIT 1")
            findings = _rows(conn, "SELECT signature, symptom, stage, pass, status, count FROM findings "
                                   "ORDER BY first_seen")
            summary = _rows(conn, "SELECT symptom, count FROM exec_summary")
            corpus = _rows(conn, "SELECT COUNT(*) FROM corpus")
            restarts = _rows(conn, "SELECT COUNT(*) FROM events WHERE kind = 'worker_restart'")
            models = dict(_rows(conn, "SELECT status, COUNT(*) FROM models GROUP BY status"))
            config = read_meta(conn, "config") or {}
            elapsed = float(read_meta(conn, "elapsed", 0.0) or 0.0)
        except (sqlite3.Error, ValueError, TypeError) as exc:
            raise CampaignError(f"{path}: unreadable campaign database ({exc})") from None
        minutes = (config.get("fuzz") or {}).get("minutes", 0) if isinstance(config, dict) else 0
        st = CampaignStats(
            execs=sum(int(n) for _, n in summary), coverage=int(last[0][0]) if last else 0,
            corpus=int(corpus[0][0]) if corpus else 0, elapsed=elapsed,
            budget=float(minutes or 0) * 60,
            invalid=sum(int(n) for s, n in summary if s == "invalid"),
            unique=Counter(str(f[1]) for f in findings),
            restarts=int(restarts[0][0]) if restarts else 0,
        )
        st.loaded_models, st.failed_models = int(models.get("ok", 0)), int(models.get("failed", 0))
        st.session_execs, st.session_seconds = st.execs, st.elapsed
        rows = [(sig, symptom, f"{stage or '?'} / {pass_name or '-'}", status, count)
                for sig, symptom, stage, pass_name, status, count in findings]
        return summary_table(st, str(campaign), rows)
    finally:
        conn.close()

