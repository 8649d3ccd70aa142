"""What the filters before the gate turn away is counted by reason and pass, sampled, and (slow or
out of memory) re-run once at the full limits (issue 43): campaigns of the real loop on the fake
worker, whose ``HANG`` seed makes its mutants slow and whose ``INVALID`` line an invalid test case."""

from __future__ import annotations

from pathlib import Path

import pytest
from rich.console import Console

from seedzer.campaign.filtered import FILTERED_DIR
from seedzer.campaign.summary import campaign_summary
from seedzer.finding.meta import FindingMeta
from seedzer.kernel.common import Observation, Stage, Symptom
from tests.unit.campaign.test_loop_campaigns import by_symptom, campaign, config, query
from tests.unit.fake_gate import FakeGate

pytestmark = pytest.mark.usefixtures("restore_signals")


def _slow_campaign(out: Path, pool: Path, gate: FakeGate) -> None:
    cfg = config(run_limit=1.0)
    cfg.timeouts.relative, cfg.timeouts.floor, cfg.timeouts.hang_share = 0.3, 0.1, 0.0
    c, _ = campaign(out, pool, ["HANG"], gate, lambda c: c.stats.slow >= 2 and not c.filing.reruns.waiting, cfg=cfg)
    c.run()


def test_slow_test_cases_are_counted_sampled_and_re_run_at_the_full_limits(tmp_path: Path, pool: Path) -> None:
    out = tmp_path / "camp"
    gate = FakeGate(by_symptom)
    _slow_campaign(out, pool, gate)
    ((slow,),) = query(out / "campaign.db", "SELECT SUM(count) FROM exec_summary WHERE symptom = 'slow'")
    rows = query(out / "campaign.db", "SELECT level, reason, pass, count FROM filter_summary")
    assert [(level, reason) for level, reason, _, _ in rows] == [("tir", "slow")] and rows[0][3] == slow
    samples = query(out / "campaign.db", "SELECT folder, reason, rerun FROM filter_samples ORDER BY id")
    assert len(samples) == slow  # every slow test case is kept and re-run (fewer than RERUN_SAMPLES here)
    assert {rerun for _, _, rerun in samples} == {"passes"}
    assert sum(key.startswith("rerun:") for key in gate.submitted) == slow
    meta = FindingMeta.load(out / FILTERED_DIR / samples[0][0])
    assert meta.extra["filter_reason"] == "slow" and meta.observation.symptom is Symptom.HANG
    assert not (out / FILTERED_DIR / samples[0][0] / "repro.py").exists()  # written by replay when asked
    console = Console(width=220, record=True)
    console.print(campaign_summary(out, show_invalid=True))
    text = console.export_text()
    assert "turned away before the gate" in text and f"{slow} passes" in text


def test_a_slow_test_case_that_hangs_at_the_full_limits_is_filed_as_a_hang(tmp_path: Path, pool: Path) -> None:
    out = tmp_path / "camp"
    hang = Observation(Symptom.HANG, Stage.RUN, "run", "the run stage did not finish within 3 s")
    _slow_campaign(out, pool, FakeGate(by_symptom, rerun=hang))
    samples = query(out / "campaign.db", "SELECT rerun, rerun_detail FROM filter_samples")
    assert samples and all(rerun == "hangs" for rerun, _ in samples)
    # filed as candidates: the seed's own hang has the same signature, so each counts as an occurrence of it
    ((count,),) = query(out / "campaign.db", "SELECT SUM(count) FROM findings WHERE symptom = 'hang'")
    assert count >= 1 + len(samples)
    console = Console(width=220, record=True)
    console.print(campaign_summary(out, show_invalid=True))
    assert "Re-runs at the full limits that did not pass" in console.export_text()


def test_invalid_test_cases_keep_at_most_three_samples_per_reason_and_pass(tmp_path: Path, pool: Path) -> None:
    out = tmp_path / "camp"
    c, _ = campaign(out, pool, ["a", "INVALID"], FakeGate(by_symptom), lambda c: c.stats.invalid >= 5)
    c.run()
    ((count,),) = query(out / "campaign.db", "SELECT SUM(count) FROM filter_summary")
    samples = query(out / "campaign.db", "SELECT folder, rerun FROM filter_samples")
    assert count >= 5 and len(samples) == 3 and {rerun for _, rerun in samples} == {""}
    for folder, _ in samples:
        meta = FindingMeta.load(out / FILTERED_DIR / folder)
        assert meta.observation.symptom is Symptom.INVALID and meta.extra["filter_reason"] == "unusable test case"


def test_a_failure_an_oracle_turned_invalid_is_sampled_as_the_worker_observed_it(tmp_path: Path, pool: Path) -> None:
    """A stated precondition is an invalid test case (the exception oracle's verdict), but its sample
    keeps the exception, so its reproducer (which applies no oracle) shows whether it still happens."""
    out = tmp_path / "camp"
    c, _ = campaign(out, pool, ["a", "PRECONDITION"], FakeGate(by_symptom), lambda c: c.stats.invalid >= 2)
    c.run()
    samples = query(out / "campaign.db", "SELECT folder, reason FROM filter_samples")
    assert samples and all(reason.startswith("precondition: must be called after") for _, reason in samples)
    for folder, _ in samples:
        meta = FindingMeta.load(out / FILTERED_DIR / folder)
        assert meta.observation.symptom is Symptom.EXCEPTION and "must be called after" in meta.observation.message
        assert meta.extra["filtered_as"].startswith("precondition: InternalError: FakePass must be called after")
    ((findings,),) = query(out / "campaign.db", "SELECT COUNT(*) FROM findings")
    assert findings == 0  # turned away, never filed
