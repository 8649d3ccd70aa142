"""Joint reduction of a TIR finding: two passes of the reducer engine
(:mod:`seedzer.finding.reducer`), ``ddmin-passes`` (ddmin over its fuzzed passes) then ``shrink-ir``
(greedy IR shrinking, :mod:`seedzer.finding.shrink_ir`), in rounds until a round helps
neither, within a time budget, resumable.

The reduction runs in a process forked from the zygote and judges every candidate exactly as the
filing gate does (:class:`seedzer.finding.tir.gate.Tester`: the kernel in a forked child, a death a crash,
a timeout a hang): a candidate counts when it gives the finding's failure again
(:func:`~seedzer.kernel.messages.same_failure`). TVM's pipeline stays whole; only the fuzzed insertions
and the IR shrink. The best state is saved after every improvement in ``reduced/`` (``ir.py``,
``case.json``, ``state.json`` with the per-pass statistics); a later run continues from it. At the
end ``reduced/repro.py`` is written and run in a clean interpreter, and ``report.md`` is drafted
with the table of the passes that paid off.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from seedzer.finding.ddmin import ddmin
from seedzer.finding.layout import REDUCED_DIR, STATE_FILE
from seedzer.finding.reducer import Trial, defines_pass, passes_of
from seedzer.finding.script_reduce import Reduction, ScriptReducer, lines, reduce_script
from seedzer.finding.tir.folder import CASE_FILE, IR_FILE
from seedzer.kernel.common import Observation
from seedzer.kernel.messages import ir_names
from seedzer.kernel.tir.case import FUZZED, Case
from seedzer.store.atomic import write_atomic

LOOSE = ("mismatch", "perf")
"""Symptoms whose reduction must not drop writes (later reads would see uninitialized memory)."""


def fuzzed_steps(case: Case) -> list[int]:
    """The indices of the fuzzed steps of ``case``."""
    return [i for i, s in enumerate(case.steps) if s.role == FUZZED]


def _without(case: Case, keep: list[int]) -> Case:
    kept = set(keep)
    return case.with_steps([s for i, s in enumerate(case.steps) if s.role != FUZZED or i in kept])


def save_state(folder: Path, case: Case, state: dict[str, Any]) -> None:
    """Save the best case so far and the reduction's state in ``reduced/``."""
    reduced = folder / REDUCED_DIR
    write_atomic(reduced / IR_FILE, case.script)
    write_atomic(reduced / CASE_FILE, json.dumps(case.to_json(), indent=1))
    write_atomic(reduced / STATE_FILE, json.dumps(state, indent=1))


def case_size(case: Case) -> dict[str, int]:
    """A case's size for the reducer: TVMScript lines and fuzzed passes."""
    return {"lines": lines(case.script), "passes": len(fuzzed_steps(case))}


class TirPasses:
    """The reduction passes of a low-level case; ``aggressive`` lets IR shrinking drop writes to
    buffers the function allocates (see :func:`~seedzer.finding.shrink_ir.candidates`)."""

    def __init__(self, aggressive: bool) -> None:
        self.aggressive = aggressive

    @defines_pass("ddmin-passes")
    def ddmin_passes(self, case: Case, trial: Trial[Case]) -> Case | None:
        """ddmin over the fuzzed passes (TVM's pipeline stays whole)."""
        ddmin(fuzzed_steps(case), lambda keep: trial(_without(case, keep)), trial.out_of_time)
        return trial.current

    @defines_pass("shrink-ir")
    def shrink_ir(self, case: Case, trial: Trial[Case]) -> Case | None:
        """Greedy IR shrinking: the first smaller well-formed one-step shrink, again and again (one
        pass: its candidate families interleave)."""
        from seedzer.finding.shrink_ir import shrink

        shrink(case.script, lambda s: trial(case.with_steps(case.steps, script=s)), trial.out_of_time,
               aggressive=self.aggressive)
        return trial.current


def reduce_in_child(folder_text: str, case_json: dict[str, Any], seconds: float, timeout: float,
                    state: dict[str, Any]) -> Reduction[Case]:
    """Reduce a case inside a zygote child (see the module docstring); ``state`` is the saved progress."""
    from seedzer.finding.tir.check import Tester

    folder = Path(folder_text)
    case = Case.from_json(case_json)
    target = case.expected
    assert target is not None
    tester = Tester()
    start = time.monotonic()
    names = ir_names(case.script)

    from seedzer.kernel.tir.observe import same_defect  # imports TVM: the reducer's child only

    def shows(candidate: Case, got: Observation) -> bool:  # as repro.py and the gate's re-run alone judge
        return same_defect(candidate, target, got, lambda verified: tester.observe(verified, timeout), names)

    def holds(candidate: Case) -> bool:
        return shows(candidate, tester.observe(candidate, timeout))

    def unconfirmed(candidate: Case) -> Observation | None:
        got = tester.observe(candidate, timeout)
        return None if shows(candidate, got) else got

    reducer = ScriptReducer(passes_of(TirPasses(target.symptom.value not in LOOSE)), holds, unconfirmed, case_size,
                            save_state, lambda: tester.tests)
    return reduce_script(reducer, folder, case, seconds, state, start)
