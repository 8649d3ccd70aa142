"""The schedule kind's filing gate: before anything is filed, a candidate is re-judged the way a TVM
maintainer would.

It runs in a process forked from the zygote (never instrumented by coverage), every test of a case in a
child forked from it (a candidate may crash: :mod:`seedzer.finding.sched.check`), and returns the first
answer of :data:`RULES` (:class:`~seedzer.finding.gate.GateRules`), marked with the rule that gave it. The
rules (:mod:`seedzer.finding.sched.rules`), in this order:

1. **expects-failure.** A case that expects no failure is not reproduced.
2. **alone.** The case runs again alone: it must fail the same way (a hang must outlive a generous
   limit; a crash must die by a signal at the same step, never SIGKILL).
3. **refusal.** A primitive or a postprocessor refusing its input (``ScheduleError`` and TVM's argument
   checks) is its contract, never a bug.
4. **unsafe.** A failure after an unsafe primitive is not TVM's fault.
5. **precondition.** The failure goes through the oracles (a pass stating a precondition is an invalid
   input).
6. **schedule-contract.** A build refusing what the schedule asked for in so many words (a nested parallel
   loop, a software pipeline without its order) is an invalid input.
7. **hang.** A slow build or run of a schedule that asks to unroll loops is the work it asks for.
8. **trace.** The trace is cut to what the failure needs (ddmin over its primitives). Never answers.
9. **lowering.** A failure in the build is localized in TVM's default pipeline run as flat steps; a wrong
   result that needs one optional pass's optimizing form names that pass. Never answers.
10. **culprit.** The code at fault (:mod:`seedzer.finding.sched.at_fault`: the primitive's implementation,
   a postprocessor, the pipeline pass, a shared component, the primitive it failed in or the last one the
   trace needs) keys the root signature. Always answers.

The kernel itself turns a primitive's refusal, a malformed trace, a parameter whose layout a schedule
changed and a wrong result after an unsafe primitive into ``invalid`` test cases, never candidates.
"""

from __future__ import annotations

from seedzer.finding.gate import GateRules, Rule
from seedzer.finding.sched.check import Tester
from seedzer.finding.sched.rules import (
    Alone,
    Culprit,
    ExpectsFailure,
    Hang,
    Lowering,
    Precondition,
    Refusal,
    SchedContext,
    SchedGateJob,
    ScheduleContract,
    Trace,
    Unsafe,
)
from seedzer.finding.verdict import Verdict

__all__ = ["RULES", "SchedContext", "SchedGateJob", "run_gate"]

RULES: tuple[Rule[SchedContext], ...] = (ExpectsFailure(), Alone(), Refusal(), Unsafe(), Precondition(),
                                         ScheduleContract(), Hang(), Trace(), Lowering(), Culprit())
"""The gate's rules in the order they judge (the module docstring lists them)."""


def run_gate(job: SchedGateJob) -> Verdict:
    """The gate's entry point (a module-level function, so a forked process can run it)."""
    tester = Tester()
    return GateRules(RULES).first_answer(SchedContext.of(job, tester.observe))
