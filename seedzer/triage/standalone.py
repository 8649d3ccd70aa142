"""The code of every standalone ``repro.py``: needs only ``tvm`` and ``numpy``, never Seedzer.

:func:`seedzer.store.repro.render_repro` copies this file's text below the marker line into each
reproducer, after the finding's data (the TVMScript, the flat pass list and the settings). The
reducer runs the very same functions in isolated children (:mod:`seedzer.triage.check`), so what a
reduced reproducer does is exactly what the reduction tested.

A *case* is a JSON-able dict: ``script`` (TVMScript of one PrimFunc), ``steps`` (the expanded flat
pass list: ``{"pass": "tirx.X", "args": {...}, "config": {...}}``, applied one by one, each in
``PassContext(opt_level=3, config=...)`` with ``target`` current), ``target`` and ``build_target``
(target dicts), ``input_seed``, ``rtol``/``atol``, ``nopt_disabled`` (the optional passes the
unoptimized build disables), ``perf`` (``{"factor", "repeats"}``), ``timeout`` (seconds a hang
must exceed) and ``expected`` (``{"symptom", "stage", "pass", "message"}``).
"""

# --- reproducer code (everything below is copied into repro.py) ---
import faulthandler
import sys
from typing import Any

import numpy as np
import tvm

try:
    from tvm_ffi import structural_equal
except ImportError:  # TVM releases before tvm-ffi
    structural_equal = tvm.ir.structural_equal

PASS_MODULES = {"tirx": "tirx", "s_tir": "s_tir"}
TARGET_ARGS = ("target",)
NOPT = "<nopt>"
OPT = "<opt>"


def make_target(spec: dict[str, Any]) -> Any:
    """A TVM target from its dict form, with itself as host (as tvm.compile binds it)."""
    t = tvm.target.Target(spec)
    return t.with_host(t)


def make_pass(step: dict[str, Any]) -> Any:
    """Construct the TVM pass of one flat step (``tirx.X`` -> ``tvm.tirx.transform.X(**args)``)."""
    module, function = step["pass"].split(".", 1)
    namespace = getattr(tvm, PASS_MODULES[module]).transform
    args = dict(step.get("args") or {})
    for key in TARGET_ARGS:
        if isinstance(args.get(key), dict):
            args[key] = make_target(args[key])
    return getattr(namespace, function)(**args)


def make_inputs(func: Any, seed: int) -> list[np.ndarray]:
    """Inputs of every buffer parameter: floats uniform in [-1, 1) from ``seed``, integers zero."""
    rng = np.random.default_rng(seed)
    out = []
    for param in func.params:
        shape = [int(d) for d in param.ty.shape]
        dtype = str(param.ty.dtype)
        if dtype.startswith("float"):
            out.append(rng.uniform(-1.0, 1.0, size=shape).astype(dtype))
        else:
            out.append(np.zeros(shape, dtype=dtype))
    return out


def run_built(executable: Any, inputs: list[np.ndarray]) -> list[np.ndarray]:
    """Run ``main`` on copies of ``inputs``; return every buffer afterwards."""
    args = [tvm.runtime.tensor(a.copy(), tvm.cpu()) for a in inputs]
    executable["main"](*args)
    return [a.numpy() for a in args]


def compare(expected: list[np.ndarray], actual: list[np.ndarray], rtol: float,
            atol: float) -> tuple[str, int] | None:
    """None when the buffers agree (NaN/Inf-aware), else ``(reason, buffer index)``."""
    for i, (e, a) in enumerate(zip(expected, actual, strict=False)):
        if e.shape != a.shape or e.dtype != a.dtype:
            return "shape/dtype", i
        if np.issubdtype(e.dtype, np.floating):
            if not np.array_equal(np.isnan(e), np.isnan(a)):
                return "nan positions", i
            e_inf, a_inf = np.isinf(e), np.isinf(a)
            if not np.array_equal(e_inf, a_inf) or not np.array_equal(e[e_inf], a[a_inf]):
                return "inf positions", i
            finite = ~(np.isnan(e) | e_inf)
            if not np.allclose(a[finite].astype(np.float64), e[finite].astype(np.float64), rtol=rtol, atol=atol):
                return "values", i
        elif not np.array_equal(e, a):
            return "values", i
    return None


def first_line(exc: BaseException) -> str:
    """The line of a TVM error that names it (the last 'Check failed' or error line)."""
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
    for ln in reversed(lines):
        if "Check failed" in ln or ln.split(":")[0].endswith(("Error", "Exception")):
            return ln
    return lines[0] if lines else type(exc).__name__


