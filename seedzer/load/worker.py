"""One loading attempt of one model, run inside an isolated (forked) process.

:func:`run_attempt` is the module-level function handed to ``run_isolated``; it returns plain data
(a dict of strings, numbers, lists) and never TVM objects. It records the step it is in and a
checkpoint of the seeds it has so far in a work directory, so that the parent can still report the
step, keep the seeds and show the log when the process dies in a later step. This module imports
only the standard library at module level; the parent process imports it without loading TVM.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import time
import traceback
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

STEPS = ("parse", "fold", "import", "legalize", "fuse", "build", "run", "reference", "compare")
"""Steps of an attempt, in order."""

SUBSTAGE = {
    "parse": "import",
    "fold": "import",
    "import": "import",
    "legalize": "legalize",
    "fuse": "legalize",
    "build": "build",
    "run": "run",
    "reference": "compare",
    "compare": "compare",
}
"""The loader-finding substage (import/legalize/build/run/compare) each step belongs to."""

STEP_FILE = "step"
PARTIAL_FILE = "partial.json"
LOG_FILE = "log.txt"


def finding(symptom: str, step: str, attempt: str, message: str, **detail: Any) -> dict[str, Any]:
    """A loader outcome as a dict (``Outcome.to_dict`` form): stage ``load``, or ``compare`` for mismatches."""
    stage = "compare" if symptom == "mismatch" else "load"
    info = {"substage": SUBSTAGE[step], "step": step, "attempt": attempt, **detail}
    return {"symptom": symptom, "stage": stage, "pass_name": None, "message": message, "detail": info}


def one_line(exc: BaseException) -> str:
    """``Type: first non-empty line of the message``."""
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
    return f"{type(exc).__name__}: {lines[0] if lines else ''}"


class Attempt:
    """Accumulates an attempt's result and mirrors its progress into the work directory."""

    def __init__(self, attempt: str, workdir: Path | None) -> None:
        self.workdir = workdir
        self.data: dict[str, Any] = {
            "attempt": attempt,
            "seeds": [],
            "outcomes": [],
            "timings": {},
            "reached": [],
            "retryable": True,
            "folded_nodes": 0,
            "bound_dims": {},
            "matched": None,
            "reference": None,
            "nothing_to_fold": False,
            "folded_model": None,
        }

    @contextlib.contextmanager
    def step(self, name: str) -> Iterator[io.StringIO]:
        """Time step ``name``, note it in the work directory, silence warnings and capture stdout."""
        if self.workdir is not None:
            (self.workdir / STEP_FILE).write_text(name)
        buf = io.StringIO()
        start = time.perf_counter()
        try:
            with contextlib.redirect_stdout(buf), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                yield buf
        finally:
            timings = self.data["timings"]
            timings[name] = timings.get(name, 0.0) + time.perf_counter() - start

    def done(self, name: str) -> None:
        """Mark step ``name`` as completed successfully."""
        self.data["reached"].append(name)

    def fail(self, symptom: str, step: str, message: str, **detail: Any) -> None:
        """Record a loader outcome of this attempt."""
        self.data["outcomes"].append(finding(symptom, step, self.data["attempt"], message, **detail))

    def fail_exc(self, step: str, exc: BaseException, log: str = "", symptom: str = "exception") -> None:
        """Record an exception raised in ``step`` with its traceback and captured output."""
        self.fail(symptom, step, one_line(exc), traceback=traceback.format_exc()[-4000:], log=log[-2000:])

    def checkpoint(self) -> None:
        """Save the result so far; the parent reads it if this process dies later."""
        if self.workdir is not None:
            plain = {k: v for k, v in self.data.items() if k != "folded_model"}
            (self.workdir / PARTIAL_FILE).write_text(json.dumps(plain))


def _redirect_output(workdir: Path) -> None:
    """Send this process's stdout/stderr (C++ logs, crash dumps included) to the work directory."""
    fd = os.open(workdir / LOG_FILE, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.close(fd)


def run_attempt(path: str, attempt: str, options: dict[str, Any], workdir: str | None) -> dict[str, Any]:
    """Load ``path`` once (``attempt`` is ``raw`` or ``folded``) and return the result as plain data.

    ``options``: ``differential`` (bool), ``roundtrip`` (bool), ``target`` (str), ``input_seed`` (int),
    ``max_fold_bytes`` (int). With a ``workdir`` the process's output is redirected there and its
    progress is mirrored there (only do that in a child process).
    """
    wd = Path(workdir) if workdir else None
    if wd is not None:
        _redirect_output(wd)
    state = Attempt(attempt, wd)
    try:
        _attempt(Path(path), options, state)
    finally:
        state.checkpoint()
    return state.data


def _attempt(path: Path, options: dict[str, Any], st: Attempt) -> None:
    from seedzer.load.onnx_import import InvalidModel, input_specs, read_model
    from seedzer.load.refdata import RefData, read_reference

    name = path.name
    with st.step("parse"):
        try:
            ref = read_reference(path)
        except ValueError as exc:
            st.fail("invalid", "reference", str(exc))
            ref = RefData()
        try:
            model = read_model(path)
            specs, bound = input_specs(model, name, ref.inputs)
        except InvalidModel as exc:
            st.fail("invalid", "parse", str(exc))
            st.data["retryable"] = False
            return
    st.done("parse")
    st.data["bound_dims"] = bound
    if st.data["attempt"] == "folded":
        from seedzer.load.folding import FoldError, fold_constants

        with st.step("fold"):
            try:
                shapes = {s.name: list(s.shape) for s in specs}
                folded = fold_constants(model, int(options.get("max_fold_bytes", 256 << 20)), shapes)
            except FoldError as exc:
                st.fail("invalid", "fold", f"constant folding failed: {exc}")
                return
        st.done("fold")
        st.data["folded_nodes"] = folded.folded_nodes
        if folded.folded_nodes == 0:
            st.data["nothing_to_fold"] = True
            return
        model = folded.model
    mod = _lower(model, specs, options, st)
    if mod is None or not options.get("differential", True):
        return
    from seedzer.load.checks import differential_check

    differential_check(model, mod, specs, ref, options, st)


def _lower(model: Any, specs: list[Any], options: dict[str, Any], st: Attempt) -> Any:
    """Import, legalize and fuse; returns the imported Relax module (None if import failed)."""
    from seedzer.load import lowering
    from seedzer.load.onnx_import import import_relax, is_unsupported_op_error

    with st.step("import") as out:
        try:
            mod = import_relax(model, specs)
        except Exception as exc:  # the importer raises many types
            symptom = "invalid" if is_unsupported_op_error(exc) else "exception"
            st.fail_exc("import", exc, out.getvalue(), symptom=symptom)
            return None
    st.done("import")
    seen: set[str] = set()
    roundtrip = bool(options.get("roundtrip", True))
    target = str(options.get("target", "llvm"))
    for step, transform, fused in (
        ("legalize", lowering.legalize, False),
        ("fuse", lambda m: lowering.fuse(m, target), True),
    ):
        with st.step(step) as out:
            try:
                lowered = transform(mod)
                seeds, failures = lowering.to_seeds(lowered, fused, seen, roundtrip)
            except Exception as exc:  # any TVM error here is a loader finding
                st.fail_exc(step, exc, out.getvalue())
                continue
        st.done(step)
        st.data["seeds"].extend({"script": s.script, "op": s.op, "fused": s.fused} for s in seeds)
        for f in failures:
            st.fail("exception", step, f"TVMScript does not parse back: {f.message}", op=f.op)
        st.checkpoint()  # keep these seeds even if a later step kills the process
    return mod
