"""The isolated ONNX loader: every loading attempt in a process forked from the zygote.

:class:`OnnxLoader` loads a model raw first and, when that yields no seeds, once more after
constant folding; each attempt is :func:`seedzer.load.attempt.run_attempt` in a child forked from
the zygote (TVM already imported), so a segfault or a hang in TVM's importer becomes an
observation (a load finding) instead of a dead campaign. This module never imports TVM or onnx.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import signal
import tempfile
from collections.abc import Callable
from pathlib import Path

from seedzer.execute.death import death_observation
from seedzer.execute.isolated_call import run_isolated
from seedzer.kernel.common import Observation, Stage, Symptom
from seedzer.load.attempt import LOG_FILE, MODEL_COPY, PARTIAL_FILE, STEP_FILE, run_attempt
from seedzer.load.loader import AttemptResult, LoadOptions, ModelLoad

AttemptFn = Callable[[str, str, LoadOptions, "str | None"], AttemptResult]
"""The signature of :func:`~seedzer.load.attempt.run_attempt` (path, attempt, options, workdir)."""


def _read_text(path: Path, limit: int) -> str:
    try:
        return path.read_text(errors="replace")[-limit:]
    except OSError:
        return ""


def _signal_of(message: str) -> int | None:
    """The signal number in ``killed by signal SIGSEGV`` (:func:`~seedzer.execute.death.describe_exit`'s wording)."""
    if not message.startswith("killed by signal "):
        return None
    name = message.removeprefix("killed by signal ").split()[0]
    with contextlib.suppress(KeyError, ValueError):
        return int(name) if name.isdigit() else int(signal.Signals[name])
    return None


def died(symptom: Symptom, message: str, attempt: str, workdir: Path) -> AttemptResult:
    """The result of an attempt whose process crashed, hung or raised outside its own error
    handling: its checkpoint (seeds, case, folded model), plus the observation of its end at the
    step it was in and the tail of its output. A SIGKILL is never a TVM bug (the OOM killer or an
    operator): it is recorded as ``invalid``, and the attempt as ``killed``."""
    result = AttemptResult(attempt)
    with contextlib.suppress(ValueError, OSError, TypeError, KeyError):
        result = AttemptResult.from_json(json.loads((workdir / PARTIAL_FILE).read_text()))
    if (workdir / MODEL_COPY).is_file():
        result.model = (workdir / MODEL_COPY).read_bytes()
    step = _read_text(workdir / STEP_FILE, 100).strip() or "parse"
    message = message[:4000]
    if symptom in (Symptom.CRASH, Symptom.HANG):  # a death: the one rule (a SIGKILL is invalid)
        signum = _signal_of(message) if symptom is Symptom.CRASH else None
        observation = death_observation(Stage.LOAD, step, message, signum=signum, timed_out=symptom is Symptom.HANG,
                                        exit_crashes=True)
        result.killed = signum == signal.SIGKILL
    else:
        observation = Observation(symptom, Stage.LOAD, step, message)
    result.observations.append(observation)
    result.log = _read_text(workdir / LOG_FILE, 3000)
    result.retryable = True
    result.died = True
    return result


class OnnxLoader:
    """Loads ONNX models into PrimFunc joint seeds (implements the ``Loader`` protocol).

    With ``isolate`` (the default) each attempt runs in a child forked from the zygote; without
    it, in this process (only for debugging and tests: a TVM crash then kills the caller).
    ``attempt_fn`` replaces :func:`~seedzer.load.attempt.run_attempt` (same signature,
    module-level so it pickles); tests use it to exercise crashes and hangs.
    """

    def __init__(self, options: LoadOptions | None = None, isolate: bool = True,
                 attempt_fn: AttemptFn = run_attempt) -> None:
        self.options = options or LoadOptions()
        self.isolate = isolate
        self.attempt_fn = attempt_fn

    def _attempt(self, path: Path, attempt: str) -> AttemptResult:
        if not self.isolate:
            return self.attempt_fn(str(path), attempt, self.options, None)
        workdir = Path(tempfile.mkdtemp(prefix="seedzer-load-"))
        try:
            res = run_isolated(self.attempt_fn, str(path), attempt, self.options, str(workdir),
                               timeout=self.options.timeout, stage=Stage.LOAD,
                               memory=self.options.limits.max_testcase_memory)
            if res.outcome is not None:
                return died(res.outcome.symptom, res.outcome.message, attempt, workdir)
            value: AttemptResult = res.value
            return value
        finally:
            shutil.rmtree(workdir, ignore_errors=True)

    def load(self, path: Path) -> ModelLoad:
        """Load one model: raw first; if that yields no seeds, retry on the constant-folded model (not
        after a raw attempt SIGKILLed from outside: that one said nothing about the model)."""
        path = Path(path)
        result = ModelLoad(model=path.name, path=str(path))
        raw = self._attempt(path, "raw")
        result.merge(raw)
        if result.seeds or not self.options.fold or not raw.retryable or raw.killed:
            return result
        folded = self._attempt(path, "folded")
        if folded.nothing_to_fold:
            result.timings["fold"] = result.timings.get("fold", 0.0) + folded.timings.get("fold", 0.0)
            return result
        result.merge(folded)
        result.folded = True
        return result
