"""The campaign loop's own part (:mod:`seedzer.campaign.loop`): acting on what happened to each test
case, the end-of-campaign summary's ledger marks and the epochs a resumed campaign keeps (issue 55 row
11). Real campaigns on the fake worker (:mod:`tests.unit.campaign.test_loop_campaigns`)."""

from __future__ import annotations

from pathlib import Path

import pytest
from rich.console import Console

from seedzer.campaign.filtered import FILTERED_DIR
from seedzer.campaign.loop import Campaign
from seedzer.campaign.outcome import Fate
from seedzer.kernel.common import Observation, Stage, Symptom
from tests.unit.campaign.parts import case_info, result
from tests.unit.campaign.test_loop_campaigns import ROOTS, by_symptom, campaign, config, loader_of, query
from tests.unit.fake_gate import FakeGate

pytestmark = pytest.mark.usefixtures("restore_signals")

ERROR = Observation(Symptom.EXCEPTION, Stage.PASS, "FakePass", "InternalError: Check failed: (x_12 == y_3) is false")


def test_acting_on_each_fate_writes_what_it_says(tmp_path: Path, pool: Path) -> None:
    out = tmp_path / "camp"
    c = Campaign(out, pool, config(), seed_loader=loader_of(["a"]), gate=FakeGate(by_symptom))
    try:
        c.loading.load_pool(c.stopping)
        seed = c.corpus.entries[0].seed_id
        kept = c.intake.result(case_info(1, seed, "a\nb"), result(Observation.ok(), ["a", "b"]), 0)
        bug = c.intake.result(case_info(2, seed, "a\nERROR"), result(ERROR, ["a", "ERROR"]), 0)
        invalid = Observation(Symptom.INVALID, Stage.MUTATE, None, "unusable test case")
        turned = c.intake.result(case_info(3, seed, "a\nINVALID"), result(invalid, ["INVALID"]), 0)
        assert [o.fate for o in (kept, bug, turned)] == [Fate.KEPT, Fate.NEW_CANDIDATE, Fate.FILTERED]
        assert len(c.corpus) == 1 and not c.db.findings() and not c.db.filter_samples()  # nothing written yet
        for outcome in (kept, bug, turned):
            c.act(outcome)
        assert len(c.corpus) == 2 and c.stats.corpus == 2 and c.corpus.entries[1].triggered == ()
        (row,) = c.db.findings()
        assert row.symptom == "exception" and row.count == 1
        ((_, level, reason, *_),) = c.db.filter_samples()
        assert (level, reason) == ("tir", "unusable test case") and (out / FILTERED_DIR).is_dir()
    finally:
        c.db.close()
        c.lock.release()


def test_the_end_of_campaign_summary_shows_what_the_ledger_knew_right_after_recording(tmp_path: Path,
                                                                                       pool: Path) -> None:
    """Before: the summary printed after a campaign said ``(no ledger)`` for every bug, although the campaign
    had just recorded its roots in the ledger beside its pool."""
    out = tmp_path / "camp"
    c, _ = campaign(out, pool, ["a", "ERROR"], FakeGate(by_symptom), lambda c: bool(c.stats.unique))
    c.run()
    assert (pool.parent / "ledger.db").is_file()  # recorded there
    console = Console(width=400, record=True)
    console.print(c.summary())
    text = console.export_text()
    row = next(line for line in text.splitlines() if ROOTS[Symptom.EXCEPTION] in line)
    assert "(no ledger)" not in text and " new " in row  # new to the ledger: no other campaign found it


def test_a_resumed_campaign_keeps_its_recorded_epochs_and_says_so_in_one_line(tmp_path: Path, pool: Path) -> None:
    out = tmp_path / "camp"
    c, _ = campaign(out, pool, ["a"], FakeGate(by_symptom), lambda c: c.stats.execs >= 3)
    c.run()  # started without epochs
    cfg = config()
    cfg.epochs.count = 5  # --resume --epochs 5
    again, probe = campaign(out, pool, ["a"], FakeGate(by_symptom), lambda c: c.stats.session_execs >= 3,
                            resume=True, cfg=cfg)
    again.run()
    said = [m for m in probe.messages if "epochs" in m]
    assert said == ["this campaign was started without epochs: --resume keeps it so (epochs.count 5, from --epochs "
                    "or the configuration, applies to new campaigns only)"]
    assert again.epochs is None and cfg.epochs.count == 0  # the pool has no manifest: epochs would have failed
    quiet, probe = campaign(out, pool, ["a"], FakeGate(by_symptom), lambda c: c.stats.session_execs >= 3,
                            resume=True, cfg=config())
    quiet.run()
    assert not [m for m in probe.messages if "epochs" in m]  # nothing asked, nothing to say
    assert query(out / "campaign.db", "SELECT count(*) FROM events WHERE kind = 'resume'") == [(2,)]
