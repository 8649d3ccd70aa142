"""The gate's tester: runs kernel cases in children forked from the gate's process (which holds TVM,
a parse cache and the minimal builds already made); a death or a timeout becomes a crash or hang
observation.

Most of a gate's tests (the culprit bisection's) run one script with different optional steps, so
its minimal lowering (the pipeline without its optional passes) is the same program every time. A
child sends the outputs of each minimal build it made back with its observation; the tester keeps
the last few (the reducer's tester too), and later children (forked after) take them instead of
building that program again. Only the minimal build is kept, and only its outputs: the kernel never
calls it again. The timing builds its own programs, and the nondeterminism re-run calls the build
that disagrees with its counterpart, never the minimal one (when the minimal build stands in for the
reference, the reference-vs-minimal comparison compares it with itself).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from seedzer.execute.forked import Forked, call_forked
from seedzer.execute.lru import LRU
from seedzer.execute.memory import limit_address_space
from seedzer.finding.script_tester import ScriptTester
from seedzer.kernel.common import MINIMAL, Observation, Stage
from seedzer.kernel.tir.case import Case, Step

MinimalKey = tuple[str, str, str, int, int]
"""A minimal build's identity: script, steps, target, input seed, buffer limit."""
KNOWN_MINIMAL_BUILDS = 8
"""Minimal builds a tester keeps (a gate tests one to three scripts; the reducer one at a time)."""


def minimal_key(case: Case, steps: Sequence[Step]) -> MinimalKey:
    """The identity of ``case``'s minimal build with ``steps`` (what its outputs depend on)."""
    return (case.script, json.dumps([s.to_json() for s in steps], sort_keys=True),
            json.dumps(case.target, sort_keys=True), case.input_seed, case.max_elems)


def _builder() -> Any:
    """The kernel's builder with a parse cache and the known minimal builds (filled in the gate process,
    inherited by its children).

    The kernel imports TVM: it is imported here, in the gate's own process, never by the campaign."""
    from seedzer.kernel.tir.lowering import parse_func
    from seedzer.kernel.tir.observe import Built, TirBuilder

    class GateTirBuilder(TirBuilder):
        def __init__(self) -> None:
            super().__init__()
            self.parsed: dict[str, Any] = {}
            self.known: LRU[MinimalKey, Built] = LRU(KNOWN_MINIMAL_BUILDS)
            self.learned: dict[MinimalKey, Built] = {}

        def parse(self, script: str) -> Any:
            if script not in self.parsed:
                self.parsed[script] = parse_func(script)
            return self.parsed[script]

        def build(self, case: Case, func: Any, programs: dict[str, Sequence[Step]], inputs: list[Any],
                  target: Any) -> dict[str, Built]:
            key = minimal_key(case, programs[MINIMAL])
            known = self.known.get(key)
            if known is not None:
                rest = super().build(case, func, {p: s for p, s in programs.items() if p != MINIMAL}, inputs, target)
                return {MINIMAL: known, **rest}
            built = super().build(case, func, programs, inputs, target)
            minimal = built[MINIMAL]
            self.learned[key] = Built(outputs=minimal.outputs, failure=minimal.failure, program=MINIMAL)
            return built

    return GateTirBuilder()


def _observe(case: Case, builder: Any) -> tuple[Observation, dict[MinimalKey, Any]]:
    """A child's test: the kernel's observation, with the minimal builds it made."""
    from seedzer.kernel.tir.observe import observe

    return observe(case, builder), builder.learned


class Tester(ScriptTester[Case]):
    """Runs TIR cases in forked children, handing them the minimal builds known (the module docstring)."""

    def __init__(self) -> None:
        super().__init__(_builder())
        self.minimal_builds = 0
        """Minimal lowerings built so far (the others were known from an earlier test)."""

    def run(self, case: Case, timeout: float) -> tuple[Forked, str]:
        from seedzer.kernel.tir.observe import step_label

        progress = self.progress

        def on_step(stage: Stage, name: str, program: str) -> None:
            progress.set(stage.value, step_label(name, program))

        self.builder.on_step = on_step
        return call_forked(_observe, case, self.builder, timeout=timeout, progress=progress), ""

    def learn(self, learned: dict[MinimalKey, Any]) -> None:
        for key, built in learned.items():
            self.builder.known.put(key, built)
        self.minimal_builds += len(learned)

    def slow(self, stage: Stage | None, timeout: float) -> str:
        phase = "kernel" if stage is Stage.RUN else "compile"
        return f"{super().slow(stage, timeout)} (the {phase} is slow)"


def observe_folder(where: str, timeout: float, max_memory: int = 0) -> Observation:
    """What the case of the TIR folder ``where`` (a finding, or a sample of a filtered test case)
    shows run once alone in a forked child within ``timeout`` seconds and ``max_memory`` bytes of
    address space (0: unbounded; set in this process, which the caller runs for this job alone)."""
    from seedzer.finding.tir.folder import TirFinding

    limit_address_space(max_memory)
    return Tester().observe(TirFinding.load(Path(where)).case, timeout)
