"""`seedzer bugs`: two campaigns in one ledger, which found which roots, states, and exported reports."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from seedzer.cli import main
from tests.unit.campaign.fake_campaigns import fake_campaign


def _invoke(*args: str) -> str:
    res = CliRunner().invoke(main, list(args))
    assert res.exit_code == 0, res.output
    return res.stdout


def _wide(*args: str) -> str:
    """The output of a listing printed wide enough that no cell folds."""
    res = CliRunner().invoke(main, list(args), env={"COLUMNS": "600"})
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


def test_a_root_reported_upstream_goes_into_the_ledgers_upstream_table_which_exports_and_imports(
        tmp_path: Path) -> None:
    ledger, other = str(tmp_path / "ledger.db"), str(tmp_path / "other.db")
    camp = fake_campaign(tmp_path / "c", tmp_path / "p", {"aaaa00000001": ["111111111111"]})
    _invoke("bugs", "--ledger", ledger, "add", str(camp))
    said = _invoke("bugs", "--ledger", ledger, "mark", "aaaa", "reported", "--link",
                   "https://github.com/apache/tvm/issues/424242")
    assert "upstream table: apache/tvm#424242 covers it" in said
    listed = _wide("bugs", "--ledger", ledger, "upstream")
    assert "https://github.com/apache/tvm/issues/424242" in listed and "roots=['aaaa00000001']" in listed
    assert "https://github.com/apache/tvm/issues/19579" in listed  # the shipped rows are listed too
    table = tmp_path / "mine.yaml"
    assert "1 upstream row(s)" in _invoke("bugs", "--ledger", ledger, "upstream", "export", str(table))
    imported = _invoke("bugs", "--ledger", other, "upstream", "import", str(table))
    assert "1 upstream row(s) imported (apache/tvm#424242)" in imported
    bad = tmp_path / "bad.yaml"
    bad.write_text("issues: [{number: 1}]\n")
    res = CliRunner().invoke(main, ["bugs", "--ledger", other, "upstream", "import", str(bad)])
    assert res.exit_code != 0 and "row 1: 'state' must be" in res.output and "Traceback" not in res.output


def test_bugs_says_a_root_a_recheck_merged_into_another(tmp_path: Path) -> None:
    from seedzer.ledger.records import RECHECK
    from seedzer.ledger.store import Ledger

    ledger = tmp_path / "ledger.db"
    camp = fake_campaign(tmp_path / "c", tmp_path / "p", {"aaaa00000001": ["111111111111"]})
    _invoke("bugs", "--ledger", str(ledger), "add", str(camp))
    with Ledger(ledger) as book:
        book.rekey(str(camp.resolve()), {"aaaa00000001": ["ffff00000009"]}, RECHECK)
    assert "new; merged into ffff00000009" in _wide("bugs", "--ledger", str(ledger))


def test_marking_a_root_reported_on_a_shipped_issue_keeps_the_shipped_fingerprint(tmp_path: Path) -> None:
    from seedzer.finding.known_upstream import shipped
    from seedzer.ledger.store import Ledger
    from seedzer.ledger.upstream import RootFacts, match, merged

    ledger = tmp_path / "ledger.db"
    camp = fake_campaign(tmp_path / "c", tmp_path / "p", {"aaaa00000001": ["111111111111"]})
    _invoke("bugs", "--ledger", str(ledger), "add", str(camp))
    _invoke("bugs", "--ledger", str(ledger), "mark", "aaaa", "reported", "--link",
            "https://github.com/apache/tvm/issues/19579")
    with Ledger(ledger, create=False) as book:
        (row,) = book.upstream()
        table = merged(shipped(), book.upstream())
    assert row.number == 19579 and row.fingerprint.roots == ("aaaa00000001",) and row.fingerprint.value == "nan"
    other = RootFacts("other", "graph", "mismatch", "codegen.llvm.max_min", "", "nan")  # another root of the family
    found = match(table, other)
    assert found is not None and found.number == 19579


def _fail(*args: str) -> str:
    """The one line a refused command printed (exit status 2, nothing on standard output)."""
    res = CliRunner().invoke(main, list(args))
    assert res.exit_code == 2, res.output
    assert res.stdout == "" and len(res.stderr.splitlines()) == 1, res.output
    return res.stderr.strip()


def test_an_export_never_replaces_an_edited_report_without_force(tmp_path: Path) -> None:
    ledger, out = str(tmp_path / "ledger.db"), tmp_path / "out"
    camp = fake_campaign(tmp_path / "c", tmp_path / "p", {"aaaa00000001": ["111111111111"]})
    (camp / "findings" / "111111111111" / "report.md").write_text("# [Bug] report\n")
    _invoke("bugs", "--ledger", ledger, "add", str(camp))
    _invoke("bugs", "--ledger", ledger, "export", str(out), "aaaa")
    _invoke("bugs", "--ledger", ledger, "export", str(out), "aaaa")  # the same files again: nothing to lose
    edited = out / "aaaa00000001" / "report.md"
    edited.write_text("# [Bug] report\n\nMy analysis, an hour of work.\n")
    said = _fail("bugs", "--ledger", ledger, "export", str(out), "aaaa")
    assert said.startswith(f"error: {edited}: exists and differs") and said.endswith("(--force replaces them)")
    assert edited.read_text().endswith("an hour of work.\n")
    _invoke("bugs", "--ledger", ledger, "export", str(out), "aaaa", "--force")
    assert edited.read_text() == "# [Bug] report\n"


def test_an_export_takes_the_newest_sighting_that_holds_a_report(tmp_path: Path) -> None:
    ledger, out = str(tmp_path / "ledger.db"), tmp_path / "out"
    one = fake_campaign(tmp_path / "one", tmp_path / "p", {"aaaa00000001": ["111111111111"]})
    two = fake_campaign(tmp_path / "two", tmp_path / "p", {"bbbb00000002": ["222222222222"],
                                                           "aaaa00000001": ["333333333333"]})  # found later
    (one / "findings" / "111111111111" / "report.md").write_text("# [Bug] triaged in one\n")
    for camp in (one, two):
        _invoke("bugs", "--ledger", ledger, "add", str(camp))
    exported = _invoke("bugs", "--ledger", ledger, "export", str(out), "aaaa")
    assert f"(from {one.resolve() / 'findings' / '111111111111'})" in exported
    assert (out / "aaaa00000001" / "report.md").read_text() == "# [Bug] triaged in one\n"
    (two / "findings" / "333333333333" / "report.md").write_text("# [Bug] triaged in two\n")
    _invoke("bugs", "--ledger", ledger, "export", str(tmp_path / "again"), "aaaa")
    assert (tmp_path / "again" / "aaaa00000001" / "report.md").read_text() == "# [Bug] triaged in two\n"


def test_a_root_without_a_report_anywhere_is_an_error_and_nothing_is_exported(tmp_path: Path) -> None:
    ledger, out = str(tmp_path / "ledger.db"), tmp_path / "out"
    camp = fake_campaign(tmp_path / "c", tmp_path / "p", {"aaaa00000001": ["111111111111"],
                                                           "bbbb00000002": ["222222222222"]})
    (camp / "findings" / "111111111111" / "report.md").write_text("# [Bug] report\n")
    _invoke("bugs", "--ledger", ledger, "add", str(camp))
    said = _fail("bugs", "--ledger", ledger, "export", str(out), "aaaa", "bbbb")
    assert said == ("error: bbbb00000002: no report.md in any of the 1 campaign(s) that found it (run `seedzer "
                    "triage` on one); nothing was exported")
    assert not out.exists()
    res = CliRunner().invoke(main, ["bugs", "--ledger", ledger, "export", str(out), "--state", "new"])
    assert res.exit_code == 0 and "warning: bbbb00000002: no report.md" in res.stderr  # chosen by state: skipped
    assert sorted(p.name for p in out.iterdir()) == ["aaaa00000001"]
    _invoke("bugs", "--ledger", ledger, "mark", "aaaa", "fixed")
    assert _fail("bugs", "--ledger", ledger, "export", str(out), "--state", "new").startswith(
        "error: --state new: none of its 1 root(s) has a report.md")


@pytest.mark.parametrize("verb", [(), ("mark", "aaaa", "fixed"), ("export", "out", "--state", "new")])
def test_an_empty_ledger_file_is_no_ledger_yet_and_stays_empty(tmp_path: Path, verb: tuple[str, ...]) -> None:
    empty = tmp_path / "ledger.db"
    empty.touch()
    said = _fail("bugs", "--ledger", str(empty), *verb)
    assert said == f"error: {empty}: no ledger there (a campaign makes it; see ledger.path)"
    assert empty.read_bytes() == b""


def test_status_of_a_campaign_whose_ledger_is_an_empty_file_says_no_ledger(tmp_path: Path) -> None:
    empty = tmp_path / "ledger.db"
    empty.touch()
    camp = fake_campaign(tmp_path / "c", tmp_path / "p", {"aaaa00000001": ["111111111111"]}, ledger=empty)
    res = CliRunner().invoke(main, ["status", str(camp)], env={"COLUMNS": "300"})
    assert res.exit_code == 0 and res.stderr == "" and "(no ledger)" in res.stdout
    assert empty.read_bytes() == b""
