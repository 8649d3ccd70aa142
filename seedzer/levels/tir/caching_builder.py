"""The worker's builder: the kernel's :class:`~seedzer.kernel.tir.observe.TirBuilder` with caches and one JIT.

A worker runs many test cases of the same few scripts, so it keeps what does not change:

- the minimal and reference programs of a script (the pipeline, without and with its optional
  passes) are built once per script and reused while only the fuzzed passes change;
- an optimized program whose lowered module equals one built before (often: fuzzed passes that
  change nothing) reuses that build's outputs, so it needs no code generation at all;
- the programs still to build are generated as one LLVM module: one JIT instead of up to three
  (the JIT has a fixed cost per module, even for a one-line kernel: docs/measurements.md, 'Workers
  and isolation'). If that fails, each is generated alone so that the failure is attributed to the
  program that causes it.

It also records the ``passes`` coverage features of the optimized program's steps, which of its
steps changed the IR (``triggers``: every pass the test case ran, fuzzed or the pipeline's) and which
fuzzed steps left the IR unchanged, and its timings by stage (``passes``: lowering the optimized program;
``reference``: lowering the minimal and reference ones; ``build``, ``run``, ``perf``). What it
judges, and in which order, is the kernel's :func:`~seedzer.kernel.tir.observe.observe`, exactly as
in a reproducer.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import tvm_ffi

from seedzer.coverage.pass_instrument import PassCoverage
from seedzer.coverage.triggers import PassTriggers, module_changed
from seedzer.execute.lru import LRU
from seedzer.kernel.common import Observation, Stage, Symptom, error_text, tvm_frames
from seedzer.kernel.tir.case import FUZZED, Step
from seedzer.kernel.tir.lowering import FUNCTION_NAMES, OnStep, StepFailure, call, codegen, lower
from seedzer.kernel.tir.observe import OPT, Built, Case, TirBuilder, watch_from


@dataclass
class CachingBuilderSettings:
    """Cache sizes and whether the ``passes`` features describe how each step changed the IR."""

    program_cache: int = 512
    build_cache: int = 128
    detailed_coverage: bool = False


PACKED_API = "tirx.MakePackedAPI"
"""The first pipeline step whose output depends on the function's name (its argument checks)."""


def build_key(before_packed: Any, steps: Sequence[Step], index: int) -> int | None:
    """A key of the program being lowered that does not depend on its name: the structural hash of
    its one PrimFunc right before the packed API, with the steps still to run (None if several)."""
    funcs = list(before_packed.functions.values())
    if len(funcs) != 1:
        return None
    rest = tuple((s.name, repr(sorted(s.args.items())), repr(sorted(s.config.items()))) for s in steps[index:])
    return hash((tvm_ffi.structural_hash(funcs[0].with_attr("global_symbol", "_")), rest))


