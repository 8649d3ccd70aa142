"""Joint reduction of a low-level finding: ddmin over the flat pass list, then IR shrinking,
alternating until neither helps, within a time budget, resumable.

The finding is first materialized (flat steps, ``case.json``, standalone ``repro.py``). Its
unreduced case is run once in an isolated child: the signature observed there is the one every
candidate must keep (for a mismatch or a slowdown the pass is left out, see
:func:`seedzer.triage.check.signature_of`). The best state so far is saved after every
improvement in ``reduced/`` (``ir.py``, ``steps.json``, ``state.json``); a later run continues
from it. At the end ``reduced/repro.py`` is written and run in a clean process, and ``report.md``
is drafted.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from seedzer.store.atomic import write_atomic
from seedzer.store.repro import render_repro
from seedzer.triage.check import Checker, observe_isolated, signature_of
from seedzer.triage.ddmin import ddmin
from seedzer.triage.materialize import materialize, run_repro
from seedzer.triage.registry import TriageOptions, TriageResult
from seedzer.triage.report_md import write_report
from seedzer.triage.shrink_ir import shrink

CANDIDATE_TIMEOUT = 120.0
FAILING_AT_PASS = ("exception", "crash", "hang", "illformed")


def lines(script: str) -> int:
    """TVMScript lines that are code (the printer's comment header is not counted)."""
    return sum(1 for ln in script.splitlines() if ln.strip() and not ln.lstrip().startswith("#"))


class Reduction:
    """One finding's reduction state, persisted in ``<folder>/reduced/``."""

    def __init__(self, folder: Path, case: dict[str, Any], options: TriageOptions) -> None:
        self.folder = folder
        self.dir = folder / "reduced"
        self.case = case
        self.options = options
        self.deadline = time.monotonic() + options.minutes * 60
        self.state: dict[str, Any] = {}
        self.script: str = case["script"]
        self.steps: list[dict[str, Any]] = list(case["steps"])

    def out_of_time(self) -> bool:
        """Whether the budget of this run is spent."""
        return time.monotonic() >= self.deadline

    def load(self) -> bool:
        """Resume from ``reduced/`` when a previous run left a state; True if it did."""
        path = self.dir / "state.json"
        if self.options.force or not path.exists():
            return False
        self.state = json.loads(path.read_text())
        self.script = (self.dir / "ir.py").read_text()
        self.steps = json.loads((self.dir / "steps.json").read_text())
        return True

    def save(self) -> None:
        """Persist the best script and steps so far (atomically)."""
        self.dir.mkdir(exist_ok=True)
        write_atomic(self.dir / "ir.py", self.script)
        write_atomic(self.dir / "steps.json", json.dumps(self.steps, indent=1))
        write_atomic(self.dir / "state.json", json.dumps(self.state, indent=1))

    def run(self, checker: Checker) -> bool:
        """Alternate ddmin and shrinking until a fixpoint (True) or the deadline (False)."""
        if self.case["expected"]["symptom"] in FAILING_AT_PASS and self.state.get("stage") == "pass":
            self._try_steps(self._truncated(), checker)
        aggressive = self.state["symptom"] not in ("mismatch", "perf")
        while not self.out_of_time():
            before = (self.script, len(self.steps))
            self._try_steps(ddmin(self.steps, lambda s: checker(self.script, s), self.out_of_time), checker)
            self.script = shrink(self.script, lambda t: checker(t, self.steps), self.out_of_time,
                                 self._better_script, aggressive)
            self.state["rounds"] = self.state.get("rounds", 0) + 1
            self.state["tests"] = self.state.get("tests", 0) + checker.tests
            checker.tests = 0
            self.save()
            if (self.script, len(self.steps)) == before:
                return not self.out_of_time()
        return False

    def _truncated(self) -> list[dict[str, Any]]:
        """The steps up to the last one named like the failing pass (later ones cannot matter)."""
        name = self.state.get("pass")
        last = max((i for i, s in enumerate(self.steps) if s["pass"] == name), default=len(self.steps) - 1)
        return self.steps[: last + 1]

    def _try_steps(self, steps: list[dict[str, Any]], checker: Checker) -> None:
        if len(steps) < len(self.steps) and checker(self.script, steps):
            self.steps = steps
            self.save()

    def _better_script(self, script: str) -> None:
        self.script = script
        self.save()


def _verify(folder: Path, case: dict[str, Any], options: TriageOptions) -> tuple[bool, str]:
    """Write ``reduced/repro.py`` and run it in a clean process: True when it fails the same way."""
    path = folder / "reduced" / "repro.py"
    write_atomic(path, render_repro(case, folder.name))
    code, _seconds, out = run_repro(path, options.python, timeout=case["timeout"] + 300.0)
    ok = (code is not None and code < 0) if case["expected"]["symptom"] == "crash" else code == 1
    return ok, f"reduced repro exit status {code}" + ("" if ok else f": {out.strip().splitlines()[-1:]}")


def triage_lowlevel(folder: Path, meta: dict[str, Any], options: TriageOptions) -> TriageResult:
    """Reduce one low-level finding (resumable), write reduced/repro.py and report.md."""
    start = time.monotonic()
    outcome = meta["outcome"]
    result = TriageResult(folder.name, "lowlevel", outcome["symptom"],
                          f"{outcome.get('stage') or '?'}/{outcome.get('pass_name') or '-'}", "error")
    case = json.loads((folder / "case.json").read_text()) if (folder / "case.json").exists() else None
    if case is None or options.force:
        case = materialize(folder, options.python)
    result.size_before, result.passes_before = lines(case["script"]), len(json.loads(
        (folder / "passes.json").read_text()))
    red = Reduction(folder, case, options)
    if not red.load():
        timeout = case["timeout"] + 30.0 if outcome["symptom"] == "hang" else CANDIDATE_TIMEOUT
        observed = observe_isolated(case, timeout)
        target = signature_of(observed)
        if target is None or observed["symptom"] != outcome["symptom"]:
            result.status = "not-reproduced"
            result.note = f"observed {observed['symptom']} at {observed['stage']}/{observed['pass']}"
            result.seconds = time.monotonic() - start
            return result
        red.state = {"target": target, "symptom": observed["symptom"], "stage": observed["stage"],
                     "pass": observed["pass"], "message": observed["message"][:2000],
                     "lines_before": result.size_before, "steps_before": len(case["steps"]),
                     "passes_before": result.passes_before, "done": False, "seconds": 0.0}
        red.save()
    if not red.state.get("done"):
        timeout = case["timeout"] + 30.0 if outcome["symptom"] == "hang" else CANDIDATE_TIMEOUT
        checker = Checker(case, red.state["target"], timeout)
        red.state["done"] = red.run(checker)
        red.state["seconds"] = red.state.get("seconds", 0.0) + time.monotonic() - start
        red.save()
    expected = {k: red.state[k] for k in ("symptom", "stage", "pass", "message")}
    reduced_case = dict(case, script=red.script, steps=red.steps, expected=expected)
    ok, note = _verify(folder, reduced_case, options)
    result.size_after, result.passes_after = lines(red.script), len(red.steps)
    result.tests, result.seconds = red.state.get("tests", 0), time.monotonic() - start
    result.status = ("reduced" if red.state["done"] else "partial") if ok else "unverified"
    result.note = note
    red.state.update(verified=ok, verify_note=note)
    red.save()
    write_report(folder, meta, reduced_case, result)
    return result
