"""The low-level kernel: one PrimFunc through a flat step list, built, run, compared and timed.

A *case* holds the TVMScript of one PrimFunc and the flat steps (TVM's default pipeline with the
fuzzer's passes inserted, see :mod:`seedzer.passes.contracts`). :func:`observe` builds three
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
   where the reference is NaN/Inf or the optimized build is nondeterministic);
5. reference against minimal (``mismatch`` of the default pipeline itself);
6. at LLVM opt-level 3, opt timed against reference (``perf``).

Every step runs in ``PassContext(opt_level=3, config=step.config)`` on a module whose functions
carry the bound target, exactly as ``tvm.compile`` runs its pipeline; code generation is the host
half of ``tvm.tirx.build``. :class:`Runner` builds the programs one after the other; the fuzz
workers subclass it to cache and to generate several programs as one LLVM module (one JIT).
Depends on tvm, numpy and :mod:`seedzer.kernel.common` only (copied verbatim into repro.py).
"""

from __future__ import annotations

import dataclasses
import re
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import tvm
import tvm_ffi
from tvm.tirx.build import codegen_build

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
    step_label,
    tvm_frames,
)
from seedzer.kernel.comparison import Difference, compare, uniform_tolerances
from seedzer.kernel.messages import ir_names, is_out_of_memory, moved_failure, same_failure
from seedzer.kernel.tir.case import FUZZED, Case, Step, minimal_steps, reference_steps

# --- kernel code (everything below is copied verbatim into repro.py) ---
FUNCTION_NAMES = {OPT: "main", REFERENCE: "main_reference", MINIMAL: "main_minimal"}
"""Each program's function name, so that several can share one generated module."""

OnStep = Callable[[Stage, str, str], None]
"""Progress callback: ``(stage, step or build name, program)``, called before each step."""


def _quiet(stage: Stage, name: str, program: str) -> None:
    """The default progress callback: report nothing."""


def make_target(spec: dict[str, Any] | str) -> Any:
    """A TVM target from its dict form, with itself as host (as tvm.compile binds a CPU target)."""
    target = tvm.target.Target(spec)
    return target.with_host(target)


def make_pass(step: Step) -> Any:
    """The TVM pass of one step: ``tirx.X`` -> ``tvm.tirx.transform.X(**args)`` (dict targets built)."""
    module, function = step.name.split(".", 1)
    namespace = getattr(tvm, module).transform
    args = {k: make_target(v) if k == "target" and isinstance(v, dict) else v for k, v in step.args.items()}
    return getattr(namespace, function)(**args)


def parse_func(script: str, names: dict[str, Any] | None = None) -> Any:
    """The PrimFunc a TVMScript text defines (alone or as the only function of a module);
    ``names``: the parser's global names instead of TVMScript's own (``T``, ``I``, ...)."""
    obj = tvm.script.from_source(script, extra_vars=names)
    if isinstance(obj, tvm.IRModule):
        funcs = [f for f in obj.functions.values() if isinstance(f, tvm.tirx.PrimFunc)]
        if len(funcs) != 1:
            raise ValueError(f"expected one PrimFunc, found {len(funcs)}")
        obj = funcs[0]
    if not isinstance(obj, tvm.tirx.PrimFunc):
        raise ValueError(f"the script defines a {type(obj).__name__}, not a PrimFunc")
    return obj


def make_inputs(func: Any, seed: int, max_elems: int | None = None) -> list[np.ndarray]:
    """Contents of every buffer parameter: floats uniform in [-1, 1) from ``seed``, integers and
    booleans zero (index-like inputs stay in bounds). A non-buffer parameter, a symbolic shape or a
    buffer over ``max_elems`` elements raises ValueError."""
    rng = np.random.default_rng(seed)
    out = []
    for param in func.params:
        ty = getattr(param, "ty", None)
        if not isinstance(ty, tvm.tirx.BufferType):
            raise ValueError(f"parameter {param} is not a buffer")
        if not all(isinstance(dim, tvm.tirx.IntImm) for dim in ty.shape):
            raise ValueError(f"buffer {param} has a symbolic shape")
        shape = [int(d) for d in ty.shape]
        if max_elems is not None and int(np.prod(shape, dtype=np.int64)) > max_elems:
            raise ValueError(f"buffer {param} is larger than {max_elems} elements")
        dtype = str(ty.dtype)
        if dtype.startswith("float"):
            out.append(rng.uniform(-1.0, 1.0, size=shape).astype(dtype))
        else:
            out.append(np.zeros(shape, dtype=dtype))
    return out


