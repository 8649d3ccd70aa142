"""Triage of one graph finding: minimize its sequence, reduce its model, write ``repro.py`` and
``report.md``, verify them.

Works on a graph finding folder (:mod:`seedzer.finding.graph.folder`). Files it writes, relative to
the folder (the house's layout, so ``seedzer replay --reduced`` finds them):

=========================  ====================================================================
``reduced/case.json``      best case so far (its sequence), with ``reduced/seed.onnx`` its seed
``reduced/seed.onnx``      and ``reduced/passes.json``; written at every improvement
``reduced/passes.json``
``reduced/model.onnx``     the model the reduced case fails on (its seed with its model mutations
                           applied), written with the reproducer
``reduced/state.json``     sizes, tests, seconds, finished or not, per-pass statistics, verification
``reduced/repro.py``       standalone reproducer of the reduced case (model embedded when small,
                           else ``model.onnx`` beside it): exit 1 while the bug is present
``report.md``              bug-report draft
=========================  ====================================================================

A second run resumes from ``reduced/`` with the time it is given, unless the state says the
reduction finished (``force`` starts again from the folder's own case); a ``reduced/`` of an older
Seedzer holds its seed as ``reduced/model.onnx``.
"""

from __future__ import annotations

import dataclasses
import json
import sys
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import onnx

from seedzer.finding.graph.folder import (
    KIND_NAME,
    LOG_FILE,
    REDUCED_CASE,
    REDUCED_MODEL,
    REDUCED_PASSES,
    REDUCED_REPRO,
    REDUCED_SEED,
    REDUCED_STATE,
    finding_case,
    model_of,
    passes_text,
    read_case,
    repro_text,
    stored,
    write_case,
)
from seedzer.finding.graph.gate import RULES
from seedzer.finding.graph.reduce import GraphPredicate, GraphReducer, Mutations, Passes
from seedzer.finding.graph.report_md import GraphReportInput, render_report
from seedzer.finding.kind import Described, TriageOptions, TriageResult
from seedzer.finding.layout import REDUCED_DIR, REPORT_FILE, REPRO_FILE
from seedzer.finding.meta import FindingMeta
from seedzer.finding.minimal_step import SEARCH_LOG, docs_for, make_minimal, write_report
from seedzer.finding.onnx_finding import exit_text, load_state, parse_model, triage_status
from seedzer.finding.onnx_graph import export
from seedzer.finding.reducer import stats_from_json, stats_to_json
from seedzer.finding.replay import verdict
from seedzer.finding.repro import run_repro
from seedzer.kernel.graph.case import GraphCase
from seedzer.store.atomic import write_atomic


@dataclass(frozen=True)
class GraphTriageOptions:
    """Limits: total reduction seconds, seconds per check, whether to verify the repro, redo a
    finished reduction, and the interpreter that runs the reproducers."""

    seconds: float = 600.0
    timeout: float = 120.0
    verify: bool = True
    force: bool = False
    python: str = sys.executable
    plain: TriageOptions | None = None
    """How to make and verify the plain reproducer ``minimal.py`` (None: none is made)."""


@dataclass
class GraphTriage:
    """What triaging one graph finding did (also saved as ``reduced/state.json``)."""

    signature: str
    symptom: str
    where: str
    reproduced: bool
    complete: bool = False
    passes_before: int = 0
    passes: int = 0
    mutations_before: int = 0
    mutations: int = 0
    original_nodes: int = 0
    nodes: int = 0
    evaluations: int = 0
    seconds: float = 0.0
    pass_stats: dict[str, Any] | None = None
    sequence: list[str] | None = None
    repro: str | None = None
    verified: bool | None = None
    repro_exit: int | None = None
    minimal: str = ""
    minimal_lines: int | None = None


def _start(folder: Path, case: GraphCase, model: onnx.ModelProto,
           state: dict[str, Any] | None) -> tuple[Passes, Mutations, onnx.ModelProto]:
    """Where the reduction starts: the saved best case when resuming, else the folder's own."""
    seed = folder / REDUCED_SEED if (folder / REDUCED_SEED).is_file() else folder / REDUCED_MODEL  # older: the seed
    if state is None or not (folder / REDUCED_CASE).is_file() or not seed.is_file():
        return case.passes, case.model_mutations, model
    saved = read_case(folder / REDUCED_CASE)
    return saved.passes, saved.model_mutations, parse_model(seed.read_bytes(), folder)


def verify_repro(path: Path, symptom: str, timeout: float, python: str = sys.executable) -> tuple[bool, int | None]:
    """Run the reproducer at ``path`` in a clean process; True when it fails as the finding does."""
    run = run_repro(path, python, timeout + 120.0)
    write_atomic(path.with_suffix(".log"), run.output)
    return verdict(symptom, run.returncode, run.output)[0] == "still-present", run.returncode


