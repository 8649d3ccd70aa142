"""The triage's last two steps, the same for every kind: make the finding's plain reproducer (``minimal.py``)
with the kind's search, in a process forked from the zygote, then run it in a fresh environment
(:mod:`seedzer.finding.minimal.verify`); and write ``report.md`` in TVM's bug template
(:mod:`seedzer.finding.bug_report`) with the kind's own notes."""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

from seedzer.environments.facts import EnvironmentFacts, probe
from seedzer.errors import SeedzerError
from seedzer.execute.isolated_call import run_isolated
from seedzer.finding.bug_report import ReportInput, demoted, render
from seedzer.finding.kind import Described, TriageOptions, TriageResult
from seedzer.finding.layout import REPORT_FILE
from seedzer.finding.meta import FindingMeta
from seedzer.finding.minimal.program import MINIMAL_FILE, Made, MinimalRecord, write_minimal
from seedzer.finding.minimal.text import Docs
from seedzer.finding.minimal.verify import installed_tvm, verify_minimal
from seedzer.kernel.common import Stage
from seedzer.store.atomic import write_atomic

SEARCH_LOG = "minimal.log"
"""TVM's output while the plain reproducer is searched for (inside the finding's ``reduced/``)."""


def docs_for(meta: FindingMeta) -> Docs:
    """The docstring of a finding's plain reproducer."""
    return Docs(f"Plain reproducer of a TVM bug: {meta.observation.headline()[:150]}",
                (f"Found by Seedzer (finding {meta.signature}, root {meta.root_signature or '-'}).",), installed_tvm())


def _call(target: str, job: Any) -> Any:
    """In the forked child: the search named ``module:function`` (imported there, never by the triage)."""
    module, _, function = target.partition(":")
    return getattr(importlib.import_module(module), function)(job)


def make_minimal(folder: Path, search: str, job: Any, options: TriageOptions, log: Path) -> MinimalRecord:
    """Run the kind's ``search`` (``"module:function"`` taking ``job``, returning a
    :class:`~seedzer.finding.minimal.program.Made` or why not) in a forked child, then verify what it made;
    the record, also written as ``minimal.json``."""
    res = run_isolated(_call, search, job, timeout=options.minimal_seconds + 900.0, stage=Stage.PASS, log=str(log))
    if res.outcome is not None:
        record = MinimalRecord.absent(f"the search died: {res.outcome.message[:160]}")
    elif isinstance(res.value, Made):
        try:
            return verify_minimal(folder, res.value.program, res.value.validity, options.verify)
        except SeedzerError as exc:  # an environment that cannot be made: the program stays, unverified
            record = MinimalRecord.of(res.value.program, res.value.validity)
            record = record.verified_by(False, None, f"not run: {exc}", "", {})
            write_minimal(folder, res.value.program, record)
            return record
    else:
        record = MinimalRecord.absent(str(res.value))
    write_minimal(folder, None, record)
    return record


def write_report(folder: Path, meta: FindingMeta, record: MinimalRecord | None, rules: list[Described],
                 options: TriageOptions, notes: str = "", fallback: str | None = None) -> Path:
    """Write ``report.md`` (TVM's template) from the finding, its plain reproducer and the kind's ``notes``
    (its own draft, demoted below the template)."""
    text = (folder / MINIMAL_FILE).read_text() if record is not None and record.lines else None
    facts: EnvironmentFacts | None = EnvironmentFacts.from_json(record.facts) if record is not None and record.facts \
        else None
    if facts is None:
        try:
            facts = probe(options.python)
        except SeedzerError:
            facts = None
    report = ReportInput(meta, record, text, rules, facts, notes=demoted(notes)) if fallback is None else \
        ReportInput(meta, record, text, rules, facts, fallback=fallback, notes=demoted(notes))
    path = folder / REPORT_FILE
    write_atomic(path, render(report))
    return path


def noted(result: TriageResult, record: MinimalRecord | None) -> TriageResult:
    """``result`` with the plain reproducer's size and status."""
    if record is not None:
        result.minimal_lines = record.lines or None
        result.minimal = record.status
    return result
