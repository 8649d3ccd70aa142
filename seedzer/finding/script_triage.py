"""Triage of a finding whose case is one PrimFunc's TVMScript (the ``tir`` and ``sched`` kinds), the same
steps for both: reduce it (resumable, in a process forked from the zygote, the kind's reducer), write
``reduced/repro.py`` and run it in a clean interpreter, make the plain reproducer ``minimal.py``
(:mod:`seedzer.finding.minimal_step`), then write ``report.md`` with the kind's notes. A kind says what
differs in one :class:`ScriptTriage`: how its case is read, saved and counted, its reducer, reproducer,
minimal search, report notes and gate rules."""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Generic, Protocol, TypeVar

from seedzer.execute.isolated_call import run_isolated
from seedzer.finding.kind import Described, TriageOptions, TriageResult
from seedzer.finding.layout import REDUCED_DIR, REPRO_FILE, STATE_FILE
from seedzer.finding.meta import FindingMeta
from seedzer.finding.minimal.text import Docs
from seedzer.finding.minimal_step import SEARCH_LOG, docs_for, make_minimal, noted, write_report
from seedzer.finding.reducer import PassStats, stats_from_json
from seedzer.finding.repro import run_repro
from seedzer.finding.script_reduce import Reduction, lines
from seedzer.kernel.common import Observation, Stage
from seedzer.store.atomic import write_atomic


class ScriptCase(Protocol):
    """What the triage reads of a kind's case (a dataclass)."""

    __dataclass_fields__: ClassVar[dict[str, Any]]

    @property
    def script(self) -> str: ...
    @property
    def timeout(self) -> float: ...
    @property
    def expected(self) -> Observation | None: ...
    def to_json(self) -> dict[str, Any]: ...


CaseT = TypeVar("CaseT", bound=ScriptCase)


class Rule(Protocol):
    """A gate rule as the report lists it."""

    @property
    def name(self) -> str: ...


@dataclass(frozen=True)
class ScriptTriage(Generic[CaseT]):
    """What a kind's triage has of its own."""

    kind_name: str
    case_file: str
    """The case's file in ``reduced/`` (read back when a reduction resumes)."""
    triage_log: str
    """The reducer's output file in ``reduced/``."""
    load_case: Callable[[dict[str, Any]], CaseT]
    steps_key: str
    """The state key of the case's step count before the reduction (kept as older states spell it)."""
    steps: Callable[[CaseT], int]
    """The case's steps the reduction counts (fuzzed passes, trace instructions)."""
    stage: Stage
    """The stage a death of the reducer's process is reported at."""
    reduce_in_child: Callable[..., Any]
    """The reduction run in the forked process: ``(folder, case json, seconds, timeout, state)``, giving a
    reduction (the best case, ``done``, ``reproduced``, tests, seconds, note, rounds and pass statistics)."""
    save_state: Callable[[Path, CaseT, dict[str, Any]], None]
    render_repro: Callable[[CaseT, FindingMeta], str]
    minimal_job: Callable[[CaseT, tuple[str, ...], Docs, float], Any]
    minimal_search: str
    """The plain reproducer's search, ``module:function`` (imported in the forked child only)."""
    render_report: Callable[[FindingMeta, CaseT, TriageResult, dict[str, PassStats]], str]
    rules: Sequence[Rule]


def triage_script(kind: ScriptTriage[CaseT], folder: Path, meta: FindingMeta, case: CaseT,
                  options: TriageOptions) -> TriageResult:
    """Reduce ``case``, the finding's in ``folder`` (resumable), write reduced/repro.py, minimal.py and
    report.md."""
    start = time.monotonic()
    obs = meta.observation
    result = TriageResult(folder.name, kind.kind_name, obs.symptom.value, obs.where(), "error")
    case = dataclasses.replace(case, expected=case.expected or obs)
    state_path = folder / REDUCED_DIR / STATE_FILE
    state: dict[str, Any] = {}
    if state_path.exists() and not options.force:
        state = json.loads(state_path.read_text())
        case = kind.load_case(json.loads((folder / REDUCED_DIR / kind.case_file).read_text()))
    result.size_before = state.setdefault("lines_before", lines(case.script))
    result.passes_before = state.setdefault(kind.steps_key, kind.steps(case))
    if not state.get("done"):
        timeout = case.timeout * 2 if obs.symptom.value == "hang" else min(case.timeout, 300.0)
        res = run_isolated(kind.reduce_in_child, str(folder), case.to_json(), options.minutes * 60, timeout, state,
                           timeout=options.minutes * 60 + 2 * timeout + 60, stage=kind.stage,
                           log=str(folder / REDUCED_DIR / kind.triage_log))
        if res.outcome is not None:
            result.note = f"the reduction died: {res.outcome.message[:200]}"
            return result
        red: Reduction[CaseT] = res.value
        if not red.reproduced:
            result.status, result.note = "not-reproduced", f"observed {red.note[:200]}"
            return result
        case = red.case
        state.update(done=red.done, tests=state.get("tests", 0) + red.tests,
                     seconds=state.get("seconds", 0.0) + red.seconds, confirmed=True, rounds=red.rounds,
                     pass_stats=red.stats)
        kind.save_state(folder, case, state)
    repro = folder / REDUCED_DIR / REPRO_FILE
    write_atomic(repro, kind.render_repro(case, meta))
    run = run_repro(repro, options.python, timeout=case.timeout + 300.0)
    ok = (run.returncode is not None and run.returncode < 0) if obs.symptom.value == "crash" else run.returncode == 1
    result.size_after, result.passes_after = lines(case.script), kind.steps(case)
    result.tests, result.seconds = int(state.get("tests", 0)), time.monotonic() - start
    result.status = ("reduced" if state.get("done") else "partial") if ok else "unverified"
    result.note = f"reduced repro exit status {run.returncode}"
    state.update(verified=ok, verify_note=result.note)
    kind.save_state(folder, case, state)
    job = kind.minimal_job(case, tuple(meta.culprit), docs_for(meta), options.minimal_seconds)
    record = make_minimal(folder, kind.minimal_search, job, options, folder / REDUCED_DIR / SEARCH_LOG)
    notes = kind.render_report(meta, case, result, stats_from_json(state.get("pass_stats")))
    write_report(folder, meta, record, [Described.of(rule.name, type(rule)) for rule in kind.rules], options, notes)
    return noted(result, record)
