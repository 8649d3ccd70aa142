"""Triage of one loader finding: reduce its model, write ``repro.py`` and ``report.md``, verify them.

Works on a campaign finding folder (``meta.json`` with ``"kind": "loader"``, the outcome and the
model path) or on a ``seedzer load --out`` finding folder (``finding.json`` and ``model.onnx``).
Files it writes into the folder (the layout of :mod:`seedzer.triage.reduce`, so ``seedzer replay``
finds them):

=======================  ======================================================================
``reduced/model.onnx``   best model so far (written at every improvement: a killed run loses nothing)
``reduced/state.json``   node counts, evaluations, seconds, finished or not, repro verification
``reduced/repro.py``     standalone reproducer of the reduced model (tvm, onnx, onnxruntime, numpy),
                         exit 1 while the bug is present; run in a clean process to verify it
``repro.py``             the same for the original model (``model.min.onnx`` beside a reproducer
                         whose model is too large to embed)
``report.md``            bug-report draft
=======================  ======================================================================

A second run resumes from ``reduced/model.onnx`` with the time it is given, unless the state says
the reduction finished (``force`` starts again from the original model).
"""

from __future__ import annotations

import json
import sys
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import onnx

from seedzer.errors import SeedzerError
from seedzer.load.folding import FoldError, fold_constants
from seedzer.load.onnx_import import InvalidModel, input_specs, read_model
from seedzer.oracles.signature import signature
from seedzer.outcome import Outcome
from seedzer.store.atomic import write_atomic
from seedzer.triage.loader_predicate import LoaderPredicate
from seedzer.triage.loader_report import LoaderReportInput, render_report, title
from seedzer.triage.loader_repro import render_loader_repro
from seedzer.triage.materialize import run_repro
from seedzer.triage.onnx_graph import export
from seedzer.triage.onnx_reduce import OnnxReducer, ReduceResult
from seedzer.triage.registry import TriageOptions, TriageResult
from seedzer.triage.replay import verdict

REDUCED, STATE, REPRO, REPORT = "reduced/model.onnx", "reduced/state.json", "reduced/repro.py", "report.md"
FULL_REPRO = "repro.py"


@dataclass(frozen=True)
class LoaderTriageOptions:
    """Limits: total reduction seconds, seconds per loading attempt, whether to verify the repro."""

    seconds: float = 600.0
    timeout: float = 60.0
    verify: bool = True
    force: bool = False
    python: str = sys.executable  # the interpreter that runs the reproducers


@dataclass
class LoaderTriage:
    """What triaging one loader finding did (also saved as ``reduce.json``)."""

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
    phases: dict[str, int] | None = None
    repro: str | None = None
    verified: bool | None = None  # repro.py failed the expected way in a clean process
    repro_exit: int | None = None


@dataclass(frozen=True)
class LoaderFinding:
    """A loader finding as read from its folder."""

    folder: Path
    outcome: Outcome
    model: Path
    signature: str


def read_finding(folder: Path) -> LoaderFinding:
    """Read a loader finding folder; a one-line :class:`SeedzerError` names what is wrong."""
    folder = Path(folder)
    for name in ("meta.json", "finding.json"):
        path = folder / name
        if path.is_file():
            break
    else:
        raise SeedzerError(f"{folder}: not a finding folder (no meta.json or finding.json)")
    try:
        meta = json.loads(path.read_text())
        outcome = Outcome.from_dict(meta["outcome"])
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise SeedzerError(f"{path}: unreadable finding metadata ({exc})") from exc
    if name == "meta.json" and meta.get("kind") != "loader":
        raise SeedzerError(f"{path}: not a loader finding (kind {meta.get('kind')!r})")
    model = folder / "model.onnx" if name == "finding.json" else Path(str(meta.get("model", "")))
    if not model.is_file():
        raise SeedzerError(f"{path}: the finding's model {model} does not exist")
    return LoaderFinding(folder, outcome, model, signature(outcome))


def _load_state(folder: Path, sig: str) -> dict[str, Any] | None:
    try:
        state = json.loads((folder / STATE).read_text())
    except (OSError, ValueError):
        return None
    return state if isinstance(state, dict) and state.get("signature") == sig else None


def _repro_model(model: onnx.ModelProto, outcome: Outcome) -> onnx.ModelProto:
    """The model the reproducer imports: constant-folded when the finding came from the folded attempt."""
    if outcome.detail.get("attempt") != "folded":
        return model
    specs, _ = input_specs(model, "reduced")
    try:
        return fold_constants(model, input_shapes={s.name: list(s.shape) for s in specs}).model
    except FoldError:
        return model


def verify_repro(path: Path, outcome: Outcome, timeout: float, python: str = sys.executable) -> tuple[bool, int | None]:
    """Run the reproducer at ``path`` in a clean process; True when it fails as the finding does."""
    code, _, out = run_repro(path, python, timeout + 120.0)
    write_atomic(path.with_suffix(".log"), out)
    return verdict(outcome.symptom.value, code) == "still-present", code


