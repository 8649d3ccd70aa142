"""The ledger's file: roots recorded across campaigns by one key, states set by a user, and the bad inputs
(a newer ledger, a locked one, a file that is no ledger) as one line each, with nothing in it lost."""

from __future__ import annotations

import sqlite3
from dataclasses import replace
from pathlib import Path

import pytest

from seedzer.ledger.records import CAMPAIGN, RECHECK, RootSighting, VersionVerdict
from seedzer.ledger.store import SCHEMA_VERSION, Ledger, LedgerError, NoLedger


def sighting(root: str, campaign: str, first: float = 10.0, last: float = 20.0, count: int = 1) -> RootSighting:
    return RootSighting(root, "tir", "exception", "tirx.VectorizeLoop", f"exception in {root}", campaign,
                        f"{campaign}/findings/{root}", count, first, last)


def test_roots_merge_across_campaigns_by_their_signature(tmp_path: Path) -> None:
    path = tmp_path / "ledger.db"
    with Ledger(path) as ledger:
        assert ledger.record([sighting("aaa111", "/c/one"), sighting("bbb222", "/c/one")], CAMPAIGN) == \
            ["aaa111", "bbb222"]
        assert ledger.record([sighting("aaa111", "/c/two", 5.0, 30.0, 3)], RECHECK) == []
    with Ledger(path, create=False) as ledger:
        roots = {r.root: r for r in ledger.roots()}
    assert set(roots) == {"aaa111", "bbb222"}
    both = roots["aaa111"]
    assert (both.first_seen, both.last_seen) == (5.0, 30.0)
    assert both.campaigns == ("/c/two", "/c/one") and roots["bbb222"].campaigns == ("/c/one",)
    assert [s.source for s in both.sightings] == [RECHECK, CAMPAIGN] and both.state == "new"


def test_a_root_seen_again_takes_the_kind_name_of_its_latest_sighting(tmp_path: Path) -> None:
    path = tmp_path / "ledger.db"
    with Ledger(path) as ledger:
        ledger.record([replace(sighting("aaa111", "/c/old"), kind="lowlevel")], RECHECK)
        ledger.record([sighting("aaa111", "/c/new")], CAMPAIGN)
        assert [(r.root, r.kind) for r in ledger.roots()] == [("aaa111", "tir")]


def test_a_state_set_by_prefix_makes_the_root_known(tmp_path: Path) -> None:
    with Ledger(tmp_path / "ledger.db") as ledger:
        ledger.record([sighting("aaa111", "/c/one"), sighting("abb222", "/c/one")], CAMPAIGN)
        assert ledger.set_state("aaa", "reported", "https://github.com/apache/tvm/issues/1") == "aaa111"
        assert ledger.known() == {"aaa111": "ledger: reported https://github.com/apache/tvm/issues/1"}
        with pytest.raises(LedgerError, match=r"2 roots \(aaa111, abb222\) match 'a'"):
            ledger.set_state("a", "fixed")
        with pytest.raises(LedgerError, match="no root match"):
            ledger.set_state("zzz", "fixed")
        with pytest.raises(LedgerError, match="state 'done': must be one of new, reported, fixed, wont-fix"):
            ledger.set_state("aaa", "done")


def test_versions_are_kept_per_root(tmp_path: Path) -> None:
    with Ledger(tmp_path / "ledger.db") as ledger:
        ledger.record([sighting("aaa111", "/c/one")], CAMPAIGN)
        ledger.record_versions("aaa111", [VersionVerdict("0.26.0", "fixed"), VersionVerdict("0.27.0", "present")])
        ledger.record_versions("aaa111", [VersionVerdict("0.26.0", "present")])
        (root,) = ledger.roots()
    assert sorted(root.affected()) == ["0.26.0", "0.27.0"]