def triage_graph(folder: Path, opts: GraphTriageOptions | None = None) -> GraphTriage:
    """Reduce, write ``repro.py`` and ``report.md``, verify; see the module doc. Saves the state."""
    opts = opts or GraphTriageOptions()
    folder = Path(folder)
    meta = FindingMeta.load(folder)
    case = finding_case(folder)
    expected = case.expected or meta.observation
    original = parse_model(model_of(case, folder), folder)
    out = GraphTriage(meta.signature, expected.symptom.value, expected.where(), True, passes_before=len(case.passes),
                      passes=len(case.passes), mutations_before=len(case.model_mutations),
                      mutations=len(case.model_mutations), original_nodes=len(original.graph.node),
                      nodes=len(original.graph.node))
    state = None if opts.force else load_state(folder / REDUCED_STATE, meta.signature)
    passes, mutations, model = _start(folder, case, original, state)
    pred = GraphPredicate(expected, dataclasses.replace(case, model_mutations=mutations), opts.timeout)

    def save(best: Passes, reduced: onnx.ModelProto) -> None:
        write_atomic(folder / REDUCED_SEED, export(reduced))
        write_atomic(folder / REDUCED_PASSES, passes_text(best))
        write_atomic(folder / REDUCED_CASE, json.dumps(stored(pred.case_for(best, reduced)).to_json(), indent=1))

    earlier = stats_from_json(state.get("pass_stats")) if state is not None else {}
    if state is not None:
        out.evaluations, out.seconds = int(state.get("evaluations", 0)), float(state.get("seconds", 0.0))
    if state is not None and state.get("complete"):
        out.complete, out.pass_stats = True, state.get("pass_stats")
    else:
        result = GraphReducer(pred, opts.seconds, on_progress=save, stats=earlier).reduce(passes, model)
        passes, model = result.passes, result.model
        out.evaluations += result.evaluations
        out.seconds += result.seconds
        out.complete, out.reproduced = result.complete, result.reproduced
        out.pass_stats = stats_to_json(result.stats)
    out.passes, out.nodes, out.sequence = len(passes), len(model.graph.node), [p.label() for p in passes]
    out.mutations = len(pred.mutations)
    if out.reproduced:  # confirm on the final case and keep the observation it gives
        out.reproduced = pred(passes, model)
    if out.reproduced and pred.last_match is not None:
        save(passes, model)
        _write_outputs(folder, meta, case, original, passes, model, pred, out, opts)
    write_atomic(folder / REDUCED_STATE, json.dumps(asdict(out), indent=2))
    return out


def _write_outputs(folder: Path, meta: FindingMeta, case: Any, original: onnx.ModelProto, passes: Passes,
                   model: onnx.ModelProto, pred: GraphPredicate, out: GraphTriage, opts: GraphTriageOptions) -> None:
    """``reduced/repro.py`` (verified in a clean process), the folder's ``repro.py`` when it has none,
    and ``report.md``."""
    matched = pred.last_match
    assert matched is not None
    if not (folder / REPRO_FILE).exists():
        write_case(folder, meta, case)
    from seedzer.finding.graph.failing_model import failing_model  # the graph kernel: the reducer has it loaded

    reduced = stored(pred.case_for(passes, model), matched)
    failing = failing_model(reduced.with_model(export(model)), meta.origin)
    if failing is not None:  # the reduced model that fails, beside its seed
        write_atomic(folder / REDUCED_MODEL, failing.model)
    path = folder / REDUCED_REPRO
    write_atomic(path, repro_text(reduced, export(model), meta.signature,
                                  f"Reduced from {meta.origin or 'the finding'}'s model; passes: "
                                  + (", ".join(p.label() for p in passes) or "none")
                                  + (f"; model mutations: {', '.join(m.label() for m in pred.mutations)}"
                                     if pred.mutations else "")))
    out.repro = str(path)
    verified_text = "was not run"
    if opts.verify:
        out.verified, out.repro_exit = verify_repro(path, matched.symptom.value, opts.timeout, opts.python)
        verified_text = exit_text(out.repro_exit)
    log = (folder / LOG_FILE).read_text(errors="replace") if (folder / LOG_FILE).is_file() else ""
    report = GraphReportInput(meta.signature, matched, meta.origin or "seed.onnx", original, model,
                              case.passes, passes, out.complete, out.evaluations, out.seconds, verified_text, log,
                              stats_from_json(out.pass_stats), list(meta.culprit), pred.mutations,
                              parse_model(failing.model, folder) if failing is not None else None,
                              failing.record if failing is not None else None)
    if opts.plain is None:
        write_atomic(folder / REPORT_FILE, render_report(report))
        return
    from seedzer.finding.graph.minimal_repro import GraphMinimalJob  # imports TVM: only when one is made

    job = GraphMinimalJob(reduced.with_model(export(model)), model_of(case, folder), docs_for(meta),
                          opts.plain.minimal_seconds)
    record = make_minimal(folder, "seedzer.finding.graph.minimal_repro:make_graph_minimal", job, opts.plain,
                          folder / REDUCED_DIR / SEARCH_LOG)
    out.minimal, out.minimal_lines = record.status, record.lines or None
    write_report(folder, meta, record, [Described.of(rule.name, type(rule)) for rule in RULES], opts.plain,
                 render_report(report))


def triage_graph_finding(folder: Path, meta: FindingMeta, options: TriageOptions) -> TriageResult:
    """The graph kind's triage (:meth:`seedzer.finding.graph.kind.GraphKind.triage`)."""
    opts = GraphTriageOptions(seconds=options.minutes * 60.0, force=options.force, python=options.python,
                              plain=options)
    res = triage_graph(folder, opts)
    note = "passes: " + (", ".join(res.sequence or []) or "none")
    if res.mutations_before:
        note += f"; model mutations: {res.mutations_before} -> {res.mutations}"
    return TriageResult(res.signature, KIND_NAME, res.symptom, res.where, triage_status(res), res.original_nodes,
                        res.nodes, "nodes", res.passes_before, res.passes, res.seconds, res.evaluations, note,
                        res.minimal_lines, res.minimal)
