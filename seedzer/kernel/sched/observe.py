"""The schedule-level kernel: a PrimFunc scheduled by a trace (and MetaSchedule's postprocessors),
built, run and compared with the same function unscheduled.

:func:`observe` judges a :class:`~seedzer.kernel.sched.case.SchedCase` in one fixed order:

1. the script and its inputs (unusable: ``invalid``), the trace's form (malformed: ``invalid``);
2. the trace, one instruction at a time, then the postprocessors
   (:mod:`seedzer.kernel.sched.apply`: ``invalid`` when a primitive refuses its arguments,
   ``exception`` or ``illformed`` at stage ``schedule``, the step named by the primitive's
   instruction kind or the postprocessor);
3. the unscheduled function built and run (failing: the seed is unusable, ``invalid``);
4. a schedule that changed the function's parameters (``transform_layout`` of one) or holds an
   unsafe primitive (:func:`~seedzer.kernel.sched.trace.is_unsafe`: by contract its build may
   compute anything, or write out of bounds) is ``invalid``, not built;
5. the scheduled function built and run the same way (``exception`` at ``build``, a pass of the
   case's steps, or ``run``);
6. the two outputs on the same inputs (``mismatch``): integers exactly, floats within ``rtol`` and
   ``atol``, widened by the reassociation bound of the function's float reductions when the schedule
   may reorder them (:mod:`seedzer.kernel.sched.reduction`); a difference only where the unscheduled
   result is NaN/Inf, or after a primitive documented to change the result, is ``invalid``.

Both builds are ``tvm.compile`` for the case's target (LLVM at opt-level 0, as the other levels'
result oracles), or, when the case has steps, the flat step list of
:mod:`seedzer.kernel.tir.lowering` (the scheduled function gets every step, the unscheduled one the
pipeline's). A :class:`SchedMemo` keeps the unscheduled build's outputs across cases of one script
(a worker's; a reproducer runs without one). Depends on tvm, numpy and the kernel modules before it
only (copied verbatim into repro.py).
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

import numpy as np
import tvm

from seedzer.kernel.common import (
    EXIT_DIFFERENT,
    EXIT_GONE,
    EXIT_PRESENT,
    GONE_LINE,
    OPT,
    PRESENT_LINE,
    REFERENCE,
    Observation,
    Stage,
    Symptom,
    arm_watchdog,
    disarm_watchdog,
    error_text,
    step_label,
    tvm_frames,
)
from seedzer.kernel.comparison import Difference, compare, uniform_tolerances
from seedzer.kernel.messages import ir_names, moved_failure, same_failure
from seedzer.kernel.sched.apply import Applied, apply_postprocs, apply_trace
from seedzer.kernel.sched.case import SchedCase
from seedzer.kernel.sched.reduction import float_reductions, reassociation_bound
from seedzer.kernel.sched.trace import REASSOCIATING, TraceError, trace_problem
from seedzer.kernel.tir.case import FUZZED, Step, reference_steps
from seedzer.kernel.tir.lowering import (
    FUNCTION_NAMES,
    OnStep,
    StepFailure,
    call,
    codegen,
    lower,
    make_inputs,
    make_target,
    parse_func,
    quiet_step,
    symptom_of,
)

# --- kernel code (everything below is copied verbatim into repro.py) ---
SCHED_VS_UNSCHEDULED = "scheduled-vs-unscheduled"
"""The comparison of a sched case: the scheduled function against the same function unscheduled."""
MEMO_SIZE = 256
"""How many scripts a :class:`SchedMemo` keeps (parsed, and their unscheduled builds' outputs): more
than a pool's PrimFuncs (a basic pool of 5 models lowers to about 100; a memory of 64 thrashed,
building a third of the references again)."""


@dataclasses.dataclass
class Built:
    """One program of a case: its outputs and executable, or the observation that ended it."""

    outputs: list[np.ndarray] | None = None
    failure: Observation | None = None
    executable: Any = None
    program: str = OPT


class SchedMemo:
    """A worker's memory across sched cases: each script's PrimFunc (parsing TVMScript costs more
    than scheduling it), and the unscheduled build of each script, input seed, target and step list
    (the oldest of each forgotten beyond ``size``)."""

    def __init__(self, size: int = MEMO_SIZE) -> None:
        self.size = size
        self.references: OrderedDict[str, Built] = OrderedDict()
        self.parsed: OrderedDict[str, Any] = OrderedDict()

    def get(self, key: str, table: OrderedDict[str, Any] | None = None) -> Any:
        """The remembered value of ``key`` in ``table`` (the references by default; None if forgotten)."""
        table = self.references if table is None else table
        value = table.get(key)
        if value is not None:
            table.move_to_end(key)
        return value

    def put(self, key: str, value: Any, table: OrderedDict[str, Any] | None = None) -> None:
        """Remember ``value`` under ``key`` in ``table`` (the references by default)."""
        table = self.references if table is None else table
        table[key] = value
        while len(table) > self.size:
            table.popitem(last=False)


def _key(case: SchedCase) -> str:
    return json.dumps([case.script, case.input_seed, case.target, [s.to_json() for s in reference_steps(case.steps)]],
                      sort_keys=True)


class SchedBuilder:
    """Builds and runs a case's two programs (what a reproducer does; a worker gives it a memo)."""

    def __init__(self, on_step: OnStep = quiet_step, memo: SchedMemo | None = None) -> None:
        self.on_step = on_step
        self.memo = memo

    def parse(self, script: str) -> Any:
        """The PrimFunc of ``script`` (remembered by the memo)."""
        if self.memo is None:
            return parse_func(script)
        func = self.memo.get(script, self.memo.parsed)
        if func is None:
            func = parse_func(script)
            self.memo.put(script, func, self.memo.parsed)
        return func

    def build(self, case: SchedCase, func: Any, program: str, steps: Sequence[Step],
              inputs: list[np.ndarray]) -> Built:
        """Build ``func`` as ``program`` (``tvm.compile``, or ``steps`` when there are any) and run it."""
        target = make_target(case.target)
        name = FUNCTION_NAMES[program]
        try:
            if steps:
                watch = next((i for i, s in enumerate(steps) if s.role == FUZZED), None) \
                    if program == OPT and case.checks.illformed else None
                host = lower(func, steps, target, program=program, on_step=self.on_step, watch_from=watch)
                self.on_step(Stage.BUILD, "codegen", program)
                executable = codegen([host], target)
            else:
                self.on_step(Stage.BUILD, "tvm.compile", program)
                executable = tvm.compile(tvm.IRModule({name: func.with_attr("global_symbol", name)}), target=target)
        except StepFailure as failure:
            return Built(failure=failure.observation)
        except Exception as exc:  # TVM's pipeline and LLVM raise many types
            return Built(failure=Observation(symptom_of(exc), Stage.BUILD, "tvm.compile", error_text(exc)[:4000],
                                             frames=tvm_frames(exc)))
        self.on_step(Stage.RUN, "run", program)
        try:
            return Built(call(executable, program, inputs), None, executable, program)
        except Exception as exc:  # a kernel that raises at run time (e.g. an assertion)
            return Built(failure=Observation(symptom_of(exc), Stage.RUN, "run", error_text(exc)[:4000],
                                             frames=tvm_frames(exc)))

    def reference(self, case: SchedCase, func: Any, inputs: list[np.ndarray]) -> Built:
        """The unscheduled function built with the pipeline's steps and run (remembered by the memo)."""
        key = _key(case) if self.memo is not None else ""
        built = self.memo.get(key) if self.memo is not None else None
        if built is None:
            built = self.build(case, func, REFERENCE, reference_steps(case.steps), inputs)
            built.executable = None  # the outputs are all a later case needs
            if self.memo is not None:
                self.memo.put(key, built)
        return built


