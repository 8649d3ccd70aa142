"""Making a schedule finding's plain reproducer (runs TVM: call it in a process forked from the zygote, as the
triage does): the reduced case's PrimFunc, its trace as ``tvm.s_tir.Schedule`` calls
(:mod:`seedzer.finding.sched.minimal_text`), then the failing step:

- **a failure in the schedule** (an error, a crash or ill-formed IR at a primitive or a postprocessor): the
  calls before the failing one, then that call (for ill-formed IR: TIR's verifier, or the bounds checker
  after a copying primitive) in the check;
- **a failure of the build** (an error or a crash in ``tvm.compile``): the schedule, then ``tvm.compile``,
  for llvm, else for the case's target;
- **a wrong result**: the function built unscheduled and scheduled, run on the kernel's inputs, compared
  within the kernel's tolerances (widened for a float reduction the schedule may reorder).

Every candidate is the rendered ``minimal.py`` itself, run in a forked child
(:mod:`seedzer.finding.minimal.harness`); once one fails as the finding does, its PrimFunc is shrunk (the
house's :func:`seedzer.finding.shrink_ir.shrink`) while it still does. A hang has no plain form
(``repro.py`` stays the reproducer).
"""

from __future__ import annotations

from collections.abc import Callable

from seedzer.finding.minimal.harness import run_minimal
from seedzer.finding.minimal.primfunc import Param, PrimFuncMinimalJob, shrunk, target_text
from seedzer.finding.minimal.program import Made, MinimalProgram
from seedzer.finding.minimal.text import error_mark
from seedzer.finding.sched.minimal_text import build_failure, step_failure, wrong_result
from seedzer.kernel.common import Observation, Stage, Symptom
from seedzer.kernel.messages import ir_names
from seedzer.kernel.sched.apply import COPYING
from seedzer.kernel.sched.case import SchedCase
from seedzer.kernel.sched.trace import Instruction, parse_trace

RUN_TIMEOUT = 120.0
"""Seconds one candidate may run."""
OOB_PREFIX = "the schedule made an access out of bounds: "
"""How the kernel words the bounds checker's complaint after a copying primitive."""
VERIFY = 'tvm.s_tir.analysis.verify_well_formed(sch.mod["main"])'
OOB_CHECK = "tvm.s_tir.analysis.OOBChecker()(sch.mod)"


SchedMinimalJob = PrimFuncMinimalJob[SchedCase]
"""What the search needs (:class:`~seedzer.finding.minimal.primfunc.PrimFuncMinimalJob`)."""


Render = Callable[[str], MinimalProgram]
"""The program of a PrimFunc's script (the rest fixed)."""


def _holds(expected: Observation, mark: str) -> Callable[[MinimalProgram], bool]:
    """Whether a candidate fails the way ``expected`` says: it says "present", a crash by the same signal, an
    error with ``mark`` in its text."""
    def holds(program: MinimalProgram) -> bool:
        run = run_minimal(program.text, RUN_TIMEOUT)
        if not run.present:
            return False
        if expected.symptom is Symptom.CRASH:
            return expected.signal is None or f"killed by signal {expected.signal}" in run.output
        return expected.symptom is Symptom.MISMATCH or mark in run.output

    return holds


def _tolerances(case: SchedCase) -> tuple[float, float]:
    """The kernel's tolerances of the case's comparison (widened for its float reductions)."""
    from seedzer.kernel.sched.apply import apply_trace
    from seedzer.kernel.sched.observe import SchedBuilder, tolerances
    from seedzer.kernel.tir.lowering import make_inputs, parse_func

    func = parse_func(case.script)
    inputs = make_inputs(func, case.input_seed, case.max_elems)
    applied = apply_trace(func, parse_trace(case.trace), verify_each=False, debug_mask=0)
    reference = SchedBuilder().reference(case, func, inputs)
    tols = tolerances(case, func, applied, inputs, reference.outputs or [])
    return max(r for r, _ in tols.values()), max(a for _, a in tols.values())


def _params(script: str) -> list[Param]:
    from seedzer.kernel.tir.lowering import parse_func

    return [Param(tuple(int(d) for d in p.ty.shape), str(p.ty.dtype)) for p in parse_func(script).params]


def _renders(job: SchedMinimalJob, expected: Observation, instructions: list[Instruction],
             mark: str) -> list[tuple[Render, str]]:
    """The ways to print the case (tried in order), each with how it was made."""
    case, culprit = job.case, " + ".join(job.culprit) or "the schedule"
    symptom = expected.symptom.value
    if expected.stage is Stage.SCHEDULE:
        index = expected.step_index if expected.step_index is not None else len(instructions) - 1
        in_postproc = index >= len(instructions)
        insts = instructions if in_postproc else instructions[:index + 1]
        postprocs = list(case.postprocs[:index - len(instructions) + 1]) if in_postproc else []
        check = ""
        if expected.symptom is Symptom.ILLFORMED:
            check = OOB_CHECK if expected.message.startswith(OOB_PREFIX) or (insts and insts[-1].kind in COPYING
                                                                             and "bounds" in expected.message) \
                else VERIFY
        return [(lambda s: step_failure(job.docs, s, insts, postprocs, symptom, mark, check, culprit),
                 f"the trace up to {expected.pass_name}, as Schedule calls")]
    targets = list(dict.fromkeys(('"llvm"', target_text(case.target))))
    if expected.symptom is Symptom.MISMATCH:
        tols, params = _tolerances(case), _params(case.script)
        return [(lambda s, t=t: wrong_result(job.docs, s, instructions, case.postprocs, params,  # type: ignore[misc]
                                             case.input_seed, t, tols, culprit),
                 f"the scheduled and unscheduled builds for {t}") for t in targets]
    return [(lambda s, t=t: build_failure(job.docs, s, instructions, case.postprocs, t, symptom,  # type: ignore[misc]
                                          mark, culprit),
             f"the schedule, then tvm.compile for {t}") for t in targets]


def make_sched_minimal(job: SchedMinimalJob) -> Made | str:
    """The plain reproducer of ``job`` (see the module docstring), or why there is none."""
    expected = job.case.expected
    if expected is None:
        return "the case expects no failure"
    if expected.symptom not in (Symptom.EXCEPTION, Symptom.ILLFORMED, Symptom.CRASH, Symptom.MISMATCH):
        return f"no plain form for a {expected.symptom.value} at {expected.where()} yet (repro.py stays the reproducer)"
    instructions = parse_trace(job.case.trace)
    names = ir_names(job.case.script)
    mark = error_mark(expected.message.removeprefix(OOB_PREFIX), names)
    holds = _holds(expected, mark)
    for render, how in _renders(job, expected, instructions, mark):
        if holds(render(job.case.script)):
            return Made(shrunk(job.case.script, render, lambda program, _: holds(program), job.seconds, how,
                               aggressive=True))
    return f"no Schedule-call program fails the way the finding does (tried: " \
           f"{'; '.join(how for _, how in _renders(job, expected, instructions, mark))})"