class StepFailure(Exception):
    """A program could not be built or run; ``observation`` says where and why."""

    def __init__(self, observation: Observation) -> None:
        super().__init__(observation.headline())
        self.observation = observation


PRAGMA_NODE = re.compile(r"undefined variable \S+ at \S*\.node\.?\s*$", re.MULTILINE)
"""The verifier's report of a variable used as an AttrStmt's node outside the loop that defines it."""


def _pragma_nodes_cleared(func: Any) -> Any:
    """``func`` with the node of every ``pragma_*`` AttrStmt that is a variable replaced by 0."""
    def clear(attr: Any) -> Any:
        if attr.attr_key.startswith("pragma_") and isinstance(attr.node, tvm.tirx.Var):
            return tvm.tirx.AttrStmt(tvm.tirx.const(0, "int32"), attr.attr_key, attr.value, attr.body)
        return attr
    return tvm_ffi.structural_map(func, (tvm.tirx.AttrStmt, clear))


def well_formed_error(mod: Any, intended_pragmas: bool = False) -> str | None:
    """None when every PrimFunc of ``mod`` passes TIR's well-formedness verifier, else its error.

    ``intended_pragmas``: a ``pragma_*`` AttrStmt whose node is its loop's variable, outside the
    loop, is TVM's intended output, not a violation (LowerOpaqueBlock lowers a loop's pragma
    annotations so, and UnrollLoop reads them so); the verifier then checks the rest of the IR."""
    for func in mod.functions.values():
        if isinstance(func, tvm.tirx.PrimFunc):
            error = _verify(func)
            if error is not None and intended_pragmas and PRAGMA_NODE.search(error):
                error = _verify(_pragma_nodes_cleared(func))
            if error is not None:
                return error
    return None


def _verify(func: Any) -> str | None:
    try:
        tvm.s_tir.analysis.verify_well_formed(func, True)
    except Exception as exc:  # the verifier raises on the first violation
        return str(exc)
    return None


def apply_steps(mod: Any, steps: Sequence[Step], *, program: str = OPT, on_step: OnStep = _quiet,
                watch_from: int | None = None, instruments: Sequence[Any] = (),
                after: Callable[[int, Any, Any], None] | None = None, strict: bool = True) -> Any:
    """Apply ``steps`` one by one, each in ``PassContext(opt_level=3, config=step.config)``.

    From step ``watch_from`` on (None: never) the verifier runs after every step that returned a
    new module; when the IR entering step ``watch_from`` is already ill-formed (TVM's own pipeline
    made it so), no step after it can be blamed and none is verified. Unless ``strict``
    (:meth:`Checks.strict_verifier`), a pragma AttrStmt outside its loop is TVM's intended output
    (:func:`well_formed_error`). Raises
    :class:`StepFailure` (``exception`` or ``illformed`` at stage ``pass``, naming the step and its
    index). ``after(index, before,
    after)`` sees every step's input and output module.
    """
    intended = not strict
    for index, step in enumerate(steps):
        on_step(Stage.PASS, step.name, program)
        before = mod
        if index == watch_from and well_formed_error(mod, intended) is not None:
            watch_from = None
        try:
            with tvm.transform.PassContext(opt_level=3, config=step.config, instruments=list(instruments)):
                mod = make_pass(step)(mod)
        except Exception as exc:  # TVM raises many types
            raise StepFailure(Observation(_symptom_of(exc), Stage.PASS, step.name, error_text(exc)[:4000],
                                          step_index=index, frames=tvm_frames(exc))) from exc
        if watch_from is not None and index >= watch_from and not mod.same_as(before):
            error = well_formed_error(mod, intended)
            if error is not None:
                raise StepFailure(Observation(Symptom.ILLFORMED, Stage.PASS, step.name, error[:4000],
                                              step_index=index))
        if after is not None:
            after(index, before, mod)
    return mod


