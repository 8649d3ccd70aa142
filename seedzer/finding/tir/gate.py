"""The filing gate: before anything is filed, a candidate is re-judged the way a TVM maintainer would.

It runs in a process forked from the zygote (never instrumented by coverage), every test of a case
in a child forked from it (a candidate may crash), and returns a :class:`Verdict`: the first answer
of :data:`RULES` (:class:`~seedzer.finding.gate.GateRules`), marked with the rule that gave it. The
rules (:mod:`seedzer.finding.tir.rules`), in this order:

1. **expects-failure.** A case that expects no failure is not reproduced.
2. **legacy-program.** A finding of an older Seedzer: its own program (passes outside their
   contracts) must still fail as it recorded, and the case within the contracts must fail too
   (else ``contract``); that failure is the one confirmed from then on.
3. **alone.** The case runs again alone: it must fail the same way (a hang must outlive a generous
   limit; a crash must die by a signal, never SIGKILL). A slow compile or kernel of a test case that
   asks for unrolling and lowers to huge IR (many statements, or many expression nodes) is that
   work, not a bug (:mod:`seedzer.finding.tir.hang_size`), known before the long re-run.
4. **hang.** A hang that outlived the limit alone is a bug (culprit: the step it hung at, never
   bisected) only when TVM is at fault: not when even the minimal lowering is that slow, nor when
   the test case asks for the work (unrolling into huge IR; for a slow pass, the IR entering it),
   nor when TVM's default pipeline on the same program does not finish within a share of the limit
   either (:data:`~seedzer.finding.tir.rules.PIPELINE_SHARE`: the program itself is that slow).
5. **precondition.** The re-observed failure goes through the oracles (a pass stating a
   precondition is an invalid input).
6. **reserved-attribute.** IR carrying an attribute TVM's lowering puts in place itself
   (``compute_scope``) is outside every pass's contract.
7. **undefined-behaviour.** Against its original seed, the IR must add no division by a value that
   may be zero, no second write of one location in one block, no read of uninitialized memory and
   no NaN-producing math (:mod:`seedzer.tir.ub`): a wrong or slow *run* of such a test case is
   invalid, not a TVM bug; so is a compiler's deliberate refusal of it ("Divide by zero"). A
   compiler that crashes, raises an internal error or emits ill-formed IR on it is still judged:
   undefined behaviour at run time never excuses a failure at compile time.
8. **mandatory.** A failure the minimal lowering shows too (the mandatory pipeline or the code
   generator on the program itself), of a case that asks for it to be judged (a fuzzed mutant whose
   parent lowered), is TVM's only on an input that passes TIR's well-formedness verifier (undefined
   behaviour was judged by the rule before); else invalid, with the verifier's reason.
9. **contract.** The canonical lowering is inserted right before the failing fuzzed pass: if the
   failure disappears, the pass was given IR in a form TVM's pipeline never gives it.
10. **ancestor.** The original seed (then the unmutated parent) with the same steps: if it fails the
   same way, the finding is judged and filed with that IR (the mutation was not needed). Never answers.
11. **verifier.** Ill-formed IR that TVM's default pipeline itself produces from the input is a
    verifier issue, counted apart (filed only when ``verifier_issues`` is on).
12. **culprit.** Bisection over the fuzzed and pipeline passes (:mod:`seedzer.finding.tir.culprit`)
    names the passes the failure needs; the root signature keys on them and on the essence of the
    symptom, so one cause is one finding. A slowdown whose fuzzed culprit is its pass's
    non-optimizing form is what it asks for; a wrong result, or a later pass's failure, that comes
    with ill-formed IR out of a culprit pass given well-formed IR is filed as that ill-formedness.
    Always answers.

NaN/Inf-only and nondeterministic mismatches are ruled out by the kernel itself (``invalid``).
"""

from __future__ import annotations

from seedzer.finding.gate import GateRules, Rule
from seedzer.finding.tir.check import Tester
from seedzer.finding.tir.context import GateJob, TirContext, excused_by_ub, reproduces
from seedzer.finding.tir.input_rules import Mandatory, ReservedAttribute, UndefinedBehaviour
from seedzer.finding.tir.rules import (
    Alone,
    Ancestor,
    Contract,
    Culprit,
    ExpectsFailure,
    Hang,
    LegacyProgram,
    Precondition,
    Verifier,
)
from seedzer.finding.verdict import Verdict

__all__ = ["RULES", "GateJob", "TirContext", "Verdict", "excused_by_ub", "reproduces", "run_gate"]

RULES: tuple[Rule[TirContext], ...] = (
    ExpectsFailure(), LegacyProgram(), Alone(), Hang(), Precondition(), ReservedAttribute(), UndefinedBehaviour(),
    Mandatory(), Contract(), Ancestor(), Verifier(), Culprit(),
)
"""The gate's rules in the order they judge (the module docstring lists them)."""


def run_gate(job: GateJob) -> Verdict:
    """The gate's entry point (a module-level function, so a forked process can run it)."""
    return GateRules(RULES).first_answer(TirContext.of(job, Tester()))
