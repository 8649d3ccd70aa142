"""Triage of one schedule finding: reduce it (resumable, :mod:`seedzer.finding.sched.reduce`), write
``reduced/repro.py`` and run it in a clean interpreter, make the plain reproducer ``minimal.py``
(:mod:`seedzer.finding.sched.minimal_repro`, verified in a fresh environment), then write ``report.md`` in
TVM's template with the kind's own notes (:mod:`seedzer.finding.sched.report_md`); the steps are
:func:`seedzer.finding.script_triage.triage_script`'s."""

from __future__ import annotations

from pathlib import Path

from seedzer.finding.kind import TriageOptions, TriageResult
from seedzer.finding.meta import FindingMeta
from seedzer.finding.sched.folder import CASE_FILE, KIND_NAME, TRIAGE_LOG, finding_case, render_sched_repro
from seedzer.finding.sched.gate import RULES
from seedzer.finding.sched.minimal_repro import SchedMinimalJob
from seedzer.finding.sched.reduce import reduce_in_child, save_state
from seedzer.finding.sched.report_md import render_report
from seedzer.finding.script_triage import ScriptTriage, triage_script
from seedzer.kernel.common import Stage
from seedzer.kernel.sched.case import SchedCase


def _instructions(case: SchedCase) -> int:
    return len(case.trace[0]) if case.trace else 0


SCHED_TRIAGE = ScriptTriage[SchedCase](
    KIND_NAME, CASE_FILE, TRIAGE_LOG, SchedCase.from_json, "instructions_before", _instructions,
    Stage.SCHEDULE, reduce_in_child, save_state, render_sched_repro, SchedMinimalJob,
    "seedzer.finding.sched.minimal_repro:make_sched_minimal", render_report, RULES)
"""What a schedule finding's triage has of its own: its case counted in trace instructions."""


def triage_sched(folder: Path, meta: FindingMeta, options: TriageOptions) -> TriageResult:
    """Reduce one schedule finding (resumable), write reduced/repro.py, minimal.py and report.md."""
    return triage_script(SCHED_TRIAGE, folder, meta, finding_case(folder), options)