def interface_change(func: Any, scheduled: Any) -> str | None:
    """How the scheduled function's parameters differ from the function's (None: they do not):
    ``transform_layout`` of a parameter rewrites its shape by design, so the same inputs no longer fit."""
    for before, after in zip(func.params, scheduled.params, strict=False):
        old, new = before.ty, after.ty
        if (str(old.dtype), [str(d) for d in old.shape], [str(d) for d in old.strides]) != \
                (str(new.dtype), [str(d) for d in new.shape], [str(d) for d in new.strides]):
            return (f"{before.name}: {[str(d) for d in old.shape]} {old.dtype} strides {[str(d) for d in old.strides]} "
                    f"-> {[str(d) for d in new.shape]} {new.dtype} strides {[str(d) for d in new.strides]}")
    return None


def _invalid(stage: Stage, message: str, step: str | None = None) -> Observation:
    return Observation(Symptom.INVALID, stage, step, message[:4000])


def tolerances(case: SchedCase, func: Any, applied: Applied, inputs: Sequence[np.ndarray],
               reference: Sequence[np.ndarray]) -> dict[str, tuple[float, float]]:
    """The float tolerances of the comparison: the case's, widened by the reassociation bound of
    ``func``'s float reductions when the schedule (or a postprocessor) may reorder them."""
    kinds = {str(inst.kind.name) for inst in applied.schedule.trace.insts}
    reorders = bool(case.postprocs) or bool(kinds & REASSOCIATING)
    reductions = [r for r in float_reductions(func) if r.combiner != "exact"] if reorders else []
    if not reductions:
        return uniform_tolerances(case.rtol, case.atol)
    floats = [np.abs(a[np.isfinite(a)]) for a in (*inputs, *reference) if a.dtype.kind == "f" and a.size]
    magnitude = max([1.0, *(float(a.max()) for a in floats if a.size)])
    rtol, atol = reassociation_bound(reductions, magnitude)
    return uniform_tolerances(case.rtol + rtol, case.atol + atol)


