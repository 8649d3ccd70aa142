"""Worker-side execution of one test case: passes, opt and nopt builds, runs, comparison.

Returns a plain execution record for the oracles. Only workers import this module (it imports TVM).
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import tvm
import tvm_ffi

from seedzer.coverage.pass_instrument import PassCoverage
from seedzer.execute.lru import LRU, ParsedScripts
from seedzer.execute.perf import PerfProbe
from seedzer.execute.progress import ProgressSlot
from seedzer.execute.settings import ExecSettings
from seedzer.execute.wellformed_watch import WellFormedWatch
from seedzer.mutate.passes import PassFailure, apply_passes, optional_pass_names
from seedzer.oracles.compare import compare_arrays
from seedzer.oracles.signature import normalize_message
from seedzer.outcome import Stage
from seedzer.seed import PassSpec, input_seed, passes_to_json
from seedzer.tvmio import module_of, parse_primfunc


@dataclass
class BuildResult:
    """One build-and-run of a module: its outputs or its error, and the build's coverage features.

    Cached by script for the unoptimized build (reused while only passes change) and by the
    optimized module's structural hash (mutated sequences often lower to the same IR).
    """

    outputs: list[np.ndarray] | None
    error: dict[str, Any] | None = None
    features: set[str] = field(default_factory=set)
    executable: Any = None


def llvm_target() -> tvm.target.Target:
    """The build target of both builds: LLVM at opt-level 0 (codegen dominates an iteration)."""
    return tvm.target.Target({"kind": "llvm", "opt-level": 0})


def _error(stage: Stage, pass_name: str | None, exc: BaseException) -> dict[str, Any]:
    return {"stage": stage.value, "pass": pass_name, "type": type(exc).__name__, "message": str(exc)[:4000]}


def make_inputs(func: Any, seed: int, max_elems: int) -> list[np.ndarray]:
    """Deterministic random contents for every buffer parameter of ``func``.

    Floats are uniform in [-1, 1); integers and booleans are zero so that index-like inputs stay
    in bounds. A non-buffer parameter or a symbolic shape raises ValueError (an invalid seed).
    """
    rng = np.random.default_rng(seed)
    arrays = []
    for param in func.params:
        ty = getattr(param, "ty", None)
        if not isinstance(ty, tvm.tirx.BufferType):
            raise ValueError(f"parameter {param} is not a buffer")
        shape = []
        for dim in ty.shape:
            if not isinstance(dim, tvm.tirx.IntImm):
                raise ValueError(f"buffer {param} has a symbolic shape")
            shape.append(int(dim.value))
        if int(np.prod(shape, dtype=np.int64)) > max_elems:
            raise ValueError(f"buffer {param} is larger than {max_elems} elements")
        dtype = str(ty.dtype)
        if dtype.startswith("float"):
            arrays.append(rng.uniform(-1.0, 1.0, size=shape).astype(dtype))
        else:
            arrays.append(np.zeros(shape, dtype=dtype))
    return arrays


def call_kernel(kernel: Any, inputs: list[np.ndarray]) -> list[np.ndarray]:
    """Call a built kernel on copies of ``inputs``; return every buffer afterwards."""
    dev = tvm.cpu()
    args = [tvm.runtime.tensor(a.copy(), dev) for a in inputs]
    kernel(*args)
    return [t.numpy() for t in args]


def run_built(executable: Any, inputs: list[np.ndarray]) -> list[np.ndarray]:
    """Run ``main`` of a built module on copies of ``inputs``; return every buffer afterwards."""
    return call_kernel(executable["main"], inputs)


class TestCaseRunner:
    """Executes test cases in a worker, caching parsed scripts and build results."""

    __test__ = False  # not a pytest class

    def __init__(self, settings: ExecSettings, progress: ProgressSlot, scripts: ParsedScripts | None = None) -> None:
        self.settings = settings
        self.progress = progress
        self.target = llvm_target()
        self.disabled = optional_pass_names()
        self.scripts = scripts or ParsedScripts(parse_primfunc, settings.parse_cache_size)
        self._nopt: LRU[str, BuildResult] = LRU(settings.nopt_cache_size)
        self._opt: LRU[tuple[str, int], BuildResult] = LRU(settings.opt_cache_size)
        self.perf = (PerfProbe(self.disabled, settings.perf_factor, settings.perf_repeats)
                     if settings.perf_rate > 0 else None)
        self.timings: dict[str, float] = {}

    def _timed(self, key: str, start: float) -> float:
        now = time.perf_counter()
        self.timings[key] = self.timings.get(key, 0.0) + (now - start)
        return now

    def _build_and_run(self, mod: Any, inputs: list[np.ndarray], scope: str,
                       disabled: list[str] | None = None) -> BuildResult:
        """Build ``mod`` (LLVM O0) under a PassContext with coverage, then run it on ``inputs``."""
        label = f"<{scope}>"
        t = time.perf_counter()
        cov = PassCoverage(scope, on_pass=self.progress.in_pass, detailed=self.settings.detailed_build_coverage)
        self.progress.stage(Stage.BUILD, label)
        try:
            with tvm.transform.PassContext(opt_level=3, disabled_pass=disabled, instruments=[cov]):
                ex = tvm.compile(mod, target=self.target)
        except Exception as exc:
            where = f"{label}:{cov.current or ''}" if disabled else cov.current
            self._timed("build", t)
            return BuildResult(None, _error(Stage.BUILD, where, exc), cov.features)
        t = self._timed("build", t)
        self.progress.stage(Stage.RUN, label)
        try:
            kernel = ex["main"]  # LLVM's JIT generates machine code at this first lookup
            t = self._timed("jit", t)
            result = BuildResult(call_kernel(kernel, inputs), None, cov.features, ex)
        except Exception as exc:
            result = BuildResult(None, _error(Stage.RUN, label if disabled else None, exc), cov.features)
        self._timed("run", t)
        return result

    def _nopt_result(self, script: str, func: Any, inputs: list[np.ndarray]) -> BuildResult:
        cached = self._nopt.get(script)
        if cached is None:
            cached = self._build_and_run(module_of(func), inputs, "nopt", self.disabled)
            cached.executable = None  # only the optimized build is re-run (determinism check)
            self._nopt.put(script, cached)
        return cached

    def execute(self, script: str, passes: list[PassSpec]) -> dict[str, Any]:
        """Run one test case; return the execution record.

        Keys: ``features``; ``invalid`` (unusable seed or a nopt build failure); ``error`` (a pass,
        build or run raised); ``illformed`` (the first pass after which the IR failed verification);
        ``compare`` (opt and nopt outputs differ); ``perf`` (opt slower than nopt at O3);
        ``noop_passes`` (indices of passes that left the IR unchanged).
        """
        record: dict[str, Any] = {"features": []}
        features: set[str] = set()
        t = time.perf_counter()
        try:
            func = self.scripts.get(script)
            inputs = make_inputs(func, input_seed(script), self.settings.max_buffer_elems)
        except Exception as exc:
            record["invalid"] = {"stage": Stage.MUTATE.value, "message": f"unusable seed: {exc}"[:500]}
            return record
        finally:
            self._timed("parse", t)

        nopt = self._nopt_result(script, func, inputs)
        features |= nopt.features
        if nopt.outputs is None:
            # The unmutated-pass build of this IR fails: the IR itself is the culprit (or a mutant
            # TVM cannot build); judged as an invalid input, its error still adds coverage.
            record["invalid"] = dict(nopt.error or {}, message=(nopt.error or {}).get("message", "")[:500])
            record["features"] = sorted(features | {_err_feature(nopt.error)})
            return record

        t = time.perf_counter()
        self.progress.stage(Stage.PASS)
        cov = PassCoverage("opt", on_pass=self.progress.in_pass)
        watch = WellFormedWatch() if self.settings.illformed else None
        unchanged: list[int] = []
        opt_mod = None
        try:
            opt_mod = apply_passes(module_of(func), passes, instruments=[cov, *([watch] if watch else [])],
                                   unchanged=unchanged)
        except PassFailure as pf:
            record["error"] = _error(Stage.PASS, pf.pass_name, pf.exc)
            if pf.precondition:
                record["error"]["invalid"] = True
        record["noop_passes"] = unchanged
        if watch is not None and watch.violation is not None:
            record["illformed"] = dict(watch.violation, stage=Stage.PASS.value)
        t = self._timed("passes", t)
        features |= cov.features
        if opt_mod is None:
            record["features"] = sorted(features | {_err_feature(record["error"])})
            return record

        key = (script, tvm_ffi.structural_hash(opt_mod))
        opt = self._opt.get(key)
        if opt is None:
            opt = self._build_and_run(opt_mod, inputs, "opt")
            self._opt.put(key, opt)
        else:
            self.timings["cached_builds"] = self.timings.get("cached_builds", 0.0) + 1
        features |= opt.features
        if opt.outputs is None:
            record["error"] = opt.error
            record["features"] = sorted(features | {_err_feature(opt.error)})
            return record

        t = time.perf_counter()
        if self.settings.compare:
            self.progress.stage(Stage.COMPARE)
            detail = compare_arrays(nopt.outputs, opt.outputs, self.settings.rtol, self.settings.atol)
            if detail is not None:
                again = run_built(opt.executable, inputs)
                deterministic = compare_arrays(opt.outputs, again, 0.0, 0.0) is None
                record["compare"] = {"mismatch": True, "deterministic": deterministic, "detail": detail,
                                     "last_pass": cov.last_changed}
            self._timed("compare", t)
        if self.perf is not None and "compare" not in record and _sampled(script, passes, self.settings.perf_rate):
            self._perf(record, script, func, passes, inputs, cov.last_changed)
        record["features"] = sorted(features)
        return record

    def _perf(self, record: dict[str, Any], script: str, func: Any, passes: list[PassSpec],
              inputs: list[np.ndarray], last_pass: str | None) -> None:
        assert self.perf is not None
        t = time.perf_counter()
        self.progress.stage(Stage.RUN, "<perf>")
        try:
            measured = self.perf.measure(script, func, passes, inputs)
        except Exception as exc:  # an O3-only failure is still worth knowing, as an error
            record["error"] = _error(Stage.BUILD, "<perf>", exc)
        else:
            record["perf_ratio"] = measured["ratio"]
            if measured["slow"]:
                record["perf"] = dict(measured, last_pass=last_pass)
        self._timed("perf", t)


def _sampled(script: str, passes: list[PassSpec], rate: float) -> bool:
    """Deterministic sampling of test cases for the (expensive) performance oracle."""
    digest = hashlib.blake2b(f"{script}\x1f{passes_to_json(passes)}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") / 2**64 < rate


def _err_feature(err: dict[str, Any] | None) -> str:
    if not err:
        return "err/?"
    return f"err/{err.get('stage')}/{err.get('pass')}/{normalize_message(err.get('message', ''))[:80]}"
