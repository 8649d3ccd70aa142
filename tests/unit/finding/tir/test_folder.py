"""The case a low-level finding is filed with (:func:`seedzer.finding.tir.folder.filed_case`)."""

from __future__ import annotations

from pathlib import Path

from seedzer.finding.meta import FindingSettings
from seedzer.finding.tir.folder import filed_case
from seedzer.kernel.common import Observation, Stage, Symptom
from seedzer.kernel.tir.case import Case, Checks

MISMATCH = Observation(Symptom.MISMATCH, Stage.COMPARE, None, "outputs differ")


def test_the_filed_case_is_verified_as_the_worker_verified_it() -> None:
    """A worker excuses LowerOpaqueBlock's pragma AttrStmt; the gate re-running its case must too (a
    60-minute campaign dismissed 8 candidates as not reproduced when the filed case dropped it)."""
    ran = Case("s", (), 1, checks=Checks(perf=True, intended_pragmas=True))
    filed = filed_case(ran, MISMATCH, FindingSettings(1e-3, 1e-4, {}))
    assert filed.checks.intended_pragmas and not filed.checks.perf and filed.expected == MISMATCH
    strict = filed_case(Case("s", (), 1), MISMATCH, FindingSettings(1e-3, 1e-4, {}))
    assert not strict.checks.intended_pragmas


def test_a_tir_finding_is_filed_as_the_campaign_files_it_and_reads_back(tmp_path: Path) -> None:
    """The kind's one path: the observed case filed (:meth:`TirKind.file`), its folder written by the
    house and read back by :meth:`TirFinding.load` as the same finding."""
    from seedzer.finding.kind import FileSettings, Observed, Provenance
    from seedzer.finding.registry import kind
    from seedzer.finding.store import dump
    from seedzer.finding.tir.folder import TirFinding

    ran = Case("# script\n", (), 7, checks=Checks(intended_pragmas=True))
    observed = Observed(MISMATCH, ran, Provenance("p" * 16, "m.onnx", ("flip",), 1, 9), "[]", (), "the log")
    tir = kind("tir")
    filed = tir.file(observed, FileSettings(FindingSettings(1e-3, 1e-4, {})))
    assert filed.meta.signature == tir.signature(observed) and filed.meta.kind == "tir"
    assert (filed.meta.parent, filed.meta.origin, filed.meta.mutators) == ("p" * 16, "m.onnx", ["flip"])
    assert filed.gate_case == filed.finding.case and filed.gate_case.expected == MISMATCH  # type: ignore[attr-defined]
    folder = dump(tmp_path / filed.meta.signature, filed.finding)
    back = TirFinding.load(folder)
    assert back == filed.finding


def test_the_reproducer_names_only_the_fuzzed_passes_the_bug_needs() -> None:
    """Issue 53: a TIR repro.py's header listed every fuzzed pass of the case as the bug's. Before the gate
    it lists them as not bisected yet; after, only the culprit and the passes that only reach it."""
    from seedzer.finding.meta import FindingMeta
    from seedzer.finding.tir.folder import fuzzed_line
    from seedzer.finding.verdict import AtFault
    from seedzer.kernel.tir.case import FUZZED, Step

    steps = (Step("s_tir.LowerOpaqueBlock", role=FUZZED), Step("tirx.VectorizeLoop"),
             Step("tirx.StorageRewrite", role=FUZZED), Step("s_tir.HoistIfThenElse", role=FUZZED))
    case = Case("s", steps, 1)
    meta = FindingMeta("0123456789ab", "tir", MISMATCH)
    assert fuzzed_line(case, meta) == ("Fuzzed passes inserted into TVM's default pipeline (not bisected yet): "
                                       "s_tir.LowerOpaqueBlock, tirx.StorageRewrite, s_tir.HoistIfThenElse")
    meta.culprit = ["tirx.StorageRewrite"]
    meta.at_fault = AtFault("tirx.StorageRewrite", "the failing step", ("s_tir.LowerOpaqueBlock",))
    assert fuzzed_line(case, meta) == ("Fuzzed passes the bug needs (the gate's bisection): s_tir.LowerOpaqueBlock, "
                                       "tirx.StorageRewrite (the case runs 1 more it does not need)")
    assert fuzzed_line(Case("s", (Step("tirx.VectorizeLoop"),), 1), meta).startswith("Fuzzed passes: none")
