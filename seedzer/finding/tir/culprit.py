"""Culprit bisection: the passes a failure needs, found by delta debugging over a case's flat steps.

The optional steps of a case (every fuzzed insertion and the pipeline's optional passes) are reduced
to a 1-minimal subset that still gives the same failure, the mandatory lowering always kept. What
"the same failure" means depends on the symptom:

- an error, ill-formed IR or a crash: the same failure at the same step (:func:`same_failure`);
- a mismatch: the program built with the subset differs from the minimal lowering (the kept
  optional steps become the case's only insertions, so its reference *is* the minimal lowering);
- a slowdown: the fuzzed subset still makes the build slower than TVM's pipeline alone (the
  pipeline's optional passes stay in both builds).

The culprit is that subset's pass names, plus the step an error surfaced at when that step is not
optional itself.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass

from seedzer.finding.ddmin import ddmin
from seedzer.kernel.common import OPT_VS_REFERENCE, Observation, Symptom, label_parts
from seedzer.kernel.messages import same_failure
from seedzer.kernel.tir.case import FUZZED, PIPELINE, Case, Checks, Step

Observe = Callable[[Case], Observation]
"""Runs a case in isolation and returns what it showed."""


@dataclass
class Culprit:
    """The bisection's result: the culprit steps, the failing step when it is not among them, tests."""

    steps: list[Step]
    surfaced: str | None
    tests: int
    complete: bool

    def names(self) -> list[str]:
        """The culprit's pass names (arguments left out: they do not split one bug)."""
        names = [s.name for s in self.steps]
        if self.surfaced and self.surfaced not in names:
            names.append(self.surfaced)
        return names


def _optional(step: Step) -> bool:
    return step.role == FUZZED or step.optional


def variant(case: Case, keep: list[int]) -> Case:
    """``case`` with only the optional steps at indices ``keep`` (mandatory ones always stay)."""
    kept = set(keep)
    steps: list[Step] = []
    for i, step in enumerate(case.steps):
        if i in kept:
            steps.append(step)
        elif step.role != FUZZED and (minimal := step.minimized()) is not None:
            steps.append(minimal)
    if case.expected is not None and case.expected.symptom is Symptom.MISMATCH:
        # The kept optional steps become the only insertions, so the reference is the minimal lowering;
        # a kept step the lowering needs in some form (vectorization) keeps its minimal form there too.
        mixed: list[Step] = []
        for s in steps:
            if not _optional(s):
                mixed.append(dataclasses.replace(s, role=PIPELINE, optional=False))
                continue
            mixed.append(dataclasses.replace(s, role=FUZZED, optional=True, minimal=None))
            if s.minimal is not None:
                mixed.append(dataclasses.replace(s, args=dict(s.minimal), role=PIPELINE, optional=False, minimal=None))
        return dataclasses.replace(case, steps=tuple(mixed), checks=Checks(illformed=False, compare=True,
                                                                           pipeline=False, perf=False))
    if case.expected is not None and case.expected.symptom is Symptom.ILLFORMED:
        # Verified from the first step: with fewer fuzzed steps the failing pass may run before any.
        return verified_from_start(case.with_steps(steps))
    return case.with_steps(steps)


def verified_from_start(case: Case) -> Case:
    """``case`` with the verifier run after every step from the first one (pipeline steps too)."""
    return dataclasses.replace(case, checks=dataclasses.replace(case.checks, illformed=True, pipeline_illformed=True))


def _target(case: Case) -> Observation:
    expected = case.expected
    assert expected is not None
    if expected.symptom is Symptom.MISMATCH:
        return dataclasses.replace(expected, comparison=OPT_VS_REFERENCE)
    return expected


def bisect(case: Case, observe: Observe, names: frozenset[str], max_tests: int = 40,
           max_seconds: float = 60.0) -> Culprit:
    """The culprit of ``case``'s expected failure (see the module docstring)."""
    expected = _target(case)
    candidates = [i for i, s in enumerate(case.steps) if _optional(s)]
    if expected.symptom is Symptom.PERF:
        candidates = [i for i in candidates if case.steps[i].role == FUZZED]
    deadline = time.monotonic() + max_seconds
    tests = 0
    cache: dict[tuple[int, ...], bool] = {}

    def holds(keep: list[int]) -> bool:
        nonlocal tests
        key = tuple(keep)
        if key not in cache:
            tests += 1
            kept = set(keep) | ({i for i, s in enumerate(case.steps) if _optional(s) and s.role != FUZZED}
                                if expected.symptom is Symptom.PERF else set())
            cache[key] = same_failure(expected, observe(variant(case, sorted(kept))), names)
        return cache[key]

    def out_of_time() -> bool:
        return tests >= max_tests or time.monotonic() >= deadline

    keep = ddmin(candidates, holds, out_of_time)
    complete = not out_of_time()
    surfaced = expected.pass_name if expected.symptom in (Symptom.EXCEPTION, Symptom.ILLFORMED, Symptom.CRASH) else None
    if surfaced is not None:
        surfaced = label_parts(surfaced)[1]
    return Culprit([case.steps[i] for i in keep], surfaced, tests, complete)
