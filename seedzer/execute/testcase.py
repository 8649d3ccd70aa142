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
from seedzer.execute.joint_build import codegen_llvm, lower_for_llvm
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
from seedzer.triage import standalone
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


NOPT_NAME = "main_nopt"
"""The unoptimized build's function name, so it can share a generated module with ``main``."""


@dataclass
class _Build:
    """A build in progress: lowered to a host module (or failed), then generated and run."""

    scope: str  # "nopt" | "opt"
    nopt: bool
    host: Any = None
    features: set[str] = field(default_factory=set)
    result: BuildResult | None = None
    last_pass: str | None = None  # the pipeline's last pass: where tvm.compile names a codegen error

    @property
    def label(self) -> str:
        """How the build appears in progress slots and error records."""
        return f"<{self.scope}>"

    @property
    def name(self) -> str:
        """The kernel's function name in the generated module."""
        return NOPT_NAME if self.nopt else "main"


def llvm_target() -> tvm.target.Target:
    """The build target of both builds: LLVM at opt-level 0 (codegen dominates an iteration)."""
    return tvm.target.Target({"kind": "llvm", "opt-level": 0})


def _error(stage: Stage, pass_name: str | None, exc: BaseException) -> dict[str, Any]:
    return {"stage": stage.value, "pass": pass_name, "type": type(exc).__name__, "message": str(exc)[:4000]}


