"""Which roots a recheck merged or split (:func:`seedzer.finding.recheck.root_changes`)."""

from __future__ import annotations

import json
from pathlib import Path

from seedzer.finding.recheck import (
    DISMISSED,
    MERGED,
    REBLAMED,
    RECHECK_FILE,
    REKEYED,
    SPLIT,
    UNCHANGED,
    RecheckRow,
    RootChange,
    record_recheck,
    root_changes,
    root_map,
)


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


def test_the_root_map_says_where_every_old_root_went() -> None:
    rows = [row("a", "R", "relax.frontend.onnx.SequenceAt._impl_v11", "r1", "insert:SequenceAt"),
            row("b", "R", "relax.frontend.onnx.SequenceAt._impl_v11", "r2", "edge:SplitToSequence"),
            row("c", "S", "tirx.VectorizeLoop", "r3", "tirx.VectorizeLoop"),
            row("d", "T", "tirx.UnrollLoop", "r4", "tirx.UnrollLoop"),
            row("e", "U2", "s_tir.LoopPartition", "r5", "a + b"), row("f", "U3", "tirx.VectorizeLoop", "r5", "a + b"),
            row("g", None, "", "r6", "x", verdict="not-a-bug"),
            row("h", "r7", "codegen", "r7", "codegen"),
            row("i", None, "", "r8", "y", verdict="error")]
    moves = {m.old: m for m in root_map(rows)}
    assert set(moves) == {"r1", "r2", "r3", "r4", "r5", "r6", "r7"}  # a finding that could not be judged moves none
    assert [moves[r].change for r in ("r1", "r2", "r3", "r4", "r5", "r6", "r7")] == \
        [MERGED, MERGED, REKEYED, REKEYED, SPLIT, DISMISSED, UNCHANGED]
    assert moves["r1"].new == (("R", "relax.frontend.onnx.SequenceAt._impl_v11"),)
    assert moves["r5"].new == (("U2", "s_tir.LoopPartition"), ("U3", "tirx.VectorizeLoop"))
    assert root_map([row("a", "R", "topi.image.resize", "r", "edge:Resize")])[0].change == REBLAMED


def test_a_recheck_records_its_map_in_the_campaign(tmp_path: Path) -> None:
    rows = [row("a", "R", "x", "r1", "y"), row("b", "R", "x", "r2", "z")]
    path = record_recheck(tmp_path, rows)
    data = json.loads(path.read_text())
    assert path.name == RECHECK_FILE and [f["signature"] for f in data["findings"]] == ["a", "b"]
    assert [(r["old"], r["change"], r["new"]) for r in data["roots"]] == [
        ("r1", MERGED, [{"root": "R", "culprit": "x"}]), ("r2", MERGED, [{"root": "R", "culprit": "x"}])]
    assert data["changes"][0]["change"] == "merged"
