"""`seedzer bugs`: two campaigns in one ledger, which found which roots, states, and exported reports."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from seedzer.cli import main
from tests.unit.campaign.fake_campaigns import fake_campaign


def _invoke(*args: str) -> str:
    res = CliRunner().invoke(main, list(args))
    assert res.exit_code == 0, res.output
    return res.stdout


def test_two_campaigns_roots_found_by_both_and_by_each_alone(tmp_path: Path) -> None:
    ledger = str(tmp_path / "ledger.db")
    one = fake_campaign(tmp_path / "one", tmp_path / "p1", {"aaaa00000001": ["111111111111"],
                                                             "bbbb00000002": ["222222222222"]})
    two = fake_campaign(tmp_path / "two", tmp_path / "p2", {"bbbb00000002": ["333333333333"],
                                                             "cccc00000003": ["444444444444"]})
    assert "2 new" in _invoke("bugs", "--ledger", ledger, "add", str(one))
    assert "1 new: cccc00000003" in _invoke("bugs", "--ledger", ledger, "add", str(two))
    listed = _invoke("bugs", "--ledger", ledger, "--campaign", str(one), "--campaign", str(two))
    lines = [ln for ln in listed.splitlines() if "│" in ln]
    assert any("both (one, two)" in ln and "bbbb00000002" in ln for ln in lines)
    assert any("only one" in ln and "aaaa00000001" in ln for ln in lines)
    assert any("only two" in ln and "cccc00000003" in ln for ln in lines)
    assert "3 bug roots" in listed


def test_a_marked_root_is_listed_by_state_and_exported_with_its_report(tmp_path: Path) -> None:
    ledger = str(tmp_path / "ledger.db")
    camp = fake_campaign(tmp_path / "c", tmp_path / "p", {"aaaa00000001": ["111111111111"],
                                                           "bbbb00000002": ["222222222222"]})
    (camp / "findings" / "111111111111" / "report.md").write_text("# [Bug] report\n")
    (camp / "findings" / "111111111111" / "minimal.py").write_text("print()\n")
    _invoke("bugs", "--ledger", ledger, "add", str(camp))
    said = _invoke("bugs", "--ledger", ledger, "mark", "aaaa", "reported", "--link", "https://example.org/1")
    assert said.startswith("aaaa00000001: reported https://example.org/1")
    listed = _invoke("bugs", "--ledger", ledger, "--state", "reported")
    assert "aaaa00000001" in listed and "bbbb00000002" not in listed and "1 bug roots" in listed
    exported = _invoke("bugs", "--ledger", ledger, "export", str(tmp_path / "out"), "--state", "reported")
    assert "aaaa00000001: report.md, minimal.py ->" in exported
    assert (tmp_path / "out" / "aaaa00000001" / "report.md").read_text() == "# [Bug] report\n"
    assert not (tmp_path / "out" / "bbbb00000002").exists()
