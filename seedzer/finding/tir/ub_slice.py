"""The UB-free slice: a failure whose test case has undefined behaviour off the failure's path.

A mutant may carry undefined behaviour (a division by a value that may be zero, a second write of
one location, a read of uninitialized memory, NaN-producing math: :mod:`seedzer.tir.ub`) that excuses
a wrong result or a refusal; the gate then dismisses the candidate as an invalid test case. But the
behaviour may sit in a statement the failure never needs. The IR is shrunk greedily
(:func:`seedzer.finding.shrink_ir.shrink_step`: drop a statement, replace one by a child,
shrink an extent, simplify a constant), each step kept only while the case still fails the same way,
until the analysis finds no undefined behaviour the original seed lacks. Such a *slice* is a program
without undefined behaviour that fails as the candidate did: the gate judges it instead (its later
rules: contracts, culprit, root), and files it. A slice that still has undefined behaviour when no
step helps, or the budget ends, leaves the dismissal standing, saying so.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from seedzer.finding.tir.context import ShrinkStep, TirContext, reproduces
from seedzer.kernel.common import Observation
from seedzer.kernel.messages import ir_names
from seedzer.kernel.tir.case import Case

Fails = Callable[[Case], bool]
"""Whether a case (the candidate's with another script) still fails the way the candidate did."""
Undefined = Callable[[str], "str | None"]
"""The undefined behaviour a TVMScript text adds to the original seed (None: none)."""

MAX_TESTS = 40
"""Most runs of the case one slicing spends."""
MAX_SECONDS = 120.0
"""Most seconds one slicing spends."""


@dataclass(frozen=True)
class Slice:
    """The UB-free slice's TVMScript (None: none found, with ``why``), the runs and steps it took."""

    script: str | None
    tests: int
    steps: int
    why: str = ""


def _default_shrink_step(script: str, test: Callable[[str], bool], out_of_time: Callable[[], bool]) -> str | None:
    from seedzer.finding.shrink_ir import shrink_step  # imports TVM

    return shrink_step(script, test, out_of_time)


def ub_free_slice(case: Case, fails: Fails, undefined: Undefined, shrink_step: ShrinkStep = _default_shrink_step,
                  max_tests: int = MAX_TESTS, max_seconds: float = MAX_SECONDS) -> Slice:
    """The slice of ``case``'s IR without undefined behaviour that still fails (see the module docstring)."""
    deadline = time.monotonic() + max_seconds
    tests = steps = 0
    script = case.script

    def test(text: str) -> bool:
        nonlocal tests
        tests += 1
        return fails(case.with_steps(case.steps, script=text))

    def out_of_time() -> bool:
        return tests >= max_tests or time.monotonic() >= deadline

    while undefined(script) is not None:
        if out_of_time():
            return Slice(None, tests, steps, f"the budget ended after {tests} runs")
        try:
            better = shrink_step(script, test, out_of_time)
        except Exception as exc:  # a script the shrinker cannot take apart: no slice, said why
            return Slice(None, tests, steps, f"the IR cannot be shrunk ({type(exc).__name__})")
        if better is None:
            why = f"the budget ended after {tests} runs" if out_of_time() else "no smaller program fails the same way"
            return Slice(None, tests, steps, why)
        script, steps = better, steps + 1
    return Slice(script, tests, steps)



def slice_for(context: TirContext, case: Case, failure: Observation, seed: str) -> Slice:
    """The UB-free slice of ``case`` (failing as ``failure``) against the original ``seed``, judged
    by the gate's tester."""

    def fails(candidate: Case) -> bool:
        return reproduces(failure, context.observe(candidate), context.names | ir_names(candidate.script))

    shrink = context.shrink_step or _default_shrink_step
    return ub_free_slice(case, fails, lambda text: context.ub_text(text, seed), shrink)