def make_inputs(func: Any, seed: int, max_elems: int) -> list[np.ndarray]:
    """Deterministic random contents for every buffer parameter of ``func``.

    Floats are uniform in [-1, 1); integers and booleans are zero so that index-like inputs stay
    in bounds. A non-buffer parameter, a symbolic shape or a buffer over ``max_elems`` elements
    raises ValueError (an invalid seed). The contents come from the reproducers' own
    :func:`seedzer.triage.standalone.make_inputs`, so a finding's ``repro.py`` sees the same inputs.
    """
    for param in func.params:
        ty = getattr(param, "ty", None)
        if not isinstance(ty, tvm.tirx.BufferType):
            raise ValueError(f"parameter {param} is not a buffer")
        if not all(isinstance(dim, tvm.tirx.IntImm) for dim in ty.shape):
            raise ValueError(f"buffer {param} has a symbolic shape")
        if int(np.prod([int(dim.value) for dim in ty.shape], dtype=np.int64)) > max_elems:
            raise ValueError(f"buffer {param} is larger than {max_elems} elements")
    return standalone.make_inputs(func, seed)


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

    def _lower(self, mod: Any, scope: str, disabled: list[str] | None) -> _Build:
        """Run the TIR build pipeline on ``mod`` with coverage; a failure is the build's result."""
        build = _Build(scope, disabled is not None)
        t = time.perf_counter()
        cov = PassCoverage(scope, on_pass=self.progress.in_pass, detailed=self.settings.detailed_build_coverage)
        self.progress.stage(Stage.BUILD, build.label)
        try:
            with tvm.transform.PassContext(opt_level=3, disabled_pass=disabled, instruments=[cov]):
                build.host = lower_for_llvm(mod, self.target)
        except Exception as exc:
            where = f"{build.label}:{cov.current or ''}" if build.nopt else cov.current
            build.result = BuildResult(None, _error(Stage.BUILD, where, exc), cov.features)
        build.features = cov.features
        build.last_pass = cov.current
        self._timed("build", t)
        return build

    def _finish(self, builds: list[_Build], inputs: list[np.ndarray]) -> None:
        """Generate code for the lowered ``builds`` as one module (one JIT), then run each kernel.

        If the joint code generation fails, each build is finished alone, so that the failure is
        attributed to the build that causes it.
        """
        t = time.perf_counter()
        self.progress.stage(Stage.BUILD, builds[-1].label)
        try:
            ex = codegen_llvm([b.host for b in builds], self.target)
            t = self._timed("build", t)
            self.progress.stage(Stage.RUN, builds[-1].label)
            kernels = [ex[b.name] for b in builds]  # LLVM's JIT generates machine code at the first lookup
        except Exception as exc:
            self._timed("build", t)
            if len(builds) > 1:
                for build in builds:
                    self._finish([build], inputs)
                return
            build = builds[0]
            where = build.label if build.nopt else build.last_pass  # as tvm.compile's instrument sees it
            build.result = BuildResult(None, _error(Stage.BUILD, where, exc), build.features)
            return
        t = self._timed("jit", t)
        for build, kernel in zip(builds, kernels, strict=True):
            self.progress.stage(Stage.RUN, build.label)
            try:
                build.result = BuildResult(call_kernel(kernel, inputs), None, build.features,
                                           None if build.nopt else ex)
            except Exception as exc:
                build.result = BuildResult(None, _error(Stage.RUN, build.label if build.nopt else None, exc),
                                           build.features)
        self._timed("run", t)

    def _settle(self, builds: list[_Build | None], inputs: list[np.ndarray]) -> None:
        """Finish every lowered build that has no result yet, jointly."""
        todo = [b for b in builds if b is not None and b.result is None]
        if todo:
            self._finish(todo, inputs)

    def execute(self, script: str, passes: list[PassSpec]) -> dict[str, Any]:
        """Run one test case; return the execution record.

        Keys: ``features``; ``invalid`` (unusable seed or a nopt build failure); ``error`` (a pass,
        build or run raised); ``illformed`` (the first pass after which the IR failed verification);
        ``compare`` (opt and nopt outputs differ); ``perf`` (opt slower than nopt at O3);
        ``noop_passes`` (indices of passes that left the IR unchanged).
        """
        record: dict[str, Any] = {"features": []}
        t = time.perf_counter()
        try:
            func = self.scripts.get(script)
            inputs = make_inputs(func, input_seed(script), self.settings.max_buffer_elems)
        except Exception as exc:
            record["invalid"] = {"stage": Stage.MUTATE.value, "message": f"unusable seed: {exc}"[:500]}
            return record
        finally:
            self._timed("parse", t)

        # The unoptimized build is reused while only passes change; a new script is lowered now
        # and generated together with its optimized build below (one JIT for both).
        nopt = self._nopt.get(script)
        nopt_build = None
        if nopt is None:
            nopt_build = self._lower(module_of(func, NOPT_NAME), "nopt", self.disabled)
        invalid = self._nopt_invalid(script, nopt, nopt_build, record, inputs, settle=False)
        if invalid:
            return invalid

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
        self._timed("passes", t)
        record["features"] = set(cov.features)
        if opt_mod is None:
            invalid = self._nopt_invalid(script, nopt, nopt_build, record, inputs, settle=True)
            return invalid or _with_features(record, record["error"])

        key = (script, tvm_ffi.structural_hash(opt_mod))
        opt = self._opt.get(key)
        opt_build = None
        if opt is None:
            opt_build = self._lower(opt_mod, "opt", None)
        else:
            self.timings["cached_builds"] = self.timings.get("cached_builds", 0.0) + 1
        self._settle([nopt_build, opt_build], inputs)
        invalid = self._nopt_invalid(script, nopt, nopt_build, record, inputs, settle=True)
        if invalid:
            return invalid
        if nopt is None:
            assert nopt_build is not None
            nopt = nopt_build.result  # settled (and cached) above; not re-read from the cache
        if opt_build is not None:
            assert opt_build.result is not None  # settled above
            opt = opt_build.result
            self._opt.put(key, opt)
        assert nopt is not None and nopt.outputs is not None and opt is not None
        record["features"] |= nopt.features | opt.features
        if opt.outputs is None:
            record["error"] = opt.error
            return _with_features(record, opt.error)

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
        return _with_features(record, None)

    def _nopt_invalid(self, script: str, nopt: BuildResult | None, build: _Build | None,
                      record: dict[str, Any], inputs: list[np.ndarray], settle: bool) -> dict[str, Any] | None:
        """The record as an invalid input if the unoptimized build of ``script`` failed, else None.

        A failed unoptimized build means the IR itself is the culprit (or a mutant TVM cannot
        build): judged as an invalid input, its error still adds coverage. With ``settle`` a lowered
        but unfinished build is finished first. A finished result is cached by script.
        """
        if nopt is None and build is not None:
            if settle:
                self._settle([build], inputs)
            if build.result is None:
                return None
            nopt = build.result
            self._nopt.put(script, nopt)
        assert nopt is not None
        if nopt.outputs is not None:
            return None
        error = nopt.error or {}
        record["invalid"] = dict(error, message=error.get("message", "")[:500])
        record["features"] = set(record.get("features") or ()) | nopt.features
        return _with_features(record, nopt.error)

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


def _with_features(record: dict[str, Any], error: dict[str, Any] | None) -> dict[str, Any]:
    """Finalize ``record["features"]`` as a sorted list (plus a feature for ``error``, if any)."""
    features = set(record.get("features") or ())
    if error is not None:
        features.add(_err_feature(error))
    record["features"] = sorted(features)
    return record


def _err_feature(err: dict[str, Any] | None) -> str:
    if not err:
        return "err/?"
    return f"err/{err.get('stage')}/{err.get('pass')}/{normalize_message(err.get('message', ''))[:80]}"