def _mismatch(builder: SchedBuilder, built: Built, inputs: list[np.ndarray], diff: Difference,
              applied: Applied) -> Observation:
    if diff.nonfinite_reference:
        return _invalid(Stage.COMPARE,
                        f"outputs differ only where the unscheduled result is NaN/Inf: {diff.describe()}")
    if applied.semantics_changed:
        return _invalid(Stage.COMPARE, f"outputs differ by design ({applied.semantics_changed}): {diff.describe()}")
    builder.on_step(Stage.COMPARE, "rerun", built.program)
    again = call(built.executable, built.program, inputs)
    steady = compare(built.outputs or [], again, {}) is None
    note = "" if steady else " (the scheduled build is nondeterministic: a second run differs)"
    return Observation(Symptom.MISMATCH, Stage.COMPARE, None, diff.describe() + note,
                       comparison=SCHED_VS_UNSCHEDULED, difference=diff)


def observe(case: SchedCase, builder: SchedBuilder | None = None) -> Observation:
    """Run ``case`` and judge it in the fixed order of the module docstring.

    A crash kills the process and a hang never returns: callers bound them (a worker's parent, a
    forked child, or :func:`main`'s time limit).
    """
    builder = builder or SchedBuilder()
    try:
        func = builder.parse(case.script)
        inputs = make_inputs(func, case.input_seed, case.max_elems)
    except Exception as exc:  # an unusable script or parameter list
        return _invalid(Stage.MUTATE, f"unusable test case: {error_text(exc)}")
    try:
        instructions = case.instructions()
        problem = trace_problem(instructions)
    except TraceError as exc:
        problem = str(exc)
    if problem is not None:
        return _invalid(Stage.SCHEDULE, f"malformed trace: {problem}")
    try:
        applied = apply_trace(func, instructions, verify_each=case.checks.illformed,
                              debug_mask=case.checks.debug_mask, on_step=builder.on_step)
        apply_postprocs(applied, case.postprocs, len(instructions), verify_each=case.checks.illformed,
                        on_step=builder.on_step)
    except StepFailure as failure:
        return failure.observation
    reference = builder.reference(case, func, inputs)
    if reference.failure is not None:
        return _invalid(reference.failure.stage or Stage.BUILD,
                        f"the unscheduled function fails, the seed is unusable: {reference.failure.headline()}")
    scheduled = applied.schedule.mod["main"]
    changed = applied.interface_changed or interface_change(func, scheduled)
    if changed is not None:
        return _invalid(Stage.SCHEDULE, f"the schedule changed the function's parameters: {changed}", "TransformLayout")
    if applied.unsafe_at is not None:  # its build may write out of bounds by contract: never run
        kind = instructions[applied.unsafe_at].kind
        return _invalid(Stage.SCHEDULE, f"not built: instruction {applied.unsafe_at} ({kind}) is unsafe by contract",
                        kind)
    opt = builder.build(case, scheduled, OPT, case.steps, inputs)
    if opt.failure is not None:
        return opt.failure
    if not case.checks.compare:
        return Observation.ok()
    builder.on_step(Stage.COMPARE, "compare", OPT)
    tols = tolerances(case, func, applied, inputs, reference.outputs or [])
    diff = compare(reference.outputs or [], opt.outputs or [], tols)
    if diff is not None:
        return _mismatch(builder, opt, inputs, diff, applied)
    return Observation.ok()


def main(case_json: dict[str, Any]) -> int:
    """Reproduce a case: exit 1 while the expected failure happens (a crash dies by its signal, a
    hang exits 1 once it outlives ``timeout``; the same error surfacing at another step is present
    too), 0 once every check passes, 2 on a different failure."""
    case = SchedCase.from_json(case_json)
    expected = case.expected or Observation.ok()
    arm_watchdog(expected.symptom, case.timeout)
    loud = expected.symptom in (Symptom.CRASH, Symptom.HANG)

    def on_step(stage: Stage, name: str, program: str) -> None:
        if loud:  # the last line printed before a crash or a hang names the step it happened in
            print(f"  {stage.value}: {step_label(name, program)}", flush=True)

    start = time.monotonic()
    observed = observe(case, SchedBuilder(on_step))
    disarm_watchdog()
    print(f"expected: {expected.headline()}")
    print(f"observed: {observed.headline()} ({time.monotonic() - start:.1f} s)")
    if same_failure(expected, observed, ir_names(case.script)):
        print(PRESENT_LINE)
        return EXIT_PRESENT
    if moved_failure(expected, observed, ir_names(case.script)):
        print(f"the same failure now shows at {observed.pass_name} (expected at {expected.pass_name})")
        print(PRESENT_LINE)
        return EXIT_PRESENT
    if observed.symptom is Symptom.OK:
        print(f"{GONE_LINE} the bug is gone")
        return EXIT_GONE
    print("a different failure")
    return EXIT_DIFFERENT
