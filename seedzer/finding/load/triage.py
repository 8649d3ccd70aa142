"""Triage of one load finding: reduce its model, write ``repro.py`` and ``report.md``, verify them.

Works on a load finding folder (:mod:`seedzer.finding.load.folder`: ``meta.json``,
``model.onnx``, ``case.json``), and on the folders older Seedzer versions wrote: a campaign's
``meta.json`` with an ``outcome`` and ``model`` the path of a pool model (used only when it is an
existing ``.onnx`` file; a finding of the folded attempt is folded again), or a ``seedzer load
--out`` folder's ``finding.json`` beside ``model.onnx``. Files it writes into the folder (the layout
of :mod:`seedzer.finding.tir.reduce`, so ``seedzer replay`` finds them):

=======================  ======================================================================
``reduced/model.onnx``   best model so far (written at every improvement: a killed run loses nothing)
``reduced/state.json``   node counts, evaluations, seconds, finished or not, per-pass statistics,
                         repro verification
``reduced/repro.py``     standalone reproducer of the reduced model (the loader kernel's code),
                         exit 1 while the bug is present; run in a clean process to verify it
``repro.py``             the same for the original model, when the folder has none
``report.md``            bug-report draft
=======================  ======================================================================

A second run resumes from ``reduced/model.onnx`` with the time it is given, unless the state says
the reduction finished (``force`` starts again from the original model).
"""

from __future__ import annotations

import json
import sys
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import onnx

from seedzer.errors import SeedzerError
from seedzer.finding.kind import Described, TriageOptions, TriageResult
from seedzer.finding.layout import REDUCED_DIR, REPORT_FILE, REPRO_FILE, STATE_FILE
from seedzer.finding.load.folder import (
    EMBED_LIMIT,
    KIND_NAME,
    LoadFinding,
    base_case,
    repro_text,
    with_expected,
)
from seedzer.finding.load.gate import RULES
from seedzer.finding.load.reduce import LoadPredicate
from seedzer.finding.load.report_md import LoadReportInput, render_report
from seedzer.finding.meta import FindingMeta
from seedzer.finding.minimal_step import SEARCH_LOG, docs_for, make_minimal, write_report
from seedzer.finding.onnx_finding import exit_text, load_state, parse_model, triage_status
from seedzer.finding.onnx_graph import export
from seedzer.finding.onnx_reduce import OnnxReducer, ReduceResult
from seedzer.finding.reducer import stats_from_json, stats_to_json
from seedzer.finding.replay import verdict
from seedzer.finding.repro import run_repro
from seedzer.load.loader import MODEL_FILE
from seedzer.load.onnx_import import InvalidModel
from seedzer.store.atomic import write_atomic

__all__ = ["LoadFinding", "LoadTriage", "LoadTriageOptions", "triage_load",
           "triage_load_finding", "write_original_repro"]

REDUCED, STATE = f"{REDUCED_DIR}/{MODEL_FILE}", f"{REDUCED_DIR}/{STATE_FILE}"
REPRO, REPORT = f"{REDUCED_DIR}/{REPRO_FILE}", REPORT_FILE
"""Paths of a load finding's reduction, relative to its folder."""


@dataclass(frozen=True)
class LoadTriageOptions:
    """Limits: total reduction seconds, seconds per loading check, whether to verify the repro."""

    seconds: float = 600.0
    timeout: float = 60.0
    verify: bool = True
    force: bool = False
    python: str = sys.executable  # the interpreter that runs the reproducers
    plain: TriageOptions | None = None
    """How to make and verify the plain reproducer ``minimal.py`` (None: none is made)."""


@dataclass
class LoadTriage:
    """What triaging one load finding did (also saved as ``reduced/state.json``)."""

    signature: str
    model: str
    symptom: str
    step: str
    reproduced: bool  # the finding still happens on the original model
    complete: bool = False
    original_nodes: int = 0
    nodes: int = 0
    evaluations: int = 0
    seconds: float = 0.0
    phases: dict[str, int] | None = None  # pass -> successful reductions
    pass_stats: dict[str, Any] | None = None  # pass -> its statistics (seedzer.finding.reducer.PassStats)
    repro: str | None = None
    verified: bool | None = None  # repro.py failed the expected way in a clean process
    repro_exit: int | None = None
    minimal: str = ""
    minimal_lines: int | None = None


def verify_repro(path: Path, found: LoadFinding, timeout: float,
                 python: str = sys.executable) -> tuple[bool, int | None]:
    """Run the reproducer at ``path`` in a clean process; True when it fails as the finding does."""
    run = run_repro(path, python, timeout + 120.0)
    write_atomic(path.with_suffix(".log"), run.output)
    return verdict(found.observation.symptom.value, run.returncode, run.output)[0] == "still-present", run.returncode


def _reduce(found: LoadFinding, original: onnx.ModelProto, opts: LoadTriageOptions,
            pred: LoadPredicate, state: dict[str, Any] | None) -> tuple[onnx.ModelProto, ReduceResult | None]:
    folder = found.where
    start = original
    if state is not None and not opts.force and (folder / REDUCED).is_file():
        start = onnx.load_model_from_string((folder / REDUCED).read_bytes())
        if state.get("complete"):
            return start, None

    def save(model: onnx.ModelProto) -> None:
        write_atomic(folder / REDUCED, export(model))

    earlier = stats_from_json(state.get("pass_stats")) if state is not None and start is not original else {}
    result = OnnxReducer(pred, opts.seconds, on_progress=save, stats=earlier).reduce(start)
    if result.reproduced:
        save(result.model)
    return result.model, result