def outcome(symptom: str, stage: str | None = None, pass_name: str | None = None,
            message: str = "") -> dict[str, Any]:
    """The observed outcome as a plain dict."""
    return {"symptom": symptom, "stage": stage, "pass": pass_name, "message": message}


@tvm.ir.instrument.pass_instrument
class Progress:
    """Reports the pass about to run inside a build (where a crash or an error happens)."""

    def __init__(self, stage: str, on_step: Any) -> None:
        self.stage = stage
        self.on_step = on_step
        self.current: str | None = None

    def run_before_pass(self, mod: Any, info: Any) -> None:
        """Remember and report the pass about to run."""
        self.current = str(info.name)
        self.on_step(self.stage, self.current)


def build(mod: Any, target: dict[str, Any], on_step: Any, stage_pass: str,
          disabled: Any = ()) -> tuple[Any, dict[str, Any] | None]:
    """``tvm.compile`` at opt-level 3; returns ``(executable, None)`` or ``(None, outcome)``."""
    progress = Progress("build", on_step)
    on_step("build", stage_pass)
    try:
        with tvm.transform.PassContext(opt_level=3, disabled_pass=list(disabled), instruments=[progress]):
            return tvm.compile(mod, target=make_target(target)), None
    except Exception as exc:
        where = stage_pass + ":" + progress.current if stage_pass == NOPT and progress.current else progress.current
        return None, outcome("exception", "build", where, f"{type(exc).__name__}: {exc}")


def well_formed_error(mod: Any) -> str | None:
    """None when every PrimFunc of ``mod`` passes TVM's well-formedness verifier, else the error."""
    for func in mod.functions.values():
        if isinstance(func, tvm.tirx.PrimFunc):
            try:
                tvm.s_tir.analysis.verify_well_formed(func, True)
            except Exception as exc:
                return first_line(exc)
    return None


def apply_steps(mod: Any, case: dict[str, Any],
                on_step: Any) -> tuple[Any, str | None, dict[str, Any] | None]:
    """Apply the flat pass list; returns ``(module, last changed pass, None)`` or an outcome."""
    target = make_target(case["target"])
    check = case["expected"]["symptom"] == "illformed"
    last_changed: str | None = None
    for step in case["steps"]:
        name = step["pass"]
        on_step("pass", name)
        try:
            before = mod
            with tvm.transform.PassContext(opt_level=3, config=step.get("config") or {}), target:
                mod = make_pass(step)(mod)
        except Exception as exc:
            return None, None, outcome("exception", "pass", name, f"{type(exc).__name__}: {exc}")
        if not structural_equal(before, mod):
            last_changed = name
        if check:
            error = well_formed_error(mod)
            if error is not None:
                return None, None, outcome("illformed", "pass", name, error)
    return mod, last_changed, None


def kernel_seconds(executable: Any, inputs: list[np.ndarray], repeat: int = 5, min_repeat_ms: int = 5) -> float:
    """Median seconds per call of ``main`` (TVM's time_evaluator: no Python overhead per call)."""
    dev = tvm.cpu()
    args = [tvm.runtime.tensor(a.copy(), dev) for a in inputs]
    timer = executable.mod.time_evaluator("main", dev, number=1, repeat=repeat, min_repeat_ms=min_repeat_ms)
    return float(np.median(timer(*args).results))


def timed_pairs(opt_ex: Any, nopt_ex: Any, inputs: list[np.ndarray], factor: float, repeats: int,
                min_repeat_ms: int = 5) -> list[tuple[float, float]]:
    """Alternating ``(opt, nopt)`` seconds per call, up to ``repeats`` pairs; stops at the first pair
    whose ratio does not exceed ``factor`` (the slowdown is then not confirmed)."""
    pairs = []
    for _ in range(max(1, repeats)):
        nopt_t = kernel_seconds(nopt_ex, inputs, min_repeat_ms=min_repeat_ms)
        pairs.append((kernel_seconds(opt_ex, inputs, min_repeat_ms=min_repeat_ms), nopt_t))
        if time_ratio(*pairs[-1]) <= factor:
            break
    return pairs


def time_ratio(opt_t: float, nopt_t: float) -> float:
    """How many times slower the optimized kernel is."""
    return opt_t / max(nopt_t, 1e-12)


