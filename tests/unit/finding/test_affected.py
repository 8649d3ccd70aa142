"""The versions a bug affects: release order, regressions, the reproducer each root is checked with."""

from __future__ import annotations

from pathlib import Path

from seedzer.finding.affected import RootProgram, VersionCell, VersionsTable, root_programs, version_key
from seedzer.finding.minimal.program import MinimalProgram, MinimalRecord, write_minimal
from tests.unit.campaign.fake_campaigns import fake_campaign


def test_releases_sort_by_version_and_wheels_last() -> None:
    labels = ["0.27.0.post1", "tvm-nightly.whl", "0.26.0", "0.28.0rc1", "0.27.0", "0.28.0", "0.25.0"]
    assert sorted(labels, key=version_key) == ["0.25.0", "0.26.0", "0.27.0", "0.27.0.post1", "0.28.0rc1", "0.28.0",
                                               "tvm-nightly.whl"]


def test_present_after_fixed_is_a_regression_no_verdict_is_none() -> None:
    root = RootProgram("r1", "tir", "exception", "tirx.X", Path("."), ("apache-tvm",), 30)
    other = RootProgram("r2", "tir", "exception", "tirx.Y", Path("."), ("apache-tvm",), 30)
    table = VersionsTable(["0.25.0", "0.26.0", "0.27.0"], [root, other])
    table.cells = {("r1", "0.25.0"): VersionCell("present"), ("r1", "0.26.0"): VersionCell("fixed"),
                   ("r1", "0.27.0"): VersionCell("present"),
                   ("r2", "0.25.0"): VersionCell("cannot-run"), ("r2", "0.26.0"): VersionCell("present"),
                   ("r2", "0.27.0"): VersionCell("present")}
    assert table.regressions() == {"r1": ("0.26.0", "0.27.0")}


def test_each_root_is_checked_with_its_shortest_verified_reproducer(tmp_path: Path) -> None:
    camp = fake_campaign(tmp_path / "c", tmp_path / "p", {"aaaa00000001": ["111111111111", "222222222222"],
                                                           "bbbb00000002": ["333333333333"]})
    for sig, lines, verified in (("111111111111", 3, True), ("222222222222", 2, True), ("333333333333", 2, False)):
        program = MinimalProgram("x = 1\n" * lines, ("apache-tvm", "numpy"), "pass-failure", "tirx.X")
        record = MinimalRecord.of(program).verified_by(verified, 1 if verified else 2, "v", "e", {})
        write_minimal(camp / "findings" / sig, program, record)
    roots, missing = root_programs([camp])
    assert [(r.root, r.folder.name, r.lines) for r in roots] == [("aaaa00000001", "222222222222", 2)]
    assert missing == {"bbbb00000002": "minimal.py was not verified (v)"}
