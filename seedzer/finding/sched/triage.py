"""Triage of one schedule finding: reduce it (resumable, :mod:`seedzer.finding.sched.reduce`), write
``reduced/repro.py`` and run it in a clean interpreter, make the plain reproducer ``minimal.py``
(:mod:`seedzer.finding.sched.minimal_repro`, verified in a fresh environment), then write ``report.md`` in
TVM's template with the kind's own notes (:mod:`seedzer.finding.sched.report_md`)."""

from __future__ import annotations

import dataclasses
import json
import time
from pathlib import Path
from typing import Any

from seedzer.execute.isolated_call import run_isolated
from seedzer.finding.kind import Described, TriageOptions, TriageResult
from seedzer.finding.layout import REDUCED_DIR, REPRO_FILE, STATE_FILE
from seedzer.finding.meta import FindingMeta
from seedzer.finding.minimal_step import SEARCH_LOG, docs_for, make_minimal, noted, write_report
from seedzer.finding.reducer import stats_from_json
from seedzer.finding.repro import run_repro
from seedzer.finding.sched.folder import CASE_FILE, KIND_NAME, TRIAGE_LOG, finding_case, render_sched_repro
from seedzer.finding.sched.gate import RULES
from seedzer.finding.sched.minimal_repro import SchedMinimalJob
from seedzer.finding.sched.reduce import Reduction, lines, reduce_in_child, save_state
from seedzer.finding.sched.report_md import render_report
from seedzer.kernel.common import Stage
from seedzer.kernel.sched.case import SchedCase
from seedzer.store.atomic import write_atomic


def _instructions(case: SchedCase) -> int:
    return len(case.trace[0]) if case.trace else 0


def triage_sched(folder: Path, meta: FindingMeta, options: TriageOptions) -> TriageResult:
    """Reduce one schedule finding (resumable), write reduced/repro.py, minimal.py and report.md."""
    start = time.monotonic()
    obs = meta.observation
    result = TriageResult(folder.name, KIND_NAME, obs.symptom.value, obs.where(), "error", unit="lines")
    case = finding_case(folder)
    case = dataclasses.replace(case, expected=case.expected or obs)
    state_path = folder / REDUCED_DIR / STATE_FILE
    state: dict[str, Any] = {}
    if state_path.exists() and not options.force:
        state = json.loads(state_path.read_text())
        case = SchedCase.from_json(json.loads((folder / REDUCED_DIR / CASE_FILE).read_text()))
    result.size_before = state.setdefault("lines_before", lines(case.script))
    result.passes_before = state.setdefault("instructions_before", _instructions(case))
    if not state.get("done"):
        timeout = case.timeout * 2 if obs.symptom.value == "hang" else min(case.timeout, 300.0)
        res = run_isolated(reduce_in_child, str(folder), case.to_json(), options.minutes * 60, timeout, state,
                           timeout=options.minutes * 60 + 2 * timeout + 60, stage=Stage.SCHEDULE,
                           log=str(folder / REDUCED_DIR / TRIAGE_LOG))
        if res.outcome is not None:
            result.note = f"the reduction died: {res.outcome.message[:200]}"
            return result
        red: Reduction = res.value
        if not red.reproduced:
            result.status, result.note = "not-reproduced", f"observed {red.note[:200]}"
            return result
        case = red.case
        state.update(done=red.done, tests=state.get("tests", 0) + red.tests,
                     seconds=state.get("seconds", 0.0) + red.seconds, confirmed=True, rounds=red.rounds,
                     pass_stats=red.stats)
        save_state(folder, case, state)
    repro = folder / REDUCED_DIR / REPRO_FILE
    write_atomic(repro, render_sched_repro(case, meta))
    run = run_repro(repro, options.python, timeout=case.timeout + 300.0)
    ok = (run.returncode is not None and run.returncode < 0) if obs.symptom.value == "crash" else run.returncode == 1
    result.size_after, result.passes_after = lines(case.script), _instructions(case)
    result.tests, result.seconds = int(state.get("tests", 0)), time.monotonic() - start
    result.status = ("reduced" if state.get("done") else "partial") if ok else "unverified"
    result.note = f"reduced repro exit status {run.returncode}"
    state.update(verified=ok, verify_note=result.note)
    save_state(folder, case, state)
    job = SchedMinimalJob(case, tuple(meta.culprit), docs_for(meta), options.minimal_seconds)
    record = make_minimal(folder, "seedzer.finding.sched.minimal_repro:make_sched_minimal", job, options,
                          folder / REDUCED_DIR / SEARCH_LOG)
    notes = render_report(meta, case, result, stats_from_json(state.get("pass_stats")))
    write_report(folder, meta, record, [Described.of(rule.name, type(rule)) for rule in RULES], options, notes)
    return noted(result, record)
