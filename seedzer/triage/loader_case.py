"""Triage of one loader finding: reduce its model, write ``repro.py`` and ``report.md``, verify them.

Works on a campaign finding folder (``meta.json`` with ``"kind": "loader"``, the outcome and the
model path) or on a ``seedzer load --out`` finding folder (``finding.json`` and ``model.onnx``).
Files it writes into the folder:

=================  ============================================================================
``reduced.onnx``   best model so far (written at every improvement: a killed run loses nothing)
``reduce.json``    state: node counts, evaluations, seconds, finished or not, repro verification
``repro.py``       standalone reproducer (tvm, onnx, onnxruntime, numpy), exit 1 while the bug is
                   present; ``model.min.onnx`` beside it when the model is too large to embed
``report.md``      bug-report draft
=================  ============================================================================

A second run resumes from ``reduced.onnx`` with the time it is given, unless ``reduce.json`` says
the reduction finished (``force`` starts again from the original model).
"""

from __future__ import annotations

import json
import subprocess
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
from seedzer.outcome import Outcome, Symptom
from seedzer.store.atomic import write_atomic
from seedzer.triage.loader_predicate import LoaderPredicate
from seedzer.triage.loader_report import LoaderReportInput, render_report, title
from seedzer.triage.loader_repro import render_loader_repro
from seedzer.triage.onnx_graph import export
from seedzer.triage.onnx_reduce import OnnxReducer, ReduceResult

REDUCED, STATE, REPRO, REPORT = "reduced.onnx", "reduce.json", "repro.py", "report.md"


@dataclass(frozen=True)
class LoaderTriageOptions:
    """Limits: total reduction seconds, seconds per loading attempt, whether to verify the repro."""

    seconds: float = 600.0
    timeout: float = 60.0
    verify: bool = True
    force: bool = False


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


def verify_repro(folder: Path, outcome: Outcome, timeout: float) -> tuple[bool, int | None]:
    """Run ``repro.py`` in a clean process; True when it fails as the finding does."""
    try:
        proc = subprocess.run([sys.executable, "-I", REPRO], cwd=folder, capture_output=True, timeout=timeout + 120)
    except subprocess.TimeoutExpired:
        return False, None
    write_atomic(folder / "repro.log", proc.stdout.decode(errors="replace") + proc.stderr.decode(errors="replace"))
    if outcome.symptom is Symptom.CRASH:
        return proc.returncode < 0 or proc.returncode == 1, proc.returncode
    return proc.returncode == 1, proc.returncode


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


def _write_outputs(found: LoaderFinding, original: onnx.ModelProto, best: onnx.ModelProto, matched: Outcome,
                   out: LoaderTriage, opts: LoaderTriageOptions) -> None:
    repro = render_loader_repro(_repro_model(best, matched), matched, title(matched, best), timeout=opts.timeout)
    for name, data in repro.files.items():
        write_atomic(found.folder / name, data)
    write_atomic(found.folder / REPRO, repro.script)
    out.repro = str(found.folder / REPRO)
    verified_text = "was not run"
    if opts.verify:
        out.verified, out.repro_exit = verify_repro(found.folder, matched, opts.timeout)
        verified_text = (f"exits with status {out.repro_exit}" if out.repro_exit is not None and out.repro_exit >= 0
                         else f"dies by signal {-(out.repro_exit or 0)}")
        if out.repro_exit is None:
            verified_text = "did not finish in time"
    report = LoaderReportInput(found.signature, matched, found.model.name, original, best, out.complete,
                               out.evaluations, out.seconds, verified_text)
    write_atomic(found.folder / REPORT, render_report(report))
