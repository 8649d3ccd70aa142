"""Making a TIR finding's plain reproducer: which module, which passes, which check (runs TVM: call it in a
process forked from the zygote, as the triage does).

- **A pass failure** (an error, a crash or ill-formed IR in a step): the module the failing pass receives
  (the reduced case lowered by the steps before it, printed as TVMScript: the gate's witness), with that
  pass alone, its target bound only when it needs one. When that module does not fail the same way
  alone (the bug needs what the passes before did to the IR, not only its result), the reduced case's
  own PrimFunc with the steps up to the failing one, ddmin-minimized. Then the printed module is shrunk
  (:func:`seedzer.finding.shrink_ir.shrink`: statements, children, loop extents, constants) while the
  program still fails the same way (same normalized message, same signal).
- **A wrong result of TVM's default pipeline** (reference against minimal lowering): the reduced case's
  PrimFunc built by ``tvm.compile`` and by the same pipeline without the culprit passes, on the inputs
  the kernel makes from the case's seed. The reducer already shrank that PrimFunc under the kernel's
  rules (no dropped writes, no undefined behaviour), so it is not shrunk again.
- **A failure in the build** (code generation, or a step past the case's last): the reduced PrimFunc
  through ``tvm.compile`` alone, else after the fuzzed passes it needs (ddmin), shrunk as above.

Every candidate is the rendered ``minimal.py`` itself, run in a forked child
(:mod:`seedzer.finding.minimal.harness`). Other failures (a slowdown, a hang, a wrong result of fuzzed
passes) have no plain form yet: the answer says so and ``repro.py`` stays the reproducer.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from seedzer.finding.ddmin import ddmin
from seedzer.finding.minimal.harness import fails_as, run_minimal
from seedzer.finding.minimal.primfunc import PrimFuncMinimalJob, shrunk
from seedzer.finding.minimal.program import Made, MinimalProgram
from seedzer.finding.minimal.text import error_mark
from seedzer.finding.tir.minimal_text import Param, build_failure, pass_failure, target_text, wrong_result
from seedzer.kernel.common import REFERENCE_VS_MINIMAL, Observation, Stage, Symptom
from seedzer.kernel.messages import ir_names
from seedzer.kernel.tir.case import FUZZED, Case, Step

RUN_TIMEOUT = 120.0
"""Seconds one candidate may run."""


TirMinimalJob = PrimFuncMinimalJob[Case]
"""What the search needs (:class:`~seedzer.finding.minimal.primfunc.PrimFuncMinimalJob`)."""


def _holds(expected: Observation, names: frozenset[str]) -> Callable[[MinimalProgram, str], bool]:
    """Whether a candidate program (with its module's script) fails the way ``expected`` says."""
    return lambda program, script: fails_as(expected, run_minimal(program.text, RUN_TIMEOUT), names | ir_names(script))


def _witness_script(case: Case, index: int) -> str | None:
    from seedzer.finding.tir.witness import ir_before

    made = ir_before(case, index)
    return made.script if made.problem is None else None


def _pass_failure(job: TirMinimalJob, expected: Observation) -> MinimalProgram | str:
    case, index = job.case, int(expected.step_index or 0)
    names = ir_names(case.script)
    holds = _holds(expected, names)
    mark = error_mark(expected.message, names)
    failing = case.steps[index]
    bind = target_text(case.target)

    def render(script: str, steps: list[Step], bound: str | None) -> MinimalProgram:
        return pass_failure(job.docs, script, steps, bound, expected.symptom.value,
                            error_mark(expected.message, names | ir_names(script)) or mark)

    chosen: tuple[str, list[Step], str | None, str] | None = None
    witness = _witness_script(case, index)
    for bound in (None, bind):
        if witness is not None and chosen is None and holds(render(witness, [failing], bound), witness):
            chosen = (witness, [failing], bound, f"the module {failing.name} receives, printed after the "
                      f"{index} steps before it")
    if chosen is None:
        prefix = list(range(index))
        bound = next((b for b in (None, bind) if holds(render(case.script, [*case.steps[:index], failing], b),
                                                      case.script)), "")
        if bound == "":
            return f"neither the module {failing.name} receives nor the reduced PrimFunc with the steps before it " \
                   f"fails the same way as plain TVM code"
        keep = ddmin(prefix, lambda kept: holds(render(case.script, [*(case.steps[i] for i in kept), failing], bound),
                                                case.script))
        chosen = (case.script, [*(case.steps[i] for i in keep), failing], bound,
                  f"the reduced PrimFunc with {len(keep)} of the {index} steps before {failing.name}")
    script, steps, bound, how = chosen
    return _shrunk(job, script, lambda s: render(s, steps, bound), holds, how, aggressive=True)


def _shrunk(job: TirMinimalJob, script: str, render: Callable[[str], MinimalProgram],
            holds: Callable[[MinimalProgram, str], bool], how: str, aggressive: bool) -> MinimalProgram:
    return shrunk(script, render, holds, job.seconds, how, aggressive)


def _params(script: str) -> list[Param]:
    from seedzer.kernel.tir.lowering import parse_func

    return [Param(tuple(int(d) for d in p.ty.shape), str(p.ty.dtype)) for p in parse_func(script).params]


def _wrong_result(job: TirMinimalJob, expected: Observation) -> MinimalProgram | str:
    case = job.case
    culprits = [c for c in job.culprit if "." in c]
    if not culprits:
        return "the gate named no culprit pass to turn off"
    holds = _holds(expected, ir_names(case.script))
    params = _params(case.script)
    for target in ("llvm", case.target):
        program = wrong_result(job.docs, case.script, params, case.input_seed, culprits, target,
                               (case.rtol, case.atol))
        if holds(program, case.script):
            return dataclasses.replace(program, notes=(f"the reduced PrimFunc, built for {target_text(target)}",))
    return f"tvm.compile with and without {' + '.join(culprits)} agree on the reduced PrimFunc"


def _build_failure(job: TirMinimalJob, expected: Observation) -> MinimalProgram | str:
    """A failure in ``tvm.compile``'s build (code generation, or a step after the last one the case
    names): the reduced PrimFunc through ``tvm.compile`` alone, else with the fuzzed steps the failure
    needs applied first (ddmin over them), each candidate run as the program it is."""
    case = job.case
    names = ir_names(case.script)
    holds = _holds(expected, names)
    mark = error_mark(expected.message, names)
    fuzzed = [s for s in case.steps if s.role == FUZZED]
    for bound in dict.fromkeys((target_text("llvm"), target_text(case.target))):

        def render(script: str, steps: list[Step], bound: str = bound) -> MinimalProgram:
            return build_failure(job.docs, script, steps, bound, expected.symptom.value,
                                 error_mark(expected.message, names | ir_names(script)) or mark)

        if holds(render(case.script, []), case.script):
            return _shrunk(job, case.script, lambda s: render(s, []), holds,
                           f"the reduced PrimFunc through tvm.compile for {bound}", aggressive=True)
        if fuzzed and holds(render(case.script, fuzzed), case.script):
            keep = ddmin(list(range(len(fuzzed))), lambda kept: holds(render(case.script, [fuzzed[i] for i in kept]),
                                                                       case.script))
            steps = [fuzzed[i] for i in keep]
            return _shrunk(job, case.script, lambda s, steps=steps: render(s, steps), holds,  # type: ignore[misc]
                           f"the reduced PrimFunc with {len(steps)} of its {len(fuzzed)} fuzzed passes, then "
                           f"tvm.compile for {bound}", aggressive=True)
    return "tvm.compile of the reduced PrimFunc (alone or after its fuzzed passes) does not fail the same way"


def make_tir_minimal(job: TirMinimalJob) -> Made | str:
    """The plain reproducer of ``job`` (see the module docstring), or why there is none."""
    made = _make(job)
    return made if isinstance(made, str) else Made(made)


def _make(job: TirMinimalJob) -> MinimalProgram | str:
    expected = job.case.expected
    if expected is None:
        return "the case expects no failure"
    if expected.symptom in (Symptom.EXCEPTION, Symptom.ILLFORMED, Symptom.CRASH) and expected.stage is Stage.PASS \
            and expected.step_index is not None and 0 <= expected.step_index < len(job.case.steps):
        return _pass_failure(job, expected)
    if expected.symptom is Symptom.MISMATCH and expected.comparison == REFERENCE_VS_MINIMAL:
        return _wrong_result(job, expected)
    if expected.symptom in (Symptom.EXCEPTION, Symptom.CRASH) and expected.stage in (Stage.BUILD, Stage.PASS):
        return _build_failure(job, expected)
    return f"no plain form for a {expected.symptom.value} at {expected.where()} yet (repro.py stays the reproducer)"
