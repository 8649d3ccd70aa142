"""Triage of one TIR finding: reduce it (resumable, :mod:`seedzer.finding.tir.reduce`), write
``reduced/repro.py`` and run it in a clean interpreter, make the plain reproducer ``minimal.py``
(:mod:`seedzer.finding.tir.minimal_repro`, verified in a fresh environment), then write ``report.md`` in
TVM's template with the kind's own draft (:mod:`seedzer.finding.tir.report_md`) as its notes; the steps
are :func:`seedzer.finding.script_triage.triage_script`'s."""

from __future__ import annotations

from pathlib import Path

from seedzer.finding.kind import TriageOptions, TriageResult
from seedzer.finding.meta import FindingMeta
from seedzer.finding.script_triage import ScriptTriage, triage_script
from seedzer.finding.tir.folder import CASE_FILE, KIND_NAME, TRIAGE_LOG, finding_case, render_tir_repro
from seedzer.finding.tir.gate import RULES
from seedzer.finding.tir.minimal_repro import TirMinimalJob
from seedzer.finding.tir.reduce import fuzzed_steps, reduce_in_child, save_state
from seedzer.finding.tir.report_md import render_report
from seedzer.kernel.common import Stage
from seedzer.kernel.tir.case import Case

TIR_TRIAGE = ScriptTriage[Case](
    KIND_NAME, CASE_FILE, TRIAGE_LOG, Case.from_json, "passes_before", lambda case: len(fuzzed_steps(case)),
    Stage.PASS, reduce_in_child, save_state, render_tir_repro, TirMinimalJob,
    "seedzer.finding.tir.minimal_repro:make_tir_minimal", render_report, RULES)
"""What a TIR finding's triage has of its own: its case counted in fuzzed passes."""


def triage_tir(folder: Path, meta: FindingMeta, options: TriageOptions) -> TriageResult:
    """Reduce one TIR finding (resumable), write reduced/repro.py, minimal.py and report.md."""
    return triage_script(TIR_TRIAGE, folder, meta, finding_case(folder, meta).case, options)
