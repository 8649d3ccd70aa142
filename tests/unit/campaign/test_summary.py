"""``seedzer status``'s summary of a campaign directory (:mod:`seedzer.campaign.summary`)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from rich.console import Console

from seedzer.campaign.summary import campaign_summary
from seedzer.kernel.common import Observation, Stage, Symptom
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


def test_a_root_that_is_a_known_upstream_bug_says_so_in_the_bug_table(tmp_path: Path) -> None:
    from seedzer.finding.meta import FindingMeta
    from seedzer.finding.verdict import AtFault
    from tests.unit.campaign.fake_campaigns import fake_campaign

    out = fake_campaign(tmp_path / "c", tmp_path / "p", {"aaaa00000001": ["111111111111"],
                                                          "bbbb00000002": ["222222222222"]})
    folder = out / "findings" / "111111111111"
    meta = FindingMeta.load(folder)
    meta.at_fault = AtFault("tirx.ForceNarrowIndexToInt32", "made the IR", shared=False)
    meta.observation = Observation(Symptom.EXCEPTION, Stage.PASS, "s_tir.CompactBufferAllocation",
                                   "TypeError: Check failed: mismatched types. int64 vs. int32")
    (folder / "meta.json").write_text(meta.dump(folder / "meta.json"))
    console = Console(width=600, record=True)
    console.print(campaign_summary(out))
    text = console.export_text()
    row = next(line for line in text.splitlines() if "aaaa00000001" in line)
    assert "known upstream apache/tvm#20409 (open)" in row
    assert "known upstream" not in next(line for line in text.splitlines() if "bbbb00000002" in line)
