"""Reduction of a schedule finding: two passes of the reducer engine (:mod:`seedzer.finding.reducer`),
``ddmin-trace`` (ddmin over the trace's primitives: dropping one drops what uses its results, and the
getters and samplers nothing uses any more, :func:`~seedzer.passes.sched.items.repaired`; the
postprocessors are dropped when the failure does not need them) then ``shrink-ir`` (the house's greedy
IR shrinking of the PrimFunc, :mod:`seedzer.finding.shrink_ir`), in rounds until a round helps
neither, within a time budget, resumable.

The reduction runs in a process forked from the zygote and judges every candidate as the filing gate
does (:class:`seedzer.finding.sched.check.Tester`): a candidate counts when it gives the finding's
failure again. The best state is saved after every improvement in ``reduced/`` (``ir.py``,
``case.json``, ``state.json``); a later run continues from it. The gate's own ddmin
(:func:`cut_trace`) is the first pass's.
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from seedzer.finding.ddmin import ddmin
from seedzer.finding.layout import REDUCED_DIR, STATE_FILE
from seedzer.finding.reducer import Trial, defines_pass, passes_of
from seedzer.finding.sched.folder import CASE_FILE, IR_FILE, PLAN_FILE, plan_text
from seedzer.finding.script_reduce import Reduction, ScriptReducer, lines, reduce_script
from seedzer.kernel.common import Observation, Stage, Symptom
from seedzer.kernel.messages import ir_names, same_failure
from seedzer.kernel.sched.case import SchedCase
from seedzer.kernel.sched.trace import TRANSFORMING, parse_trace, trace_json
from seedzer.passes.sched.items import repaired
from seedzer.store.atomic import write_atomic

LOOSE = ("mismatch",)
"""Symptoms whose IR shrinking must not drop writes (later reads would see uninitialized memory)."""


def primitive_indices(case: SchedCase) -> list[int]:
    """The indices of the trace's transforming instructions (the primitives)."""
    return [i for i, inst in enumerate(parse_trace(case.trace)) if inst.kind in TRANSFORMING]


def with_primitives(case: SchedCase, keep: list[int], postprocs: bool = True) -> SchedCase:
    """``case`` with only the primitives at ``keep`` (the others dropped with what uses their results, and
    the getters and samplers nothing uses then), without its postprocessors unless ``postprocs``."""
    kept = set(keep)
    instructions = [inst for i, inst in enumerate(parse_trace(case.trace)) if inst.kind not in TRANSFORMING
                    or i in kept]
    return dataclasses.replace(case, trace=trace_json(repaired(instructions)),
                               postprocs=case.postprocs if postprocs else ())


def up_to_failure(case: SchedCase, failure: Observation) -> SchedCase:
    """``case`` without the instructions after the one a schedule-stage failure happened at (they never
    ran), and without the postprocessors when it happened in an instruction."""
    index = failure.step_index
    instructions = parse_trace(case.trace)
    if failure.stage is not Stage.SCHEDULE or index is None or index >= len(instructions):
        return case
    return dataclasses.replace(case, trace=trace_json(repaired(instructions[:index + 1])), postprocs=())


def cut_trace(case: SchedCase, holds: Callable[[SchedCase], bool],
              out_of_time: Callable[[], bool] = lambda: False) -> SchedCase:
    """The smallest trace ddmin finds that keeps ``holds`` true: the postprocessors dropped when that keeps
    it, then a 1-minimal set of primitives (see :func:`with_primitives`)."""
    if case.postprocs and holds(dataclasses.replace(case, postprocs=())):
        case = dataclasses.replace(case, postprocs=())
    indices = primitive_indices(case)
    if not indices:
        return case
    keep = ddmin(indices, lambda kept: holds(with_primitives(case, kept)), out_of_time)
    return with_primitives(case, keep) if keep != indices else case


def save_state(folder: Path, case: SchedCase, state: dict[str, Any]) -> None:
    """Save the best case so far and the reduction's state in ``reduced/``."""
    reduced = folder / REDUCED_DIR
    write_atomic(reduced / IR_FILE, case.script)
    write_atomic(reduced / PLAN_FILE, plan_text(case))
    write_atomic(reduced / CASE_FILE, json.dumps(case.to_json(), indent=1))
    write_atomic(reduced / STATE_FILE, json.dumps(state, indent=1))


def case_size(case: SchedCase) -> dict[str, int]:
    """A case's size for the reducer: TVMScript lines and trace instructions."""
    return {"lines": lines(case.script), "instructions": len(case.trace[0]) if case.trace else 0}


class SchedPasses:
    """The reduction passes of a schedule case; ``aggressive`` lets IR shrinking drop writes to buffers the
    function allocates (see :func:`~seedzer.finding.shrink_ir.candidates`)."""

    def __init__(self, aggressive: bool) -> None:
        self.aggressive = aggressive

    @defines_pass("ddmin-trace")
    def ddmin_trace(self, case: SchedCase, trial: Trial[SchedCase]) -> SchedCase | None:
        """ddmin over the trace's primitives (dropping one drops what uses its results), after the
        postprocessors when the failure does not need them."""
        cut_trace(case, trial, trial.out_of_time)
        return trial.current

    @defines_pass("shrink-ir")
    def shrink_ir(self, case: SchedCase, trial: Trial[SchedCase]) -> SchedCase | None:
        """Greedy IR shrinking of the PrimFunc the trace schedules: the first smaller well-formed one-step
        shrink, again and again (a shrink that breaks the trace's block or loop names refuses the trace:
        it does not count)."""
        from seedzer.finding.shrink_ir import shrink

        shrink(case.script, lambda s: trial(dataclasses.replace(case, script=s)), trial.out_of_time,
               aggressive=self.aggressive)
        return trial.current


def reduce_in_child(folder_text: str, case_json: dict[str, Any], seconds: float, timeout: float,
                    state: dict[str, Any]) -> Reduction[SchedCase]:
    """Reduce a case inside a zygote child (see the module docstring); ``state`` is the saved progress."""
    from seedzer.finding.sched.check import Tester

    folder = Path(folder_text)
    case = SchedCase.from_json(case_json)
    target = case.expected
    assert target is not None
    tester = Tester()
    start = time.monotonic()
    names = ir_names(case.script)

    def holds(candidate: SchedCase) -> bool:
        got = tester.observe(candidate, timeout)
        if target.symptom is Symptom.CRASH:
            return got.symptom is Symptom.CRASH and got.pass_name == target.pass_name
        return same_failure(target, got, names | ir_names(candidate.script))

    def unconfirmed(candidate: SchedCase) -> Observation | None:
        return None if holds(candidate) else tester.observe(candidate, timeout)

    reducer = ScriptReducer(passes_of(SchedPasses(target.symptom.value not in LOOSE)), holds, unconfirmed,
                            case_size, save_state, lambda: tester.tests)
    return reduce_script(reducer, folder, case, seconds, state, start)
