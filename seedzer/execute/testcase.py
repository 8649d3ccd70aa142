"""Worker-side execution of one test case: passes, opt and nopt builds, runs, comparison.

Returns a plain execution record for the oracles. Only workers import this module (it imports TVM).
"""

from __future__ import annotations

import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import tvm

from seedzer.coverage.pass_instrument import PassCoverage
from seedzer.execute.progress import ProgressSlot
from seedzer.execute.settings import ExecSettings
from seedzer.mutate.passes import PassFailure, apply_passes, optional_pass_names
from seedzer.oracles.compare import compare_arrays
from seedzer.oracles.signature import normalize_message
from seedzer.outcome import Stage
from seedzer.seed import PassSpec, input_seed
from seedzer.tvmio import module_of, parse_primfunc


@dataclass
class NoptResult:
    """The unoptimized build's outputs for one script (reused while only passes change)."""

    outputs: list[np.ndarray] | None
    error: dict[str, Any] | None = None
    features: set[str] = field(default_factory=set)


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


def run_built(executable: Any, inputs: list[np.ndarray]) -> list[np.ndarray]:
    """Run ``main`` of a built module on copies of ``inputs``; return every buffer afterwards."""
    dev = tvm.cpu()
    args = [tvm.runtime.tensor(a.copy(), dev) for a in inputs]
    executable["main"](*args)
    return [t.numpy() for t in args]


class TestCaseRunner:
    """Executes test cases in a worker, caching nopt results by script."""

    __test__ = False  # not a pytest class

    def __init__(self, settings: ExecSettings, progress: ProgressSlot) -> None:
        self.settings = settings
        self.progress = progress
        self.target = llvm_target()
        self.disabled = optional_pass_names()
        self._nopt_cache: OrderedDict[str, NoptResult] = OrderedDict()
        self.timings: dict[str, float] = {}

    def _timed(self, key: str, start: float) -> float:
        now = time.perf_counter()
        self.timings[key] = self.timings.get(key, 0.0) + (now - start)
        return now

    def _nopt_result(self, script: str, func: Any, inputs: list[np.ndarray]) -> NoptResult:
        cached = self._nopt_cache.get(script)
        if cached is not None:
            self._nopt_cache.move_to_end(script)
            return cached
        t = time.perf_counter()
        cov = PassCoverage("nopt", on_pass=self.progress.in_pass)
        self.progress.stage(Stage.BUILD, "<nopt>")
        try:
            with tvm.transform.PassContext(opt_level=3, disabled_pass=self.disabled, instruments=[cov]):
                ex = tvm.compile(module_of(func), target=self.target)
        except Exception as exc:
            result = NoptResult(None, _error(Stage.BUILD, "<nopt>:" + (cov.current or ""), exc), cov.features)
        else:
            t = self._timed("build", t)
            self.progress.stage(Stage.RUN, "<nopt>")
            try:
                result = NoptResult(run_built(ex, inputs), None, cov.features)
            except Exception as exc:
                result = NoptResult(None, _error(Stage.RUN, "<nopt>", exc), cov.features)
            self._timed("run", t)
        self._nopt_cache[script] = result
        while len(self._nopt_cache) > self.settings.nopt_cache_size:
            self._nopt_cache.popitem(last=False)
        return result

    def execute(self, script: str, passes: list[PassSpec]) -> dict[str, Any]:
        """Run one test case; return the execution record (error / compare / features / invalid)."""
        record: dict[str, Any] = {"features": []}
        features: set[str] = set()
        try:
            func = parse_primfunc(script)
            inputs = make_inputs(func, input_seed(script), self.settings.max_buffer_elems)
        except Exception as exc:
            record["invalid"] = {"stage": Stage.MUTATE.value, "message": f"unusable seed: {exc}"[:500]}
            return record

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
        try:
            opt_mod = apply_passes(module_of(func), passes, instruments=[cov])
        except PassFailure as pf:
            record["error"] = _error(Stage.PASS, pf.pass_name, pf.exc)
            if pf.precondition:
                record["error"]["invalid"] = True
        t = self._timed("passes", t)
        if "error" not in record:
            self.progress.stage(Stage.BUILD, "<opt>")
            bcov = PassCoverage("build", on_pass=self.progress.in_pass)
            try:
                with tvm.transform.PassContext(opt_level=3, instruments=[bcov]):
                    ex = tvm.compile(opt_mod, target=self.target)
            except Exception as exc:
                record["error"] = _error(Stage.BUILD, bcov.current, exc)
            features |= bcov.features
            t = self._timed("build", t)
        features |= cov.features
        if "error" in record:
            record["features"] = sorted(features | {_err_feature(record["error"])})
            return record

        self.progress.stage(Stage.RUN, "<opt>")
        try:
            opt_out = run_built(ex, inputs)
        except Exception as exc:
            record["error"] = _error(Stage.RUN, None, exc)
            record["features"] = sorted(features | {_err_feature(record["error"])})
            return record
        t = self._timed("run", t)

        if self.settings.compare:
            self.progress.stage(Stage.COMPARE)
            detail = compare_arrays(nopt.outputs, opt_out, self.settings.rtol, self.settings.atol)
            if detail is not None:
                again = run_built(ex, inputs)
                deterministic = compare_arrays(opt_out, again, 0.0, 0.0) is None
                record["compare"] = {"mismatch": True, "deterministic": deterministic, "detail": detail,
                                     "last_pass": cov.last_changed}
            self._timed("compare", t)
        record["features"] = sorted(features)
        return record


def _err_feature(err: dict[str, Any] | None) -> str:
    if not err:
        return "err/?"
    return f"err/{err.get('stage')}/{err.get('pass')}/{normalize_message(err.get('message', ''))[:80]}"
