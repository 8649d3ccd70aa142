"""Materializing a low-level finding: expand its passes in a clean process, write a standalone repro.

``materialize(folder)`` runs :mod:`seedzer.triage.expand` in a subprocess (a crashing or hanging
pass still leaves the flat prefix up to the step that failed), builds the *case* the standalone
code runs (:mod:`seedzer.triage.standalone`) and writes ``case.json`` and ``repro.py`` into the
finding folder. It never imports TVM itself, so the campaign process may call it.

Run as ``python -m seedzer.triage.materialize FOLDER [--confirm]``: with ``--confirm`` it then runs
the fresh ``repro.py`` in another clean process and writes its exit status to ``confirm.json``
(the crash confirmation of :mod:`seedzer.campaign.confirm`).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from seedzer.errors import SeedzerError
from seedzer.mutate.pass_catalog import optional_pass_names
from seedzer.outcome import Outcome
from seedzer.seed import input_seed
from seedzer.store.atomic import write_atomic
from seedzer.store.repro import render_repro

O0 = {"kind": "llvm", "opt-level": 0}
O3 = {"kind": "llvm", "opt-level": 3}
DEFAULT_TIMEOUTS = {"load": 120.0, "mutate": 20.0, "pass": 20.0, "build": 60.0, "run": 20.0, "compare": 20.0}
EXPAND_TIMEOUT = 300.0


def read_meta(folder: Path) -> dict[str, Any]:
    """A finding's meta.json; a missing or corrupt one is a one-line error naming the file."""
    path = folder / "meta.json"
    try:
        meta = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise SeedzerError(f"{path}: not a finding's meta.json ({exc})") from exc
    if not isinstance(meta, dict) or "outcome" not in meta:
        raise SeedzerError(f"{path}: no 'outcome' field (not a Seedzer finding)")
    return meta


def expected_of(outcome: Outcome) -> dict[str, Any]:
    """The expected outcome as the standalone code compares it."""
    return {"symptom": outcome.symptom.value, "stage": outcome.stage.value if outcome.stage else None,
            "pass": outcome.pass_name, "message": outcome.message[:2000]}


def base_case(script: str, meta: dict[str, Any], steps: list[dict[str, Any]]) -> dict[str, Any]:
    """The case of a finding: its IR, flat steps, expected outcome and the campaign's settings."""
    outcome = Outcome.from_dict(meta["outcome"])
    settings = meta.get("settings") or {}
    timeouts = dict(DEFAULT_TIMEOUTS, **(settings.get("timeouts") or {}))
    perf = outcome.symptom.value == "perf"
    target = O3 if perf else O0
    stage = outcome.stage.value if outcome.stage else "pass"
    return {
        "script": script,
        "steps": steps,
        "expected": expected_of(outcome),
        "target": target,
        "build_target": target,
        "input_seed": input_seed(script),
        "rtol": float(settings.get("rtol", 1e-4)),
        "atol": float(settings.get("atol", 1e-5)),
        "timeout": float(timeouts.get(stage, 60.0)),
        "perf": {"factor": float(outcome.detail.get("factor", 2.0)),
                 "repeats": int(outcome.detail.get("repeats", 5))},
        "nopt_disabled": optional_pass_names(),
    }


def expand_steps(ir_path: Path, passes_path: Path, out: Path, target: dict[str, Any],
                 python: str = sys.executable, timeout: float = EXPAND_TIMEOUT) -> tuple[list[dict[str, Any]], str]:
    """Run the expansion in a clean process; return the flat steps and how it ended
    (``ok``, ``raised``, ``killed by signal N`` or ``timeout``)."""
    cmd = [python, "-m", "seedzer.triage.expand", str(ir_path), str(passes_path), str(out), json.dumps(target)]
    try:
        proc = subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                              timeout=timeout, check=False)
        code: int | None = proc.returncode
    except subprocess.TimeoutExpired:
        code = None
    steps, end = [], "timeout" if code is None else f"killed by signal {-code}" if code < 0 else "no end marker"
    for line in out.read_text().splitlines() if out.exists() else []:
        item = json.loads(line)
        if "done" in item:
            end = item["done"]
        else:
            steps.append(item)
    if code not in (0, None) and code > 0:
        raise SeedzerError(f"{ir_path.parent}: pass expansion failed ({proc.stderr.decode()[-300:].strip()})")
    return steps, end


def materialize(folder: Path, python: str = sys.executable) -> dict[str, Any]:
    """Write ``case.json`` and a standalone ``repro.py`` for a low-level finding; return the case.

    A loader finding gets the standalone ``repro.py`` of its original model instead.
    """
    folder = Path(folder)
    meta = read_meta(folder)
    if meta.get("kind") == "loader":
        from seedzer.triage.loader_case import write_original_repro

        return write_original_repro(folder)
    if meta.get("kind", "lowlevel") != "lowlevel":
        raise SeedzerError(f"{folder}: a {meta.get('kind')} finding has no reproducer")
    for name in ("ir.py", "passes.json"):
        if not (folder / name).exists():
            raise SeedzerError(f"{folder / name}: missing (not a low-level finding folder)")
    script = (folder / "ir.py").read_text()
    case = base_case(script, meta, [])
    case["steps"], case["expansion"] = expand_steps(folder / "ir.py", folder / "passes.json",
                                                    folder / "expanded.jsonl", case["target"], python)
    write_atomic(folder / "case.json", json.dumps(case, indent=1))
    write_atomic(folder / "repro.py", render_repro(case, meta.get("signature", "")))
    return case


def run_repro(path: Path, python: str = sys.executable, timeout: float = 600.0) -> tuple[int | None, float, str]:
    """Run a reproducer in a clean process; return (exit status or None on timeout, seconds, output tail)."""
    start = time.monotonic()
    try:
        proc = subprocess.run([python, path.name], cwd=path.parent, stdin=subprocess.DEVNULL,
                              capture_output=True, timeout=timeout, check=False)
        code: int | None = proc.returncode
        out = (proc.stdout + proc.stderr).decode(errors="replace")
    except subprocess.TimeoutExpired as exc:
        code, out = None, ((exc.stdout or b"") + (exc.stderr or b"")).decode(errors="replace")
    return code, time.monotonic() - start, out[-3000:]


def main(argv: list[str]) -> int:
    """Command-line entry point (see the module docstring)."""
    folder = Path(argv[0])
    try:
        case = materialize(folder)
    except SeedzerError as exc:
        write_atomic(folder / "confirm.json", json.dumps({"error": str(exc)}))
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if "--confirm" in argv:
        code, seconds, out = run_repro(folder / "repro.py", timeout=case["timeout"] + 120.0)
        write_atomic(folder / "confirm.log", out)
        write_atomic(folder / "confirm.json", json.dumps({"returncode": code, "seconds": seconds}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