def _reduce(found: LoaderFinding, original: onnx.ModelProto, opts: LoaderTriageOptions,
            pred: LoaderPredicate, state: dict[str, Any] | None) -> tuple[onnx.ModelProto, ReduceResult | None]:
    folder = found.folder
    start = original
    if state is not None and not opts.force and (folder / REDUCED).is_file():
        start = onnx.load_model_from_string((folder / REDUCED).read_bytes())
        if state.get("complete"):
            return start, None

    def save(model: onnx.ModelProto) -> None:
        write_atomic(folder / REDUCED, export(model))

    result = OnnxReducer(pred, opts.seconds, on_progress=save).reduce(start)
    if result.reproduced:
        save(result.model)
    return result.model, result


def triage_loader(folder: Path, opts: LoaderTriageOptions | None = None) -> LoaderTriage:
    """Reduce, write ``repro.py`` and ``report.md``, verify; see the module doc. Saves ``reduce.json``."""
    opts = opts or LoaderTriageOptions()
    found = read_finding(folder)
    try:
        original = read_model(found.model)
    except InvalidModel as exc:
        raise SeedzerError(str(exc)) from exc
    step = str(found.outcome.detail.get("step", "import"))
    out = LoaderTriage(found.signature, str(found.model), found.outcome.symptom.value, step, True,
                       original_nodes=len(original.graph.node), nodes=len(original.graph.node))
    state = None if opts.force else _load_state(found.folder, found.signature)
    with tempfile.TemporaryDirectory(prefix="seedzer-triage-") as scratch:
        pred = LoaderPredicate(found.outcome, Path(scratch), opts.timeout)
        best, result = _reduce(found, original, opts, pred, state)
        if state is not None:
            out.evaluations, out.seconds = int(state.get("evaluations", 0)), float(state.get("seconds", 0.0))
        if result is not None:
            out.evaluations += result.evaluations
            out.seconds += result.seconds
            out.complete, out.phases, out.reproduced = result.complete, result.phases, result.reproduced
        else:
            out.complete, out.phases = True, (state or {}).get("phases")
        out.nodes = len(best.graph.node)
        matched = None
        if out.reproduced:  # confirm on the final model and keep the outcome it gives
            out.reproduced = pred(best)
            matched = pred.last_match
    if out.reproduced and matched is not None:
        _write_outputs(found, original, best, matched, out, opts)
    write_atomic(found.folder / STATE, json.dumps(asdict(out), indent=2))
    return out


def write_original_repro(folder: Path, timeout: float = LoaderTriageOptions.timeout) -> dict[str, Any]:
    """Write the standalone ``repro.py`` of a loader finding's original model (no reduction), as
    the campaign does in the background when it files the finding; return a summary."""
    found = read_finding(folder)
    try:
        original = read_model(found.model)
    except InvalidModel as exc:
        raise SeedzerError(str(exc)) from exc
    path = _write_repro(found.folder, original, found.outcome, timeout)
    return {"repro": str(path), "timeout": timeout, "nodes": len(original.graph.node)}


def _write_repro(folder: Path, model: onnx.ModelProto, outcome: Outcome, timeout: float) -> Path:
    repro = render_loader_repro(_repro_model(model, outcome), outcome, title(outcome, model), timeout=timeout)
    for name, data in repro.files.items():
        write_atomic(folder / name, data)
    write_atomic(folder / "repro.py", repro.script)
    return folder / "repro.py"


def _write_outputs(found: LoaderFinding, original: onnx.ModelProto, best: onnx.ModelProto, matched: Outcome,
                   out: LoaderTriage, opts: LoaderTriageOptions) -> None:
    if not (found.folder / FULL_REPRO).exists():
        _write_repro(found.folder, original, found.outcome, opts.timeout)
    path = _write_repro((found.folder / REPRO).parent, best, matched, opts.timeout)
    out.repro = str(path)
    verified_text = "was not run"
    if opts.verify:
        out.verified, out.repro_exit = verify_repro(path, matched, opts.timeout, opts.python)
        if out.repro_exit is None:
            verified_text = "did not finish in time"
        elif out.repro_exit < 0:
            verified_text = f"dies by signal {-out.repro_exit}"
        else:
            verified_text = f"exits with status {out.repro_exit}"
    report = LoaderReportInput(found.signature, matched, found.model.name, original, best, out.complete,
                               out.evaluations, out.seconds, verified_text)
    write_atomic(found.folder / REPORT, render_report(report))


def _status(res: LoaderTriage) -> str:
    if not res.reproduced:
        return "not-reproduced"
    if res.verified is False:
        return "unverified"
    return "reduced" if res.complete else "partial"


def triage_loader_finding(folder: Path, meta: dict[str, Any], options: TriageOptions) -> TriageResult:
    """The ``loader`` entry of :data:`seedzer.triage.registry.TRIAGERS` (``meta`` is re-read from ``folder``)."""
    opts = LoaderTriageOptions(seconds=options.minutes * 60.0, force=options.force, python=options.python)
    res = triage_loader(folder, opts)
    outcome = meta.get("outcome") or {}
    ops = []
    if (folder / REDUCED).is_file():
        ops = list(dict.fromkeys(n.op_type for n in onnx.load(folder / REDUCED).graph.node))
    return TriageResult(res.signature, "loader", res.symptom, f"{outcome.get('stage') or 'load'}/{res.step}",
                        _status(res), res.original_nodes, res.nodes, "nodes", seconds=res.seconds,
                        tests=res.evaluations, note=f"trigger: {', '.join(ops)}" if ops else "")