def triage_load(folder: Path, opts: LoadTriageOptions | None = None) -> LoadTriage:
    """Reduce, write ``repro.py`` and ``report.md``, verify; see the module doc. Saves the state."""
    opts = opts or LoadTriageOptions()
    found = LoadFinding.load(folder)
    original = parse_model(found.model, str(found.where))
    obs = found.observation
    out = LoadTriage(found.signature, found.model_name, obs.symptom.value, obs.pass_name or "import", True,
                       original_nodes=len(original.graph.node), nodes=len(original.graph.node))
    state = None if opts.force else load_state(found.where / STATE, found.signature)
    try:
        case = base_case(found, opts.timeout)
    except InvalidModel as exc:
        raise SeedzerError(str(exc)) from exc
    pred = LoadPredicate(obs, case, opts.timeout)
    best, result = _reduce(found, original, opts, pred, state)
    if state is not None:
        out.evaluations, out.seconds = int(state.get("evaluations", 0)), float(state.get("seconds", 0.0))
    if result is not None:
        out.evaluations += result.evaluations
        out.seconds += result.seconds
        out.complete, out.phases, out.reproduced = result.complete, result.phases, result.reproduced
        out.pass_stats = stats_to_json(result.stats)
    else:
        out.complete, out.phases, out.pass_stats = True, (state or {}).get("phases"), (state or {}).get("pass_stats")
    out.nodes = len(best.graph.node)
    matched = None
    if out.reproduced:  # confirm on the final model and keep the observation it gives
        out.reproduced = pred(best)
        matched = pred.last_match
    if out.reproduced and matched is not None:
        _write_outputs(found, case, original, best, pred, matched, out, opts)
    write_atomic(found.where / STATE, json.dumps(asdict(out), indent=2))
    return out


def write_original_repro(folder: Path, timeout: float = LoadTriageOptions.timeout) -> dict[str, Any]:
    """Write the standalone ``repro.py`` of a load finding's own model (no reduction) when the
    folder has none (older findings); return a summary."""
    found = LoadFinding.load(folder)
    path = found.where / REPRO_FILE
    if not path.exists():
        try:
            case = base_case(found, timeout)
        except InvalidModel as exc:
            raise SeedzerError(str(exc)) from exc
        _original_repro(found, case)
    return {"repro": str(path), "timeout": timeout, "nodes": len(parse_model(found.model, str(folder)).graph.node)}


def _original_repro(found: LoadFinding, case: dict[str, Any]) -> None:
    """``repro.py`` of the finding's own model (and ``model.onnx`` when it is too large to embed)."""
    if len(found.model) > EMBED_LIMIT and not (found.where / MODEL_FILE).exists():
        write_atomic(found.where / MODEL_FILE, found.model)
    write_atomic(found.where / REPRO_FILE, repro_text(with_expected(case, found.observation), found.model,
                                                        found.signature))


def _write_outputs(found: LoadFinding, case: dict[str, Any], original: onnx.ModelProto, best: onnx.ModelProto,
                   pred: LoadPredicate, matched: Any, out: LoadTriage, opts: LoadTriageOptions) -> None:
    from seedzer.kernel.onnx.model import INPUT_SEED, TOLERANCES

    if not (found.where / REPRO_FILE).exists():
        _original_repro(found, case)
    reduced = pred.case_for(best).to_json()
    reduced.update(model=None, model_file=MODEL_FILE, expected=matched.to_json())
    path = found.where / REPRO
    write_atomic(path, repro_text(reduced, export(best), found.signature, f"Reduced from {found.model_name}."))
    out.repro = str(path)
    verified_text = "was not run"
    if opts.verify:
        out.verified, out.repro_exit = verify_repro(path, found, opts.timeout, opts.python)
        verified_text = exit_text(out.repro_exit)
    report = LoadReportInput(found.signature, matched, found.model_name, original, best, out.complete,
                               out.evaluations, out.seconds, verified_text, TOLERANCES["float32"], found.log,
                               stats_from_json(out.pass_stats))
    if opts.plain is None:
        write_atomic(found.where / REPORT, render_report(report))
        return
    from seedzer.finding.load.minimal_repro import LoadMinimalJob  # imports TVM: only when one is made

    meta = FindingMeta.load(found.where)
    job = LoadMinimalJob(export(best), found.model, matched, int(case.get("input_seed") or INPUT_SEED),
                         docs_for(meta), opts.plain.minimal_seconds)
    record = make_minimal(found.where, "seedzer.finding.load.minimal_repro:make_load_minimal", job, opts.plain,
                          found.where / REDUCED_DIR / SEARCH_LOG)
    out.minimal, out.minimal_lines = record.status, record.lines or None
    write_report(found.where, meta, record, [Described.of(rule.name, type(rule)) for rule in RULES], opts.plain,
                 render_report(report))


def triage_load_finding(folder: Path, meta: FindingMeta, options: TriageOptions) -> TriageResult:
    """The load kind's triage (:meth:`seedzer.finding.load.kind.LoadKind.triage`); the folder is
    read again as the load kind reads it, whichever Seedzer version wrote it."""
    opts = LoadTriageOptions(seconds=options.minutes * 60.0, force=options.force, python=options.python,
                             plain=options)
    res = triage_load(folder, opts)
    found = LoadFinding.load(folder)
    ops = []
    if (folder / REDUCED).is_file():
        ops = list(dict.fromkeys(n.op_type for n in onnx.load(folder / REDUCED).graph.node))
    stage = found.observation.stage.value if found.observation.stage else "load"
    return TriageResult(res.signature, KIND_NAME, res.symptom, f"{stage}/{res.step}", triage_status(res),
                        res.original_nodes, res.nodes, "nodes", seconds=res.seconds, tests=res.evaluations,
                        note=f"trigger: {', '.join(ops)}" if ops else "", minimal_lines=res.minimal_lines,
                        minimal=res.minimal)