class CachingTirBuilder(TirBuilder):
    """Builds a case's programs with caches and one joint JIT (see the module docstring)."""

    def __init__(self, settings: CachingBuilderSettings, on_step: OnStep) -> None:
        super().__init__(on_step)
        self.settings = settings
        self._programs: LRU[tuple[str, str], Built] = LRU(settings.program_cache)
        self._executables: LRU[int, tuple[Any, str]] = LRU(settings.build_cache)
        self._keys: dict[str, int | None] = {}
        self.features: set[str] = set()
        self.unchanged: list[int] = []
        self.timings: dict[str, float] = {}
        self.triggers = PassTriggers()

    def reset(self) -> None:
        """Forget the per-test-case records (features, passes triggered, unchanged fuzzed steps, timings)."""
        self.features = set()
        self.unchanged = []
        self.timings = {}
        self.triggers.clear()

    def _timed(self, key: str, start: float) -> None:
        self.timings[key] = self.timings.get(key, 0.0) + time.perf_counter() - start

    def lower_program(self, case: Case, func: Any, program: str, steps: Sequence[Step], target: Any) -> Any:
        """Lower one program, noting its build key; the optimized one with coverage features and the
        record of fuzzed steps that left the IR unchanged."""
        start = time.perf_counter()
        packed = next((i for i, s in enumerate(steps) if s.name == PACKED_API), None)
        fuzzed = [i for i, s in enumerate(steps) if s.role == FUZZED]
        self._keys[program] = None

        def after(index: int, before: Any, mod: Any) -> None:
            if index == packed:
                self._keys[program] = build_key(before, steps, index)
            if program != OPT:
                return
            changed = module_changed(before, mod)
            self.triggers.record(steps[index].name, changed)
            if steps[index].role == FUZZED and not changed:
                self.unchanged.append(fuzzed.index(index))

        cov = PassCoverage(program, detailed=self.settings.detailed_coverage) if program == OPT else None
        try:
            return lower(func, steps, target, program=program, on_step=self.on_step,
                         watch_from=watch_from(case, program, steps), strict=case.checks.strict_verifier(),
                         instruments=[cov] if cov is not None else [], after=after)
        finally:
            if cov is not None:
                self.features |= cov.features
            self._timed("passes" if program == OPT else "reference", start)  # the oracles' programs apart

    def build(self, case: Case, func: Any, programs: dict[str, Sequence[Step]], inputs: list[np.ndarray],
              target: Any) -> dict[str, Built]:
        """Reuse cached programs and executables, lower the rest, generate what is new as one module."""
        results: dict[str, Built] = {}
        hosts: dict[str, Any] = {}
        for program, steps in programs.items():
            cached = self._programs.get((program, case.script)) if program != OPT else None
            if cached is not None:
                results[program] = cached
                continue
            try:
                host = self.lower_program(case, func, program, steps, target)
            except StepFailure as failure:
                results[program] = Built(failure=failure.observation)
                continue
            key = self._keys.get(program)
            known = self._executables.get(key) if key is not None else None
            if known is None:
                hosts[program] = host
                continue
            executable, name = known
            self.timings["reused_builds"] = self.timings.get("reused_builds", 0.0) + 1
            results[program] = self._run(executable, name, inputs)
        if hosts:
            self._generate(hosts, target, inputs, results)
        for program, built in results.items():
            if program != OPT:
                self._programs.put((program, case.script), built)
        return results

    def _run(self, executable: Any, program: str, inputs: list[np.ndarray]) -> Built:
        self.on_step(Stage.RUN, "run", program)
        start = time.perf_counter()
        try:
            return Built(call(executable, program, inputs), None, executable, program)
        except Exception as exc:  # a kernel that raises at run time
            return Built(failure=Observation(Symptom.EXCEPTION, Stage.RUN, "run", error_text(exc)[:4000],
                                             frames=tvm_frames(exc)))
        finally:
            self._timed("run", start)

    def _generate(self, hosts: dict[str, Any], target: Any, inputs: list[np.ndarray],
                  results: dict[str, Built]) -> None:
        start = time.perf_counter()
        self.on_step(Stage.BUILD, "codegen", next(reversed(hosts)))
        try:
            executable = codegen(list(hosts.values()), target)
            for program in hosts:  # LLVM's JIT materializes code at the first lookup: fail here, not later
                executable[FUNCTION_NAMES[program]]
            generated: dict[str, Any] = dict.fromkeys(hosts, executable)
        except Exception:  # attribute the failure: generate each program alone (a failed JIT is not reused)
            generated = self.generate(hosts, target)
        self._timed("build", start)
        for program, executable in generated.items():
            if isinstance(executable, Observation):
                results[program] = Built(failure=executable)
                continue
            key = self._keys.get(program)
            if key is not None:
                self._executables.put(key, (executable, program))
            results[program] = self._run(executable, program, inputs)

    def time(self, case: Case, func: Any, steps: Sequence[Step], inputs: list[np.ndarray]) -> Any:
        """The kernel's O3 timing, with its time recorded."""
        start = time.perf_counter()
        try:
            return super().time(case, func, steps, inputs)
        finally:
            self._timed("perf", start)
