"""Reproducers of findings: writing a low-level finding's ``repro.py``, and running any reproducer.

A low-level finding's reproducer is its kernel case followed by the kernel's code
(:func:`seedzer.store.repro.render`); rendering only reads text, so the campaign process writes it
when it files a finding. :func:`run_repro` runs a reproducer in a clean interpreter (``python -I``:
no Seedzer, no user site) and says how it ended.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from seedzer.errors import SeedzerError
from seedzer.kernel.common import FUZZED, Case
from seedzer.store.atomic import write_atomic
from seedzer.store.meta import FindingMeta
from seedzer.store.repro import render


def render_lowlevel_repro(case: Case, meta: FindingMeta) -> str:
    """The standalone reproducer of a low-level finding's case."""
    obs = case.expected or meta.observation
    fuzzed = [s.label() for s in case.steps if s.role == FUZZED]
    about = (f"Expected: {obs.headline()[:300]}\n"
             f"Fuzzed passes inserted into TVM's default pipeline: {', '.join(fuzzed) or 'none'}\n"
             + (f"Culprit (bisection): {' + '.join(meta.culprit)}\n" if meta.culprit else "")
             + "Programs: opt = every step; reference = the pipeline alone (what tvm.compile builds); minimal = the "
             "pipeline without its optional passes.")
    return render("lowlevel", case.to_json(), title=obs.headline()[:160], about=about, finding=meta.signature,
                  big={"script": "SCRIPT"})


def lowlevel_files(case: Case, meta: FindingMeta, passes_json: str, log: str) -> dict[str, str | bytes]:
    """The files of a low-level finding folder (written when it is filed, before the gate runs)."""
    return {"ir.py": case.script, "passes.json": json.dumps(json.loads(passes_json or "[]"), indent=1),
            "case.json": json.dumps(case.to_json(), indent=1), "log.txt": log,
            "repro.py": render_lowlevel_repro(case, meta)}


def write_case(folder: Path, case: Case, meta: FindingMeta) -> Path:
    """Write a low-level finding's ``case.json`` and ``repro.py`` (e.g. the case the gate settled on)."""
    write_atomic(folder / "case.json", json.dumps(case.to_json(), indent=1))
    write_atomic(folder / "repro.py", render_lowlevel_repro(case, meta))
    return folder / "repro.py"


def ensure_repro(folder: Path, meta: FindingMeta) -> Path:
    """The finding's ``repro.py``, written from its case first when the folder has none."""
    path = Path(folder) / "repro.py"
    if path.exists():
        return path
    if meta.kind != "lowlevel":
        raise SeedzerError(f"{folder}: the {meta.kind} finding has no repro.py")
    from seedzer.triage.cases import finding_case

    case = finding_case(folder, meta).case
    return write_case(Path(folder), case, meta)


@dataclass
class ReproRun:
    """How a reproducer ended in a clean interpreter: exit status (negative: killed by that signal;
    None: it ran over its time limit), seconds, and the tail of its output."""

    returncode: int | None
    seconds: float
    output: str


def run_repro(path: Path, python: str = sys.executable, timeout: float = 600.0) -> ReproRun:
    """Run a reproducer with ``python -I`` in its folder (a missing interpreter is a one-line error)."""
    start = time.monotonic()
    try:
        proc = subprocess.run([python, "-I", path.name], cwd=path.parent, stdin=subprocess.DEVNULL,
                              capture_output=True, timeout=timeout, check=False)
        code: int | None = proc.returncode
        out = (proc.stdout + proc.stderr).decode(errors="replace")
    except subprocess.TimeoutExpired as exc:
        code, out = None, ((exc.stdout or b"") + (exc.stderr or b"")).decode(errors="replace")
    except OSError as exc:
        raise SeedzerError(f"{python}: cannot run the interpreter ({exc.strerror or exc})") from exc
    return ReproRun(code, time.monotonic() - start, out[-3000:])