def lower(func: Any, steps: Sequence[Step], target: Any, *, program: str = OPT, on_step: OnStep = _quiet,
          watch_from: int | None = None, instruments: Sequence[Any] = (),
          after: Callable[[int, Any, Any], None] | None = None, strict: bool = True) -> Any:
    """The host module ``tvm.compile`` would generate code for: bind ``target``, apply ``steps``
    (verified as :func:`apply_steps` says).

    The function is named after ``program`` (:data:`FUNCTION_NAMES`), so that several programs can
    share one generated module. CPU targets only.
    """
    name = FUNCTION_NAMES[program]
    mod = tvm.IRModule({name: func.with_attr("global_symbol", name)})
    mod = tvm.tirx.transform.BindTarget(target)(mod)
    mod = apply_steps(mod, steps, program=program, on_step=on_step, watch_from=watch_from,
                      instruments=instruments, after=after, strict=strict)
    for func_out in mod.functions.values():
        kind = func_out.attrs.get("target").kind.name if func_out.attrs and "target" in func_out.attrs else "llvm"
        if kind not in ("llvm", "c"):
            raise StepFailure(Observation(Symptom.INVALID, Stage.BUILD, "codegen",
                                          f"the lowered module has a {kind} device function"))
    return mod


def codegen(hosts: Sequence[Any], target: Any) -> Any:
    """One executable for every function of the lowered ``hosts`` (distinct names): LLVM code
    generation, as ``tvm.tirx.build`` does it for the host."""
    merged = tvm.IRModule({}, attrs=hosts[0].attrs)
    for host in hosts:
        merged.update(host)
    with tvm.transform.PassContext(opt_level=3):
        return tvm.runtime.Executable(codegen_build(merged, target.host or target))


