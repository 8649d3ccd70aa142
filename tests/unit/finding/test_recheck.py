"""Which roots a recheck merged or split (:func:`seedzer.finding.recheck.root_changes`)."""

from __future__ import annotations

from seedzer.finding.recheck import RecheckRow, RootChange, root_changes


def row(sig: str, root: str | None, culprit: str, before_root: str | None, before: str, verdict: str = "bug",
        evidence: str = "") -> RecheckRow:
    return RecheckRow(sig, "exception", verdict, "bug", root, [culprit], 1.0, before_root, [before], evidence)


def test_two_passes_reaching_one_topi_defect_are_one_merged_root() -> None:
    rows = [row("a", "R", "topi.image.resize", "r1", "relax.LegalizeOps", evidence="raised in get_inx"),
            row("b", "R", "topi.image.resize", "r2", "relax.FoldConstant"),
            row("c", "S", "tirx.VectorizeLoop", "r3", "tirx.VectorizeLoop")]
    assert root_changes(rows) == [RootChange(
        "merged", (("r1", "relax.LegalizeOps"), ("r2", "relax.FoldConstant")), (("R", "topi.image.resize"),),
        "raised in get_inx")]


def test_one_old_root_judged_as_two_bugs_is_a_split() -> None:
    rows = [row("a", "R1", "s_tir.LoopPartition", "r", "a + b"), row("b", "R2", "tirx.VectorizeLoop", "r", "a + b")]
    changes = root_changes(rows)
    assert [c.change for c in changes] == ["split"]
    assert changes[0].after == (("R1", "s_tir.LoopPartition"), ("R2", "tirx.VectorizeLoop"))


def test_unchanged_roots_dismissed_findings_and_rootless_old_findings_change_nothing() -> None:
    rows = [row("a", "R", "x", "r", "x"), row("b", "R", "x", "r", "x"),
            row("c", None, "", "q", "y", verdict="not-a-bug"),
            row("d", "R", "x", None, "")]  # filed before root signatures existed
    assert root_changes(rows) == []


def test_one_root_blamed_on_other_code_is_re_blamed() -> None:
    rows = [row("a", "R", "topi.image.resize", "r", "edge:Resize", evidence="raised in get_inx")]
    assert root_changes(rows) == [RootChange("re-blamed", (("r", "edge:Resize"),), (("R", "topi.image.resize"),),
                                             "raised in get_inx")]


def test_one_root_whose_findings_name_the_same_passes_as_before_is_not_re_blamed() -> None:
    rows = [row("a", "R", "a + s", "R", "a + s"), row("b", "R", "a + c", "R", "a + c")]  # culprits by finding
    assert root_changes(rows) == []