def test_a_ledger_of_a_newer_seedzer_is_refused_untouched(tmp_path: Path) -> None:
    path = tmp_path / "ledger.db"
    with Ledger(path) as ledger:
        ledger.record([sighting("aaa111", "/c/one")], CAMPAIGN)
    conn = sqlite3.connect(path)
    conn.execute("UPDATE ledger_meta SET value = ? WHERE key = 'schema_version'", (str(SCHEMA_VERSION + 1),))
    conn.commit()
    conn.close()
    before = path.read_bytes()
    with pytest.raises(LedgerError) as info:
        Ledger(path)
    assert str(info.value) == (f"{path}: written by a newer Seedzer (ledger schema {SCHEMA_VERSION + 1}; this one "
                               f"reads up to {SCHEMA_VERSION}); upgrade Seedzer, the ledger was left untouched")
    assert path.read_bytes() == before


def test_a_locked_ledger_is_one_line_and_loses_nothing(tmp_path: Path) -> None:
    path = tmp_path / "ledger.db"
    with Ledger(path) as ledger:
        ledger.record([sighting("aaa111", "/c/one")], CAMPAIGN)
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        with pytest.raises(LedgerError) as info, Ledger(path, busy=0.2) as ledger:
            ledger.record([sighting("ccc333", "/c/two")], CAMPAIGN)
        said = str(info.value)
        assert said.startswith(f"{path}: locked by another process; ") and "\n" not in said
        assert said.endswith("gave up, the ledger is unchanged (try again when that process is done)")
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    with Ledger(path, create=False) as ledger:
        assert [r.root for r in ledger.roots()] == ["aaa111"]


@pytest.mark.parametrize("content", [b"just text, no database", b""])
def test_a_file_that_is_no_ledger_is_refused(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "ledger.db"
    path.write_bytes(content)
    if not content:  # an empty file is a new SQLite database: it becomes a ledger
        with Ledger(path) as ledger:
            assert ledger.roots() == []
        return
    with pytest.raises(LedgerError, match=r"not a Seedzer ledger \(not a readable SQLite database\)"):
        Ledger(path)
    assert path.read_bytes() == content


def test_another_programs_database_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "other.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE songs (title TEXT)")
    conn.commit()
    conn.close()
    with pytest.raises(LedgerError, match=r"not a Seedzer ledger \(it holds the tables songs\)"):
        Ledger(path)


def test_a_missing_ledger_is_not_made_by_readers(tmp_path: Path) -> None:
    with pytest.raises(LedgerError, match="no ledger there"):
        Ledger(tmp_path / "none.db", create=False)
    assert not (tmp_path / "none.db").exists()


V1_SCHEMA = """
CREATE TABLE ledger_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE roots (root TEXT PRIMARY KEY, kind TEXT NOT NULL, symptom TEXT NOT NULL, culprit TEXT NOT NULL,
    headline TEXT NOT NULL, first_seen REAL NOT NULL, last_seen REAL NOT NULL, state TEXT NOT NULL DEFAULT 'new',
    link TEXT NOT NULL DEFAULT '', note TEXT NOT NULL DEFAULT '');
CREATE TABLE sightings (root TEXT NOT NULL, campaign TEXT NOT NULL, source TEXT NOT NULL, finding TEXT NOT NULL,
    count INTEGER NOT NULL, first_seen REAL NOT NULL, last_seen REAL NOT NULL, recorded REAL NOT NULL,
    PRIMARY KEY (root, campaign));
CREATE TABLE versions (root TEXT NOT NULL, version TEXT NOT NULL, verdict TEXT NOT NULL, detail TEXT NOT NULL,
    checked REAL NOT NULL, PRIMARY KEY (root, version));
INSERT INTO ledger_meta VALUES ('schema_version', '1');
INSERT INTO roots VALUES ('aaa111', 'tir', 'exception', 'x', 'h', 1.0, 2.0, 'reported', 'https://l/1', '');
"""


