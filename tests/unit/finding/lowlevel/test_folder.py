"""The case a low-level finding is filed with (:func:`seedzer.finding.lowlevel.folder.filed_case`)."""

from __future__ import annotations

from seedzer.finding.lowlevel.folder import filed_case
from seedzer.finding.meta import FindingSettings
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
