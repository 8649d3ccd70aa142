"""``seedzer status``'s summary of a campaign directory (:mod:`seedzer.campaign.summary`)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from rich.console import Console

from seedzer.campaign.summary import campaign_summary
from tests.unit.campaign.test_loop_campaigns import by_symptom, campaign
from tests.unit.fake_gate import FakeGate

pytestmark = pytest.mark.usefixtures("restore_signals")


def test_the_gate_s_share_is_its_processor_seconds_the_share_limit_counts(tmp_path: Path, pool: Path) -> None:
    out = tmp_path / "camp"
    c, _ = campaign(out, pool, ["a"], FakeGate(by_symptom), lambda c: c.stats.execs >= 3)
    c.run()
    conn = sqlite3.connect(out / "campaign.db")
    (time_, timings), = conn.execute("SELECT time, timings FROM snapshots ORDER BY time DESC LIMIT 1").fetchall()
    conn.execute("UPDATE snapshots SET timings = ? WHERE time = ?", (json.dumps({**json.loads(timings), "gate": 7.4}),
                                                                     time_))
    conn.execute("UPDATE meta SET value = '100.0' WHERE key = 'elapsed'")
    conn.commit()
    conn.close()
    console = Console(width=200, record=True)
    console.print(campaign_summary(out))
    line = next(ln for ln in console.export_text().splitlines() if "filing gate time" in ln)
    jobs = c.cfg.fuzz.jobs
    assert "7 s" in line and f"{100 * 7.4 / (100 * jobs):.1f}% of worker time" in line
