"""A campaign and the ledger: its roots recorded by one key, where its ledger is, what status marks."""

from __future__ import annotations

from pathlib import Path

from seedzer.campaign.ledger_roots import (
    CampaignLedger,
    campaign_ledger,
    campaign_sightings,
    known_roots,
    record_campaign,
    seen_before,
)
from seedzer.config import Config
from seedzer.ledger.records import CAMPAIGN, TRIAL
from seedzer.ledger.store import Ledger
from tests.unit.campaign.fake_campaigns import fake_campaign


def test_a_campaigns_roots_with_their_findings_counts_and_times(tmp_path: Path) -> None:
    out = fake_campaign(tmp_path / "c1", tmp_path / "pool", {"aaaa00000001": ["111111111111", "222222222222"],
                                                              "bbbb00000002": ["333333333333"]})
    found = {s.root: s for s in campaign_sightings(out)}
    first = found["aaaa00000001"]
    assert (first.count, first.first_seen, first.last_seen) == (4, 0.0, 2.0)
    assert first.finding == str(out.resolve() / "findings" / "111111111111") and first.culprit == "tirx.VectorizeLoop"
    assert first.campaign == str(out.resolve()) and found["bbbb00000002"].count == 2


def test_two_campaigns_in_one_ledger_and_what_status_of_the_second_marks(tmp_path: Path) -> None:
    ledger = tmp_path / "ledger.db"
    one = fake_campaign(tmp_path / "one", tmp_path / "pool1", {"aaaa00000001": ["111111111111"],
                                                                "bbbb00000002": ["222222222222"]})
    two = fake_campaign(tmp_path / "two", tmp_path / "pool2", {"bbbb00000002": ["333333333333"],
                                                                "cccc00000003": ["444444444444"]})
    assert record_campaign(one, ledger, CAMPAIGN) == ["aaaa00000001", "bbbb00000002"]
    assert record_campaign(two, ledger, TRIAL) == ["cccc00000003"]
    seen = seen_before(ledger, two)
    assert seen is not None and set(seen) == {"aaaa00000001", "bbbb00000002"}
    with Ledger(ledger) as book:
        both = {r.root: r for r in book.roots()}["bbbb00000002"]
    assert set(both.campaigns) == {str(one.resolve()), str(two.resolve())}
    assert seen_before(tmp_path / "no-ledger.db", two) is None


def test_the_ledger_is_beside_the_pool_unless_configured_or_recorded(tmp_path: Path) -> None:
    out = fake_campaign(tmp_path / "c", tmp_path / "pools" / "basic", {})
    cfg = Config()
    assert campaign_ledger(out, cfg) == (tmp_path / "pools" / "ledger.db").resolve()
    recorded = fake_campaign(tmp_path / "d", tmp_path / "pools" / "basic", {}, ledger=tmp_path / "mine.db")
    assert campaign_ledger(recorded, cfg) == tmp_path / "mine.db"
    cfg.ledger.enabled = False
    assert campaign_ledger(out, cfg) is None


def test_a_campaign_goes_on_when_its_ledger_cannot_be_read_or_written(tmp_path: Path) -> None:
    bad = tmp_path / "ledger.db"
    bad.write_text("not a ledger")
    said: list[str] = []
    ledger = CampaignLedger(bad, CAMPAIGN, said.append)
    assert ledger.known() == {}
    out = fake_campaign(tmp_path / "c", tmp_path / "pool", {"aaaa00000001": ["111111111111"]})
    ledger.record(out)
    assert len(said) == 2 and all(s.startswith("warning: ") and "not a Seedzer ledger" in s for s in said)
    assert said[1].endswith(f"record this campaign later with `seedzer bugs add {out}`")
    assert bad.read_text() == "not a ledger"
    assert known_roots(tmp_path / "absent.db") == {}
