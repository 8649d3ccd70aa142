"""The performance oracle's worker half: is the optimized build slower than the unoptimized one?

Both builds are made with LLVM at opt-level 3 (the result oracle's opt-level 0 builds say nothing
about speed), timed with TVM's own ``time_evaluator`` in alternation so that machine noise hits both
alike, and a slowdown beyond ``factor`` is believed only when every one of ``repeats`` alternating
measurements shows it. The unoptimized O3 build is cached per script, like the result oracle's.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import tvm

from seedzer.execute.lru import LRU
from seedzer.mutate.passes import apply_passes
from seedzer.seed import PassSpec
from seedzer.triage.standalone import kernel_seconds, time_ratio, timed_pairs  # what repro.py runs
from seedzer.tvmio import module_of


def o3_target() -> Any:
    """LLVM at opt-level 3 with itself as host: the target of both performance builds."""
    t = tvm.target.Target({"kind": "llvm", "opt-level": 3})
    return t.with_host(t)


class PerfProbe:
    """Builds and times the O3 opt/nopt pair of a test case; caches nopt builds by script."""

    def __init__(self, disabled: list[str], factor: float, repeats: int, min_repeat_ms: int = 5,
                 cache_size: int = 64, max_call_seconds: float = 0.2) -> None:
        self.disabled = disabled
        self.max_call_seconds = max_call_seconds
        self.factor = factor
        self.repeats = repeats
        self.min_repeat_ms = min_repeat_ms
        self.target = o3_target()
        self._nopt: LRU[str, Any] = LRU(cache_size)

    def _nopt_build(self, script: str, func: Any) -> Any:
        cached = self._nopt.get(script)
        if cached is None:
            with tvm.transform.PassContext(opt_level=3, disabled_pass=self.disabled):
                cached = tvm.compile(module_of(func), target=self.target)
            self._nopt.put(script, cached)
        return cached

    def opt_module(self, func: Any, passes: list[PassSpec]) -> Any:
        """The optimized module: ``passes`` applied for the O3 target (before ``tvm.compile``)."""
        return apply_passes(module_of(func), passes, target=self.target)

    def measure(self, script: str, func: Any, passes: list[PassSpec], inputs: list[np.ndarray]) -> dict[str, Any]:
        """Time opt against nopt; ``slow`` is True when every alternating repeat exceeds the factor.

        Stops early at the first repeat that does not show the slowdown. Raises whatever TVM raises
        (the caller treats that as "no verdict": the result oracle judges errors).
        """
        nopt = self._nopt_build(script, func)
        mod = self.opt_module(func, passes)
        with tvm.transform.PassContext(opt_level=3):
            opt = tvm.compile(mod, target=self.target)
        # One call of each first: a kernel too slow to time repeatedly within the run stage's
        # limit is not judged (an extremely slow optimized kernel is the hang oracle's case).
        once = {"nopt": kernel_seconds(nopt, inputs, repeat=1, min_repeat_ms=0),
                "opt": kernel_seconds(opt, inputs, repeat=1, min_repeat_ms=0)}
        if max(once.values()) > self.max_call_seconds:
            return {"slow": False, "skipped": f"a kernel call takes over {self.max_call_seconds:g} s", **once}
        pairs = timed_pairs(opt, nopt, inputs, self.factor, self.repeats, self.min_repeat_ms)
        ratios = [time_ratio(*pair) for pair in pairs]
        opt_s, nopt_s = pairs[-1]
        slow = len(ratios) == self.repeats and min(ratios) > self.factor
        return {"slow": slow, "ratio": min(ratios), "ratios": ratios, "opt_seconds": opt_s,
                "nopt_seconds": nopt_s, "factor": self.factor, "repeats": self.repeats}

