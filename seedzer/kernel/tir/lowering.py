"""The low-level kernel's steps: a PrimFunc parsed, its flat step list applied (TIR's verifier after
each watched step), lowered, code-generated, called and timed (:mod:`seedzer.kernel.tir.observe`
judges the programs built with them).

Every step runs in ``PassContext(opt_level=3, config=step.config)`` on a module whose functions
carry the bound target, exactly as ``tvm.compile`` runs its pipeline; code generation is the host
half of ``tvm.tirx.build``. Depends on tvm, numpy and :mod:`seedzer.kernel.common` only (copied
verbatim into repro.py).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import tvm
import tvm_ffi
from tvm.tirx.build import codegen_build

from seedzer.kernel.common import (
    MINIMAL,
    OPT,
    OUT_OF_MEMORY,
    REFERENCE,
    Observation,
    Slowdown,
    Stage,
    Symptom,
    error_text,
    tvm_frames,
)
from seedzer.kernel.messages import is_out_of_memory
from seedzer.kernel.tir.case import Step

# --- kernel code (everything below is copied verbatim into repro.py) ---
FUNCTION_NAMES = {OPT: "main", REFERENCE: "main_reference", MINIMAL: "main_minimal"}
"""Each program's function name, so that several can share one generated module."""

OnStep = Callable[[Stage, str, str], None]
"""Progress callback: ``(stage, step or build name, program)``, called before each step."""


def quiet_step(stage: Stage, name: str, program: str) -> None:
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


def apply_steps(mod: Any, steps: Sequence[Step], *, program: str = OPT, on_step: OnStep = quiet_step,
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
            raise StepFailure(Observation(symptom_of(exc), Stage.PASS, step.name, failure_text(exc),
                                          step_index=index, frames=tvm_frames(exc))) from exc
        if watch_from is not None and index >= watch_from and not mod.same_as(before):
            error = well_formed_error(mod, intended)
            if error is not None:
                raise StepFailure(Observation(Symptom.ILLFORMED, Stage.PASS, step.name, error[:4000],
                                              step_index=index))
        if after is not None:
            after(index, before, mod)
    return mod


def lower(func: Any, steps: Sequence[Step], target: Any, *, program: str = OPT, on_step: OnStep = quiet_step,
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


def symptom_of(exc: BaseException) -> Symptom:
    """An exception's symptom: ``invalid`` for a failed allocation (over the worker's memory limit),
    else ``exception``."""
    return Symptom.INVALID if is_out_of_memory(exc) else Symptom.EXCEPTION


def failure_text(exc: BaseException) -> str:
    """An exception's message as an observation holds it: a failed allocation's says so first (the
    class a campaign counts it under and re-runs it at the full limits for)."""
    text = error_text(exc)[:4000]
    return f"{OUT_OF_MEMORY} ({text[:300]}): the input's size, not a TVM bug" if is_out_of_memory(exc) else text