def test_a_ledger_of_the_schema_before_is_upgraded_in_place(tmp_path: Path) -> None:
    path = tmp_path / "ledger.db"
    conn = sqlite3.connect(path)
    conn.executescript(V1_SCHEMA)
    conn.close()
    with Ledger(path, create=False) as ledger:
        (root,) = ledger.roots()
        assert (root.root, root.state, root.merged_into) == ("aaa111", "reported", "")
        assert ledger.upstream() == []
    conn = sqlite3.connect(path)
    version = conn.execute("SELECT value FROM ledger_meta WHERE key = 'schema_version'").fetchone()
    assert version == (str(SCHEMA_VERSION),)
    conn.close()


def test_a_recheck_moves_a_campaigns_sightings_to_the_roots_it_re_keyed(tmp_path: Path) -> None:
    with Ledger(tmp_path / "ledger.db") as ledger:
        ledger.record([sighting("old111", "/c/one"), sighting("old222", "/c/one"), sighting("old222", "/c/two"),
                       sighting("gone33", "/c/one"), sighting("same44", "/c/one")], CAMPAIGN)
        ledger.set_state("old111", "reported", "https://github.com/apache/tvm/issues/7")
        ledger.record([sighting("new999", "/c/one"), sighting("same44", "/c/one")], RECHECK)
        gone = ledger.rekey("/c/one", {"old111": ["new999"], "old222": ["new999"], "gone33": [], "same44": ["same44"]},
                            RECHECK)
        roots = {r.root: r for r in ledger.roots()}
    assert sorted(gone) == ["gone33", "old111"]  # old222 is still a root of /c/two's
    assert roots["old111"].merged_into == "new999" and roots["old111"].campaigns == ()
    assert roots["old222"].merged_into == "new999" and roots["old222"].campaigns == ("/c/two",)
    assert roots["gone33"].merged_into == "(not a bug)" and roots["same44"].merged_into == ""
    new = roots["new999"]  # the user's report follows the bug to its new key
    assert (new.state, new.link, new.campaigns) == ("reported", "https://github.com/apache/tvm/issues/7", ("/c/one",))


def test_the_users_upstream_rows_are_kept_and_replaced_by_issue(tmp_path: Path) -> None:
    from seedzer.ledger.upstream import Fingerprint, UpstreamIssue

    first = UpstreamIssue("apache/tvm", 7, "a bug", "open", Fingerprint(roots=("aaa111",)))
    with Ledger(tmp_path / "ledger.db") as ledger:
        assert ledger.put_upstream([first]) == ["apache/tvm#7"]
        ledger.put_upstream([replace(first, state="closed", fixed_in="0.28.0")])
        assert ledger.upstream() == [replace(first, state="closed", fixed_in="0.28.0")]


@pytest.mark.parametrize("readonly", [True, False])
def test_an_empty_file_is_no_ledger_yet_for_whoever_does_not_create_one(tmp_path: Path, readonly: bool) -> None:
    path = tmp_path / "ledger.db"
    path.touch()
    with pytest.raises(NoLedger, match="no ledger there"):
        Ledger(path, create=False, readonly=readonly)
    assert path.read_bytes() == b""


def test_a_ledger_opened_read_only_is_never_written(tmp_path: Path) -> None:
    path = tmp_path / "ledger.db"
    with Ledger(path) as ledger:
        ledger.record([sighting("aaa111", "/c/one")], CAMPAIGN)
    before = path.read_bytes()
    with Ledger(path, readonly=True) as ledger:
        assert [r.root for r in ledger.roots()] == ["aaa111"]
        with pytest.raises(LedgerError, match="setting the state failed"):
            ledger.set_state("aaa", "fixed")
    assert path.read_bytes() == before


def test_a_ledger_of_the_schema_before_opened_read_only_is_read_as_it_is(tmp_path: Path) -> None:
    path = tmp_path / "ledger.db"
    conn = sqlite3.connect(path)
    conn.executescript(V1_SCHEMA)
    conn.close()
    before = path.read_bytes()
    with Ledger(path, readonly=True) as ledger:
        (root,) = ledger.roots()
        assert (root.root, root.merged_into) == ("aaa111", "") and ledger.upstream() == []
    assert path.read_bytes() == before