def slowdown(opt_ex: Any, nopt_ex: Any, inputs: list[np.ndarray], factor: float, repeats: int) -> float | None:
    """The smallest opt/nopt time ratio of ``repeats`` alternating timings if every one exceeds
    ``factor`` (a confirmed slowdown, as the campaign's perf oracle measures it), else None."""
    pairs = timed_pairs(opt_ex, nopt_ex, inputs, factor, repeats)
    ratio = min(time_ratio(*p) for p in pairs)
    return ratio if len(pairs) == max(1, repeats) and ratio > factor else None


def observe(case: dict[str, Any], on_step: Any = None) -> dict[str, Any]:
    """Run the case: passes, opt build, run, then the comparison or timing the finding needs.

    Returns the observed outcome (``symptom`` ok / exception / illformed / mismatch / perf /
    invalid). A crash kills the process; a hang never returns (callers bound it with a timeout).
    """
    on_step = on_step or (lambda stage, name: None)
    symptom = case["expected"]["symptom"]
    func = tvm.script.from_source(case["script"]).with_attr("global_symbol", "main")
    inputs = make_inputs(func, case["input_seed"])
    need_nopt = symptom in ("mismatch", "perf") or str(case["expected"].get("pass") or "").startswith(NOPT)
    nopt_ex = None
    if need_nopt:
        nopt_ex, failed = build(tvm.IRModule({"main": func}), case["build_target"], on_step, NOPT,
                                case["nopt_disabled"])
        if failed is not None:
            return failed
    mod, last_changed, failed = apply_steps(tvm.IRModule({"main": func}), case, on_step)
    if failed is not None:
        return failed
    opt_ex, failed = build(mod, case["build_target"], on_step, OPT)
    if failed is not None:
        return failed
    on_step("run", OPT)
    try:
        opt_out = run_built(opt_ex, inputs)
    except Exception as exc:
        return outcome("exception", "run", None, f"{type(exc).__name__}: {exc}")
    if symptom == "mismatch" and nopt_ex is not None:
        on_step("compare", None)
        diff = compare(run_built(nopt_ex, inputs), opt_out, case["rtol"], case["atol"])
        if diff is not None:
            if compare(opt_out, run_built(opt_ex, inputs), 0.0, 0.0) is not None:
                return outcome("invalid", "compare", None, "nondeterministic output")
            return outcome("mismatch", "compare", last_changed,
                           f"opt and nopt outputs differ: {diff[0]} in buffer {diff[1]}")
    if symptom == "perf" and nopt_ex is not None:
        on_step("run", "<timing>")
        ratio = slowdown(opt_ex, nopt_ex, inputs, float(case["perf"].get("factor", 2.0)),
                         int(case["perf"].get("repeats", 3)))
        if ratio is not None:
            return outcome("perf", "run", last_changed, f"optimized build {ratio:.1f}x slower than unoptimized")
    return outcome("ok")


def same_failure(expected: dict[str, Any], observed: dict[str, Any]) -> bool:
    """Whether the observed outcome is the expected bug: the symptom and, for exceptions and
    ill-formed IR, the stage and pass too (a mismatch or slowdown may surface after another pass)."""
    if observed["symptom"] != expected["symptom"]:
        return False
    if expected["symptom"] in ("mismatch", "perf"):
        return True
    return (observed["stage"], observed["pass"]) == (expected["stage"], expected["pass"])


def main(case: dict[str, Any]) -> int:
    """Reproduce: exit 1 while the bug is present (a crash dies by its signal, a hang exits 1 when
    its stage outlives the timeout), 0 once it is gone, 2 on a different failure."""
    expected = case["expected"]
    faulthandler.enable()
    if expected["symptom"] == "hang":
        print(f"expecting a hang: giving up after {case['timeout']:.0f} s (exit status 1)", flush=True)
        faulthandler.dump_traceback_later(case["timeout"], exit=True)
    where: dict[str, Any] = {}
    observed = observe(case, lambda stage, name: where.update(stage=stage, name=name))
    faulthandler.cancel_dump_traceback_later()
    print(f"expected: {expected['symptom']} at {expected['stage']}/{expected['pass']}: {expected['message'][:300]}")
    print(f"observed: {observed['symptom']} at {observed['stage']}/{observed['pass']}: {observed['message'][:300]}")
    if same_failure(expected, observed):
        print("reproduced")
        return 1
    if observed["symptom"] == "ok":
        print("not reproduced: the bug is gone")
        return 0
    print("a different failure")
    return 2


if __name__ == "__main__":
    sys.exit(main(CASE))  # type: ignore[name-defined]  # noqa: F821 - CASE is defined by repro.py
