"""One loading attempt of one model, run inside an isolated (forked) process.

:func:`run_attempt` reads the model (and its reference ``.npz``), constant-folds it for the
``folded`` attempt, makes the loader kernel's case of it and runs
:func:`seedzer.kernel.load.observe.observe_all`: the same steps as the load gate, the reducer and every
loader ``repro.py``. The seeds are the scripts the kernel hands to its ``on_scripts`` callback.
With a work directory the attempt mirrors its progress there (the step it is in, a checkpoint of
its result so far, its case and folded model, its output), so that the parent can still name the
step, keep the seeds and file the finding when the process dies in a later step. This module
imports only the standard library and TVM-free parts of Seedzer at module level: the campaign
process imports it to hand :func:`run_attempt` to a child.
"""

from __future__ import annotations

import base64
import contextlib
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from seedzer.kernel.common import Observation, Stage, Symptom
from seedzer.load.loader import MODEL_FILE, STEPS, AttemptResult, LoadOptions, ScriptSeed
from seedzer.logfiles import redirect_output

STEP_FILE = "step"
PARTIAL_FILE = "partial.json"
MODEL_COPY = "model.onnx"
LOG_FILE = "log.txt"


def target_spec(text: str) -> Any:
    """A ``--target`` string as the kernel takes it: a dict for JSON object text, else the kind."""
    return json.loads(text) if text.lstrip().startswith("{") else text


class Progress:
    """Mirrors an attempt's progress into its work directory (nothing without one)."""

    def __init__(self, result: AttemptResult, workdir: Path | None) -> None:
        self.result = result
        self.workdir = workdir

    def enter(self, step: str) -> None:
        """Note that ``step`` starts (what the parent reports if the process dies in it)."""
        if self.workdir is not None:
            (self.workdir / STEP_FILE).write_text(step)

    @contextlib.contextmanager
    def step(self, name: str) -> Iterator[None]:
        """Enter and time an attempt step of its own (``parse``, ``fold``)."""
        self.enter(name)
        start = time.perf_counter()
        try:
            yield
        finally:
            self.result.timings[name] = self.result.timings.get(name, 0.0) + time.perf_counter() - start

    def checkpoint(self) -> None:
        """Save the result so far (and the folded model once known); the parent reads them if this
        process dies later."""
        if self.workdir is None:
            return
        if self.result.model is not None and not (self.workdir / MODEL_COPY).exists():
            (self.workdir / MODEL_COPY).write_bytes(self.result.model)
        (self.workdir / PARTIAL_FILE).write_text(json.dumps(self.result.to_json()))


def _invalid(step: str, message: str) -> Observation:
    return Observation(Symptom.INVALID, Stage.LOAD, step, message)


def run_attempt(path: str, attempt: str, options: LoadOptions, workdir: str | None) -> AttemptResult:
    """Load ``path`` once (``attempt`` is ``raw`` or ``folded``) with ``options``.

    With a ``workdir`` the process's output goes there and its progress is mirrored there (only do
    that in a child process).
    """
    wd = Path(workdir) if workdir else None
    if wd is not None:
        redirect_output(wd / LOG_FILE)
    result = AttemptResult(attempt)
    progress = Progress(result, wd)
    try:
        _attempt(Path(path), options, result, progress)
    finally:
        progress.checkpoint()
    return result


def _attempt(path: Path, options: LoadOptions, result: AttemptResult, progress: Progress) -> None:
    from seedzer.load.onnx_import import InvalidModel, input_specs, read_model
    from seedzer.load.refdata import RefData, read_reference

    with progress.step("parse"):
        try:
            ref = read_reference(path)
        except ValueError as exc:
            result.observations.append(_invalid("reference", str(exc)))
            ref = RefData()
        try:
            model = read_model(path, options.limits)
            specs, bound = input_specs(model, path.name, ref.inputs)
        except InvalidModel as exc:
            result.observations.append(_invalid("parse", str(exc)))
            result.retryable = False
            return
    result.reached.append("parse")
    result.bound_dims = bound
    if result.attempt == "folded":
        from seedzer.load.folding import FoldError, fold_constants

        with progress.step("fold"):
            try:
                folded = fold_constants(model, options.max_fold_bytes, {s.name: list(s.shape) for s in specs})
            except FoldError as exc:
                result.observations.append(_invalid("fold", f"constant folding failed: {exc}"))
                return
        result.reached.append("fold")
        result.folded_nodes = folded.folded_nodes
        if folded.folded_nodes == 0:
            result.nothing_to_fold = True
            return
        model = folded.model
        result.model = model.SerializeToString()
    _run_kernel(model, tuple(s.as_tuple() for s in specs), ref.path, options, result, progress)


def _run_kernel(model: Any, specs: tuple[tuple[str, str, tuple[int, ...]], ...], npz: Path | None,
                options: LoadOptions, result: AttemptResult, progress: Progress) -> None:
    """The loader kernel's steps on ``model``; seeds, failures, notes and timings into ``result``."""
    from seedzer.kernel.load.observe import LoadCase, observe_all
    from seedzer.kernel.onnx.model import Trace

    reference = base64.b64encode(npz.read_bytes()).decode() if npz is not None else None
    case = LoadCase(specs, model_file=MODEL_FILE, input_seed=options.input_seed, target=target_spec(options.target),
                      differential=options.differential, roundtrip=options.roundtrip, timeout=options.timeout,
                      reference=reference)
    result.case = case.to_json()
    progress.checkpoint()
    trace = Trace(on_step=progress.enter)
    before = list(result.reached)

    def on_scripts(step: str, fused: bool, scripts: list[tuple[str, str]]) -> None:
        result.seeds.extend(ScriptSeed(script, op, fused) for op, script in scripts)
        result.reached[:] = before + trace.reached
        progress.checkpoint()  # keep these seeds even if a later step kills the process

    failures = observe_all(case.with_model(result.model or model.SerializeToString()), on_scripts, trace)
    result.reached[:] = before + trace.reached
    for step, secs in trace.timings.items():
        result.timings[step] = result.timings.get(step, 0.0) + secs
    result.observations.extend(sorted(failures + trace.notes, key=_step_order))
    result.matched, result.reference, result.tracebacks = trace.matched, trace.reference, trace.tracebacks


def _step_order(obs: Observation) -> int:
    return STEPS.index(obs.pass_name) if obs.pass_name in STEPS else len(STEPS)
