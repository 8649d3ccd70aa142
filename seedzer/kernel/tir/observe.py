"""The low-level kernel: one PrimFunc through a flat step list, built, run, compared and timed.

A *case* holds the TVMScript of one PrimFunc and the flat steps (TVM's default pipeline with the
fuzzer's passes inserted, see :mod:`seedzer.passes.tir.contracts`). :func:`observe` builds three
programs from it and judges them in one fixed order:

1. *minimal*: the pipeline without its optional passes; if even that fails the IR is unusable
   (``invalid``), unless the case's checks ask to judge it (``judge_minimal``: the fuzz workers'
   mutants, whose parents lowered): then that failure is the case's (the optimized build's when it
   fails too);
2. *opt*: every step, TIR's well-formedness verifier after each one (``exception`` or
   ``illformed`` at the step, ``exception`` at build or run);
3. *reference*: the pipeline alone, i.e. what ``tvm.compile`` builds (``exception`` when the
   default pipeline itself fails); when its steps are the minimal lowering's (a culprit
   bisection's variants), the minimal build is the reference;
4. opt against reference on the same inputs (``mismatch``; ``invalid`` when the outputs differ only
   where the reference is NaN/Inf or the optimized build is nondeterministic); when opt agrees with the
   minimal lowering and the reference does not, the reference is the wrong build: judged in 5;
5. reference against minimal (``mismatch`` of the default pipeline itself);
6. at LLVM opt-level 3, opt timed against reference (``perf``).

Every step runs in ``PassContext(opt_level=3, config=step.config)`` on a module whose functions
carry the bound target, exactly as ``tvm.compile`` runs its pipeline; code generation is the host
half of ``tvm.tirx.build``. :class:`TirBuilder` builds the programs one after the other; the fuzz
workers subclass it to cache and to generate several programs as one LLVM module (one JIT).
Depends on tvm, numpy and :mod:`seedzer.kernel.common` only (copied verbatim into repro.py).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np

from seedzer.kernel.common import (
    EXIT_DIFFERENT,
    EXIT_GONE,
    EXIT_PRESENT,
    GONE_LINE,
    MINIMAL,
    OPT,
    OPT_VS_REFERENCE,
    PRESENT_LINE,
    REFERENCE,
    REFERENCE_VS_MINIMAL,
    Observation,
    Slowdown,
    Stage,
    Symptom,
    arm_watchdog,
    disarm_watchdog,
    error_text,
    label_parts,
    step_label,
    tvm_frames,
)
from seedzer.kernel.comparison import Difference, compare, uniform_tolerances
from seedzer.kernel.messages import ir_names, moved_failure, same_failure
from seedzer.kernel.tir.case import FUZZED, Case, Step, minimal_steps, reference_steps
from seedzer.kernel.tir.lowering import (
    OnStep,
    StepFailure,
    call,
    codegen,
    failure_text,
    lower,
    make_inputs,
    make_target,
    parse_func,
    quiet_step,
    slowdown,
    symptom_of,
)


# --- kernel code (everything below is copied verbatim into repro.py) ---
@dataclasses.dataclass
class Built:
    """One program of a case: its outputs and executable, or the observation that ended it.

    ``program`` names the function of ``executable`` to call (the program whose build is reused)."""

    outputs: list[np.ndarray] | None = None
    failure: Observation | None = None
    executable: Any = None
    program: str = OPT


def watch_from(case: Case, program: str, steps: Sequence[Step]) -> int | None:
    """The first step of ``program`` after which the verifier runs (None: never). Only the opt
    program is verified, and only from its first fuzzed step on: ill-formed IR that TVM's pipeline
    makes before any fuzzed pass ran is what the default pipeline itself produces from the input (a
    verifier issue, looked for only with ``checks.pipeline_illformed``, which verifies from step 0),
    unless ``checks.verify_from`` asks for an earlier step (a defect's own step, :func:`same_defect`)."""
    if program != OPT or not case.checks.illformed:
        return None
    if case.checks.pipeline_illformed:
        return 0
    fuzzed = next((i for i, s in enumerate(steps) if s.role == FUZZED), None)
    asked = case.checks.verify_from
    return asked if fuzzed is None or (asked is not None and asked < fuzzed) else fuzzed


class TirBuilder:
    """Builds and runs the programs of a case, one after the other (what a reproducer does).

    The fuzz workers subclass it to cache programs and to generate several as one LLVM module;
    :func:`observe` judges whatever it returns in the same order.
    """

    def __init__(self, on_step: OnStep = quiet_step) -> None:
        self.on_step = on_step

    def parse(self, script: str) -> Any:
        """The PrimFunc of ``script`` (workers keep the functions they parsed or made)."""
        return parse_func(script)

    def lower_program(self, case: Case, func: Any, program: str, steps: Sequence[Step], target: Any) -> Any:
        """The lowered host module of one program (raises :class:`StepFailure`)."""
        return lower(func, steps, target, program=program, on_step=self.on_step,
                     watch_from=watch_from(case, program, steps), strict=case.checks.strict_verifier())

    def generate(self, hosts: dict[str, Any], target: Any) -> dict[str, Any]:
        """One executable per program; a program whose code generation fails maps to its failure."""
        out: dict[str, Any] = {}
        for program, host in hosts.items():
            self.on_step(Stage.BUILD, "codegen", program)
            try:
                out[program] = codegen([host], target)
            except Exception as exc:  # LLVM and TVM codegen raise many types
                out[program] = Observation(symptom_of(exc), Stage.BUILD, "codegen", failure_text(exc),
                                           frames=tvm_frames(exc))
        return out

    def build(self, case: Case, func: Any, programs: dict[str, Sequence[Step]], inputs: list[np.ndarray],
              target: Any) -> dict[str, Built]:
        """Lower, generate and run every program of ``programs`` (name -> steps)."""
        results: dict[str, Built] = {}
        hosts: dict[str, Any] = {}
        for program, steps in programs.items():
            try:
                hosts[program] = self.lower_program(case, func, program, steps, target)
            except StepFailure as failure:
                results[program] = Built(failure=failure.observation)
        for program, executable in self.generate(hosts, target).items():
            if isinstance(executable, Observation):
                results[program] = Built(failure=executable)
                continue
            self.on_step(Stage.RUN, "run", program)
            try:
                results[program] = Built(call(executable, program, inputs), None, executable, program)
            except Exception as exc:  # a kernel that raises at run time (e.g. an assertion)
                results[program] = Built(failure=Observation(symptom_of(exc), Stage.RUN, "run", failure_text(exc),
                                                             frames=tvm_frames(exc)))
        return results

    def time(self, case: Case, func: Any, steps: Sequence[Step], inputs: list[np.ndarray]) -> Slowdown | None:
        """The O3 slowdown of opt against reference (both generated as one module), or None."""
        target = make_target(case.perf_target)
        hosts = {OPT: lower(func, steps, target, program=OPT, on_step=self.on_step),
                 REFERENCE: lower(func, reference_steps(steps), target, program=REFERENCE, on_step=self.on_step)}
        self.on_step(Stage.RUN, "timing", OPT)
        return slowdown(codegen(list(hosts.values()), target), inputs, case.perf_factor, case.perf_repeats)


def _invalid(stage: Stage, message: str) -> Observation:
    return Observation(Symptom.INVALID, stage, None, message[:4000])


def _mismatch(builder: TirBuilder, built: Built, inputs: list[np.ndarray], diff: Difference,
              comparison: str) -> Observation:
    """A mismatch, or an invalid case when only non-finite reference values differ or the build
    that disagrees is nondeterministic."""
    if diff.nonfinite_reference:
        return _invalid(Stage.COMPARE, f"outputs differ only where the reference is NaN/Inf: {diff.describe()}")
    builder.on_step(Stage.COMPARE, "rerun", built.program)
    again = call(built.executable, built.program, inputs)
    if compare(built.outputs or [], again, {}) is not None:
        return _invalid(Stage.COMPARE, f"the {built.program} build is nondeterministic")
    return Observation(Symptom.MISMATCH, Stage.COMPARE, None, diff.describe(), comparison=comparison,
                       difference=diff)


def observe(case: Case, builder: TirBuilder | None = None) -> Observation:
    """Run ``case`` and judge it in the fixed order of the module docstring.

    A crash kills the process and a hang never returns: callers bound them (a worker's parent, a
    forked child, or :func:`main`'s time limit).
    """
    builder = builder or TirBuilder()
    try:
        func = builder.parse(case.script)
        inputs = make_inputs(func, case.input_seed, case.max_elems)
    except Exception as exc:  # an unusable script or parameter list
        return _invalid(Stage.MUTATE, f"unusable test case: {error_text(exc)}")
    checks = case.checks
    ref_steps = reference_steps(case.steps)
    fuzzed = len(ref_steps) != len(case.steps)
    programs: dict[str, Sequence[Step]] = {MINIMAL: minimal_steps(case.steps), OPT: list(case.steps)}
    # a reference with the minimal lowering's very steps (a culprit bisection's variants) is that build
    same = ref_steps == programs[MINIMAL]
    if fuzzed and (checks.compare or checks.perf or checks.pipeline) and not same:
        programs[REFERENCE] = ref_steps
    built = builder.build(case, func, programs, inputs, make_target(case.target))
    minimal, opt = built[MINIMAL], built[OPT]
    if minimal.failure is not None and checks.judge_minimal and minimal.failure.stage is not Stage.RUN:
        return opt.failure or minimal.failure  # TVM's lowering or codegen failing (the optimized build's first)
    if minimal.failure is not None:
        return _invalid(minimal.failure.stage or Stage.BUILD,
                        f"the minimal lowering fails, the IR is unusable: {minimal.failure.headline()}")
    if opt.failure is not None:
        return opt.failure
    reference = built.get(REFERENCE, minimal if fuzzed and same else opt)
    if reference.failure is not None:
        return reference.failure
    tolerances = uniform_tolerances(case.rtol, case.atol)
    if checks.compare and fuzzed:
        builder.on_step(Stage.COMPARE, "compare", OPT)
        diff = compare(reference.outputs or [], opt.outputs or [], tolerances)
        if diff is not None and not (checks.pipeline and _stock_is_wrong(minimal, opt, reference, tolerances)):
            return _mismatch(builder, opt, inputs, diff, OPT_VS_REFERENCE)
    if checks.pipeline:
        builder.on_step(Stage.COMPARE, "compare", REFERENCE)
        diff = compare(minimal.outputs or [], reference.outputs or [], tolerances)
        if diff is not None:
            return _mismatch(builder, reference, inputs, diff, REFERENCE_VS_MINIMAL)
    if checks.perf and fuzzed:
        slow = builder.time(case, func, case.steps, inputs)
        if slow is not None:
            return Observation(Symptom.PERF, Stage.RUN, None,
                               f"the optimized build is {slow.ratio:.1f}x slower than the reference build "
                               f"(opt {slow.opt_seconds:.3g} s, reference {slow.reference_seconds:.3g} s per call)",
                               slowdown=slow)
    return Observation.ok()


def _stock_is_wrong(minimal: Built, opt: Built, reference: Built, tolerances: dict[str, tuple[float, float]]) -> bool:
    """Whether the optimized build agrees with the minimal lowering while the reference (TVM's pipeline alone)
    does not: the stock pipeline is then the wrong build (a fuzzed pass that turns an optimization off computes
    the right values), judged as the reference against the minimal lowering, not as the fuzzed passes' fault."""
    return reference is not minimal and compare(minimal.outputs or [], opt.outputs or [], tolerances) is None \
        and compare(minimal.outputs or [], reference.outputs or [], tolerances) is not None


def later_symptom(case: Case, expected: Observation, observed: Observation) -> bool:
    """Whether ``observed`` surfaced later in the same lowering than the ill-formed IR ``expected``
    describes (at step S of ``case``): an error, ill-formed IR or a crash at a step of the optimized
    program after S, code generation or the run failing, or the wrong result of a build that ran S (the
    optimized one against the reference; the reference against the minimal lowering when S is a step
    of TVM's pipeline, which the reference runs too)."""
    if expected.symptom is not Symptom.ILLFORMED or expected.step_index is None:
        return False
    if observed.symptom in (Symptom.EXCEPTION, Symptom.ILLFORMED, Symptom.CRASH) and observed.stage is Stage.PASS:
        return observed.step_index is not None and observed.step_index > expected.step_index \
            and label_parts(observed.pass_name or "")[0] == OPT
    if observed.symptom is Symptom.MISMATCH:
        in_pipeline = expected.step_index < len(case.steps) and case.steps[expected.step_index].role != FUZZED
        return observed.comparison == OPT_VS_REFERENCE or (observed.comparison == REFERENCE_VS_MINIMAL and in_pipeline)
    return observed.symptom in (Symptom.EXCEPTION, Symptom.CRASH) and observed.stage in (Stage.BUILD, Stage.RUN)


def verifying(case: Case, expected: Observation) -> Case:
    """``case`` with TIR's verifier run after the step ``expected`` names (its first occurrence) and every
    step after it, in the optimized program."""
    at = next((i for i, s in enumerate(case.steps) if s.name == expected.pass_name), expected.step_index)
    return dataclasses.replace(case, checks=dataclasses.replace(case.checks, verify_from=at))


def stock_judged_wrong(expected: Observation, observed: Observation) -> bool:
    """Whether ``observed`` is the wrong result ``expected`` describes judged the other way round: the optimized
    build against the reference then, the reference (the stock pipeline) against the minimal lowering now, on the
    same output (an older finding re-run by a kernel that asks the minimal lowering which build is wrong)."""
    if not expected.symptom is observed.symptom is Symptom.MISMATCH:
        return False
    if (expected.comparison, observed.comparison) != (OPT_VS_REFERENCE, REFERENCE_VS_MINIMAL):
        return False
    was, now = expected.difference, observed.difference
    return was is None or now is None or was.output == now.output


def same_defect(case: Case, expected: Observation, observed: Observation,
                observe_case: Callable[[Case], Observation], names: Iterable[str] = ()) -> bool:
    """Whether ``observed`` (what ``case`` showed) shows the defect ``expected`` describes: the same
    failure (:func:`~seedzer.kernel.messages.same_failure`), the same error or ill-formedness at another
    step (:func:`~seedzer.kernel.messages.moved_failure`), the same wrong result judged the other way round
    (:func:`stock_judged_wrong`), or a *later symptom of the same defect*:
    ``expected`` is ill-formed IR out of step S, ``observed`` surfaced after S in the same lowering
    (:func:`later_symptom`: MakePackedAPI refusing a variable VectorizeLoop left undefined, the wrong
    values its build computes), and ``case`` verified after S (:func:`verifying`, run by
    ``observe_case``) shows S's output ill-formed the same way. What ``repro.py``, the gate's re-run
    alone and the reducer count as the bug present (messages normalized with ``names`` and the IR's own)."""
    names = set(names) | ir_names(case.script)
    if same_failure(expected, observed, names) or moved_failure(expected, observed, names):
        return True
    if stock_judged_wrong(expected, observed):
        return True
    if not later_symptom(case, expected, observed):
        return False
    return same_failure(expected, observe_case(verifying(case, expected)), names)


def main(case_json: dict[str, Any]) -> int:
    """Reproduce a case: exit 1 while the expected failure happens (a crash dies by its signal, a
    hang exits 1 once it outlives ``timeout``; the same error surfacing at another step is present
    too), 0 once every check passes, 2 on a different failure."""
    case = Case.from_json(case_json)
    expected = case.expected or Observation.ok()
    arm_watchdog(expected.symptom, case.timeout)
    loud = expected.symptom in (Symptom.CRASH, Symptom.HANG)

    def on_step(stage: Stage, name: str, program: str) -> None:
        if loud:  # the last line printed before a crash or a hang names the step it happened in
            print(f"  {stage.value}: {step_label(name, program)}", flush=True)

    start = time.monotonic()
    observed = observe(case, TirBuilder(on_step))
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
    if same_defect(case, expected, observed, lambda verified: observe(verified, TirBuilder(on_step))):
        print(f"a later symptom of the same defect: verified right after {expected.pass_name}, its output is "
              "ill-formed the same way")
        print(PRESENT_LINE)
        return EXIT_PRESENT
    if observed.symptom is Symptom.OK:
        print(f"{GONE_LINE} the bug is gone")
        return EXIT_GONE
    print("a different failure")
    return EXIT_DIFFERENT