def call(executable: Any, program: str, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
    """Run a program of ``executable`` on copies of ``inputs``; every buffer afterwards."""
    args = [tvm.runtime.tensor(a.copy(), tvm.cpu()) for a in inputs]
    executable[FUNCTION_NAMES[program]](*args)
    return [a.numpy() for a in args]


def seconds_per_call(executable: Any, program: str, inputs: Sequence[np.ndarray], repeat: int = 5,
                     min_repeat_ms: int = 5) -> float:
    """Median seconds per call (TVM's time_evaluator: no Python overhead per call)."""
    dev = tvm.cpu()
    args = [tvm.runtime.tensor(a.copy(), dev) for a in inputs]
    timer = executable.mod.time_evaluator(FUNCTION_NAMES[program], dev, number=1, repeat=repeat,
                                          min_repeat_ms=min_repeat_ms)
    return float(np.median(timer(*args).results))


PERF_MIN_SECONDS = 1e-5
"""The least a slowdown must add per call (10 us): below it a ratio measures call overhead and timer
noise on a kernel that runs for about a microsecond, not code a maintainer would call slow."""


def slowdown(executable: Any, inputs: Sequence[np.ndarray], factor: float, repeats: int,
             min_repeat_ms: int = 5, max_call_seconds: float = 0.2,
             min_seconds: float = PERF_MIN_SECONDS) -> Slowdown | None:
    """Time opt against reference in alternation; a :class:`Slowdown` when every one of ``repeats``
    ratios exceeds ``factor`` and opt takes at least ``min_seconds`` longer per call (stops at the
    first measurement that does not). Kernels slower than ``max_call_seconds`` per call are not
    timed (None)."""
    once = [seconds_per_call(executable, p, inputs, 1, 0) for p in (OPT, REFERENCE)]
    if max(once) > max_call_seconds:
        return None
    ratios, opt_s, ref_s = [], 0.0, 0.0
    for _ in range(max(1, repeats)):
        ref_s = seconds_per_call(executable, REFERENCE, inputs, min_repeat_ms=min_repeat_ms)
        opt_s = seconds_per_call(executable, OPT, inputs, min_repeat_ms=min_repeat_ms)
        ratios.append(opt_s / max(ref_s, 1e-12))
        if ratios[-1] <= factor or opt_s - ref_s < min_seconds:
            return None
    return Slowdown(min(ratios), tuple(ratios), opt_s, ref_s, factor, max(1, repeats))


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
    verifier issue, looked for only with ``checks.pipeline_illformed``, which verifies from step 0)."""
    if program != OPT or not case.checks.illformed:
        return None
    if case.checks.pipeline_illformed:
        return 0
    return next((i for i, s in enumerate(steps) if s.role == FUZZED), None)


class Runner:
    """Builds and runs the programs of a case, one after the other (what a reproducer does).

    The fuzz workers subclass it to cache programs and to generate several as one LLVM module;
    :func:`observe` judges whatever it returns in the same order.
    """

    def __init__(self, on_step: OnStep = _quiet) -> None:
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
                out[program] = Observation(_symptom_of(exc), Stage.BUILD, "codegen", error_text(exc)[:4000],
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
                results[program] = Built(failure=Observation(_symptom_of(exc), Stage.RUN, "run",
                                                             error_text(exc)[:4000], frames=tvm_frames(exc)))
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


def _mismatch(runner: Runner, built: Built, inputs: list[np.ndarray], diff: Difference,
              comparison: str) -> Observation:
    """A mismatch, or an invalid case when only non-finite reference values differ or the build
    that disagrees is nondeterministic."""
    if diff.nonfinite_reference:
        return _invalid(Stage.COMPARE, f"outputs differ only where the reference is NaN/Inf: {diff.describe()}")
    runner.on_step(Stage.COMPARE, "rerun", built.program)
    again = call(built.executable, built.program, inputs)
    if compare(built.outputs or [], again, {}) is not None:
        return _invalid(Stage.COMPARE, f"the {built.program} build is nondeterministic")
    return Observation(Symptom.MISMATCH, Stage.COMPARE, None, diff.describe(), comparison=comparison,
                       difference=diff)


def observe(case: Case, runner: Runner | None = None) -> Observation:
    """Run ``case`` and judge it in the fixed order of the module docstring.

    A crash kills the process and a hang never returns: callers bound them (a worker's parent, a
    forked child, or :func:`main`'s time limit).
    """
    runner = runner or Runner()
    try:
        func = runner.parse(case.script)
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
    built = runner.build(case, func, programs, inputs, make_target(case.target))
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
        runner.on_step(Stage.COMPARE, "compare", OPT)
        diff = compare(reference.outputs or [], opt.outputs or [], tolerances)
        if diff is not None:
            return _mismatch(runner, opt, inputs, diff, OPT_VS_REFERENCE)
    if checks.pipeline:
        runner.on_step(Stage.COMPARE, "compare", REFERENCE)
        diff = compare(minimal.outputs or [], reference.outputs or [], tolerances)
        if diff is not None:
            return _mismatch(runner, reference, inputs, diff, REFERENCE_VS_MINIMAL)
    if checks.perf and fuzzed:
        slow = runner.time(case, func, case.steps, inputs)
        if slow is not None:
            return Observation(Symptom.PERF, Stage.RUN, None,
                               f"the optimized build is {slow.ratio:.1f}x slower than the reference build "
                               f"(opt {slow.opt_seconds:.3g} s, reference {slow.reference_seconds:.3g} s per call)",
                               slowdown=slow)
    return Observation.ok()


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
    observed = observe(case, Runner(on_step))
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


def _symptom_of(exc: BaseException) -> Symptom:
    """An exception's symptom: ``invalid`` for a failed allocation (over the worker's memory limit),
    else ``exception``."""
    return Symptom.INVALID if is_out_of_memory(exc) else Symptom.EXCEPTION
