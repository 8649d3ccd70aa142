"""The filing gate: before anything is filed, a candidate is re-judged the way a TVM maintainer would.

It runs in a process forked from the zygote (never instrumented by coverage), every test of a case
in a child forked from it (a candidate may crash), and returns a :class:`Verdict`, in this order:

1. **Alone.** The case runs again alone: it must fail the same way (a hang must outlive a generous
   limit; a crash must die by a signal, never SIGKILL). A slow compile or kernel of a test case that
   asks for unrolling and lowers to huge IR is that work, not a bug (:mod:`seedzer.finding.lowlevel.hang_size`).
2. **Oracle.** The re-observed failure goes through the oracles (a pass stating a precondition is
   an invalid input).
3. **Undefined behaviour.** Against its original seed, the IR must add no division by a value that
   may be zero, no second write of one location in one block, no read of uninitialized memory and
   no NaN-producing math (:mod:`seedzer.tir.ub`): a wrong or slow *run* of such a test case is
   invalid, not a TVM bug; so is a compiler's deliberate refusal of it ("Divide by zero"). A
   compiler that crashes, raises an internal error or emits ill-formed IR on it is still judged:
   undefined behaviour at run time never excuses a failure at compile time.
4. **Contract.** The canonical lowering is inserted right before the failing pass: if the failure
   disappears, the pass was given IR in a form TVM's pipeline never gives it.
5. **Parent.** The unmutated parent (then the original seed) with the same steps: if it fails the
   same way, the finding is filed with that IR (the mutation was not needed).
6. **Verifier.** Ill-formed IR that TVM's default pipeline itself produces from the input is a
   verifier issue, counted apart (filed only when ``verifier_issues`` is on).
7. **Culprit.** Bisection over the fuzzed and pipeline passes (:mod:`seedzer.finding.lowlevel.culprit`)
   names the passes the failure needs; the root signature keys on them and on the essence of the
   symptom, so one cause is one finding. A wrong result, or a later pass's failure, that comes with
   ill-formed IR out of a culprit pass given well-formed IR is filed as that ill-formedness.

NaN/Inf-only and nondeterministic mismatches are ruled out by the kernel itself (``invalid``).
"""

from __future__ import annotations

import dataclasses
import re
import time
from dataclasses import dataclass, field

from seedzer.execute.forked import call_forked
from seedzer.finding.gate import GateSettings
from seedzer.finding.lowlevel.culprit import bisect, verified_from_start
from seedzer.finding.lowlevel.hang_size import HUGE_IR_STATEMENTS, lowered_statements, unrolling_asked
from seedzer.finding.lowlevel.tester import Tester
from seedzer.finding.meta import BUG, NOT_A_BUG
from seedzer.finding.verdict import (
    CONTRACT,
    INSTRUMENTATION,
    INVALID,
    NOT_REPRODUCED,
    PRECONDITION,
    VERIFIER,
    Verdict,
)
from seedzer.kernel.common import FUZZED, MINIMAL, Case, Observation, Stage, Symptom, label_parts, reference_steps
from seedzer.kernel.messages import ir_names, normalize, same_failure
from seedzer.oracles.registry import judge, make_oracles
from seedzer.oracles.signature import root_key
from seedzer.passes.contracts import canonical_lowering, reserved_attribute, slot_of_step

COMPILE_STAGES = frozenset({Stage.MUTATE, Stage.PASS, Stage.BUILD})
REFUSES_UB = re.compile(r"divide by zero|division by zero|mod(ulo)? by zero", re.IGNORECASE)
"""TVM's deliberate refusals of a constant division by zero (the simplifier's checks)."""


def excused_by_ub(observation: Observation) -> bool:
    """Whether undefined behaviour in the IR excuses ``observation``: any failure of the run (a
    mismatch, a slowdown, a crash or hang of the kernel) and a compiler's refusal of a division
    by zero, but no other failure of the compiler."""
    return observation.stage not in COMPILE_STAGES or bool(REFUSES_UB.search(observation.message))


@dataclass
class GateJob:
    """One candidate: its case (``expected`` is what the campaign observed) and its ancestors' IR."""

    signature: str
    case: Case
    ancestors: list[tuple[str, str]] = field(default_factory=list)
    """``(label, TVMScript)`` of less mutated versions of the IR, least mutated first."""
    settings: GateSettings = field(default_factory=GateSettings)
    legacy: Case | None = None
    """For a finding filed by an older Seedzer: the program it ran (passes outside their contracts)."""


def _lines(case: Case) -> int:
    """The non-blank lines of a case's IR (its size in verdicts)."""
    return sum(1 for ln in case.script.splitlines() if ln.strip())


def _timeout(job: GateJob, expected: Observation) -> float:
    limits = job.settings.timeouts
    if expected.symptom is Symptom.HANG:
        stage = expected.stage.value if expected.stage else "build"
        return job.settings.hang_factor * float(limits.get(stage, 60.0))
    return 2.0 * sum(float(v) for v in limits.values())


def _reproduces_legacy(expected: Observation, got: Observation, names: frozenset[str]) -> bool:
    """Whether a program of an older Seedzer still fails as it recorded (older versions named a build
    error after the pipeline's last pass and a nested pass by its inner name: the message decides)."""
    if expected.symptom in (Symptom.EXCEPTION, Symptom.ILLFORMED):
        return got.symptom is expected.symptom and normalize(got.message, names) == normalize(expected.message, names)
    return _reproduces(expected, got, names)


def _reproduces(expected: Observation, got: Observation, names: frozenset[str]) -> bool:
    if expected.symptom is Symptom.CRASH:
        return got.symptom is Symptom.CRASH and got.pass_name == expected.pass_name
    if expected.symptom is Symptom.HANG:
        return got.symptom is Symptom.HANG
    return same_failure(expected, got, names)


class Gate:
    """Judges one candidate (see the module docstring)."""

    def __init__(self, job: GateJob) -> None:
        self.job = job
        self.tester = Tester()
        self.start = time.monotonic()
        self.notes: list[str] = []

    def verdict(self, verdict: str, reason: str, case: Case, observation: Observation,
                culprit: list[str] | None = None, root: str | None = None) -> Verdict:
        """A verdict with the gate's cost so far."""
        return Verdict(self.job.signature, verdict, reason, case, observation, culprit or [], root,
                       self.tester.tests, time.monotonic() - self.start, self.notes)

    def run(self) -> Verdict:
        """Judge the candidate."""
        case = self.job.case
        expected = case.expected
        assert expected is not None, "a gate job's case carries the observation to confirm"
        names = ir_names(case.script)
        if not expected.symptom.is_bug:
            return self.verdict(NOT_A_BUG, f"{NOT_REPRODUCED}: the case expects no failure ({expected.headline()})",
                                case, expected)
        timeout = _timeout(self.job, expected)
        if self.job.legacy is not None:
            legacy = dataclasses.replace(self.job.legacy, checks=dataclasses.replace(
                self.job.legacy.checks, illformed=expected.symptom is Symptom.ILLFORMED,
                pipeline_illformed=expected.symptom is Symptom.ILLFORMED))
            old = self.tester.observe(legacy, timeout)
            if not _reproduces_legacy(expected, old, names):
                return self._not_reproduced(legacy, expected, old)
            got = self.tester.observe(case, timeout)
            if got.symptom is Symptom.OK:
                return self.verdict(NOT_A_BUG, f"{CONTRACT}: it happens only when passes run outside their "
                                    "contracts (within them every check passes)", case, got)
            if got.symptom.is_bug and not _reproduces(old, got, names):
                self.notes.append(f"within the pass contracts it shows as: {got.headline()[:200]}")
            expected = got
        else:
            early = self._asked_for(case, expected) if expected.symptom is Symptom.HANG else None
            if early is not None:  # known without waiting out the generous limit
                return early
            got = self.tester.observe(case, timeout)
        if not _reproduces(expected, got, names):
            if not (expected.symptom is Symptom.ILLFORMED and got.symptom is Symptom.MISMATCH):
                return self._not_reproduced(case, expected, got)
            # the verifier no longer looks where it did (a pipeline step before any fuzzed one):
            # the wrong result is what the build of that IR gives, judged as such
            self.notes.append(f"run alone the ill-formed IR shows as: {got.headline()[:200]}")
        if got.symptom is Symptom.HANG:
            return self._hang(case, got)
        judged = judge(make_oracles(self.job.settings.oracles), got)
        if judged.symptom is Symptom.INVALID:
            return self.verdict(NOT_A_BUG, f"{PRECONDITION}: {judged.message[:300]}", case, judged)
        reserved = reserved_attribute(case.script)
        if reserved is not None:
            return self.verdict(NOT_A_BUG, f"{CONTRACT}: the IR carries `{reserved}`, an attribute TVM's lowering "
                                "puts in place itself (its pipeline never gives a pass or the code generator another)",
                                case, got)
        case = dataclasses.replace(case, expected=got)
        undefined = self._undefined(case) if excused_by_ub(got) else None
        if undefined is not None:
            return self.verdict(NOT_A_BUG, f"{INVALID}: the IR has undefined behaviour its original seed lacks "
                                f"({undefined})", case, got)
        if self._fuzzed_step_failed(case, got) and not self._canonical(case, got, names, timeout):
            return self.verdict(NOT_A_BUG, f"{CONTRACT}: {got.pass_name} fails only on IR its pipeline position "
                                "never has (the canonical lowering inserted before it makes the failure disappear)",
                                case, got)
        case = self._ancestor(case, got, names, timeout)
        names = names | ir_names(case.script)
        if got.symptom is Symptom.ILLFORMED and self._pipeline_itself(case, got, names, timeout):
            after = self.tester.observe(dataclasses.replace(case, checks=dataclasses.replace(
                case.checks, illformed=False)), timeout)
            if after.symptom is Symptom.OK:
                reason = (f"{VERIFIER}: TVM's default pipeline itself produces this IR from the input, and the "
                          "build then runs correctly")
                if not self.job.settings.verifier_issues:
                    return self.verdict(NOT_A_BUG, reason, case, got)
                self.notes.append(reason)
            else:
                self.notes.append(f"the default pipeline makes this IR, and the build then fails: {after.headline()}")
        found = bisect(case, lambda c: self.tester.observe(c, timeout), names, self.job.settings.max_tests,
                       max(5.0, self.job.settings.max_seconds - (time.monotonic() - self.start)))
        if not found.complete:
            self.notes.append(f"culprit bisection stopped after {found.tests} tests (budget)")
        culprit = found.names()
        deoptimized = self._deoptimizing(case, culprit) if got.symptom is Symptom.PERF else None
        if deoptimized is not None:
            return self.verdict(NOT_A_BUG, f"{INVALID}: the fuzzed {deoptimized} is the pipeline's non-optimizing "
                                "form of that pass: slower code is what it asks for", case, got)
        if got.symptom is Symptom.MISMATCH or (got.symptom in (Symptom.EXCEPTION, Symptom.CRASH) and len(culprit) > 1):
            got, culprit = self._illformed_culprit(case, got, culprit, timeout)
        return self._bug(case, got, culprit)

    def _illformed_culprit(self, case: Case, got: Observation, culprit: list[str],
                           timeout: float) -> tuple[Observation, list[str]]:
        """A failure (wrong result, a later pass's error, a crash) where an earlier culprit pass,
        given well-formed IR, emits ill-formed IR is that ill-formedness, with that pass as its culprit
        (the more precise symptom: one root with the cases that show it directly)."""
        strict = self.tester.observe(verified_from_start(case), timeout)
        if strict.symptom is Symptom.ILLFORMED and strict.pass_name in culprit:
            self.notes.append(f"the wrong result comes with ill-formed IR after {strict.pass_name}")
            return strict, [strict.pass_name]
        return got, culprit

    def _hang(self, case: Case, got: Observation) -> Verdict:
        """A hang that outlived the generous limit alone: a bug unless even the minimal lowering is slow
        (then the IR itself asks for the work). Hangs are not bisected: every test would take the limit."""
        where = got.pass_name or ""
        program, step = label_parts(where)
        if program == MINIMAL:
            return self.verdict(NOT_A_BUG, f"{INVALID}: even the minimal lowering is this slow ({where}; the IR has "
                                f"{_lines(case)} lines): the test case asks for the work", case, got)
        asked = self._asked_for(case, got)
        if asked is not None:
            return asked
        self.notes.append(f"the {'kernel' if got.stage is Stage.RUN else 'compilation'} was slow at {where} "
                          f"(IR of {_lines(case)} lines)")
        return self._bug(case, got, [step] if where else [])

    def _asked_for(self, case: Case, hang: Observation) -> Verdict | None:
        """Not a bug when a slow compile or kernel comes from unrolling the test case asks for into
        huge IR (:mod:`seedzer.finding.lowlevel.hang_size`); checked before the long re-run alone as well."""
        asked = unrolling_asked(case) if hang.stage in (Stage.BUILD, Stage.RUN) else None
        if asked is None:
            return None
        size = call_forked(lowered_statements, case, label_parts(hang.pass_name or "")[0],
                           timeout=_timeout(self.job, hang))
        if not (size.ok and size.value > HUGE_IR_STATEMENTS):
            return None
        slow = "kernel" if hang.stage is Stage.RUN else "compile"
        return self.verdict(NOT_A_BUG, f"{INVALID}: {asked}, and the program lowers to {size.value} statements "
                            f"(from {_lines(case)} lines of IR): the slow {slow} is the work the test case asks for",
                            case, hang)

    def _bug(self, case: Case, got: Observation, culprit: list[str]) -> Verdict:
        root = root_key("lowlevel", got, culprit, ir_names(case.script)).digest()
        return self.verdict(BUG, "bug", case, got, culprit, root)

    def _not_reproduced(self, case: Case, expected: Observation, got: Observation) -> Verdict:
        if got.symptom is Symptom.INVALID:
            return self.verdict(NOT_A_BUG, f"{INVALID}: {got.message[:300]}", case, got)
        if expected.symptom is Symptom.CRASH and self.job.settings.instrumented:
            return self.verdict(NOT_A_BUG, f"{INSTRUMENTATION}: the crash does not happen without coverage "
                                f"instrumentation (observed {got.headline()[:200]})", case, got)
        return self.verdict(NOT_A_BUG, f"{NOT_REPRODUCED}: run alone it gives {got.headline()[:300]}", case, got)

    def _undefined(self, case: Case) -> str | None:
        """Undefined or NaN-producing behaviour the IR adds to its original seed (None if none, or
        when the seed is unknown): a division by a possibly-zero value, a second write of one
        location in one block, a read of uninitialized memory... (:mod:`seedzer.tir.ub`)."""
        if not self.job.ancestors or self.job.ancestors[0][1] == case.script:
            return None
        from seedzer.tir.ub import check

        try:
            seed = self.tester.runner.parse(self.job.ancestors[0][1])
            return check(self.tester.runner.parse(case.script), seed)
        except Exception as exc:  # an unparsable ancestor says nothing about the candidate
            self.notes.append(f"undefined-behaviour check skipped: {type(exc).__name__}: {exc}"[:200])
            return None

    @staticmethod
    def _deoptimizing(case: Case, culprit: list[str]) -> str | None:
        """A fuzzed culprit step that runs in its pass's minimal (non-optimizing) form, such as
        VectorizeLoop(enable_vectorize=False), as its label (None: none does)."""
        minimal = {s.name: s.minimal for s in case.steps if s.role != FUZZED and s.minimal is not None}
        return next((s.label() for s in case.steps
                     if s.role == FUZZED and s.name in culprit and minimal.get(s.name) == s.args), None)

    @staticmethod
    def _fuzzed_step_failed(case: Case, got: Observation) -> bool:
        """Whether a fuzzed step failed (a pipeline step at its own position always has the form the
        pipeline gives it: its failure is never a contract violation of its own)."""
        index = got.step_index
        return (got.stage is Stage.PASS and index is not None and index < len(case.steps)
                and case.steps[index].role == FUZZED)

    def _canonical(self, case: Case, got: Observation, names: frozenset[str], timeout: float) -> bool:
        """Whether the failure survives the canonical lowering inserted right before the failing step."""
        index = got.step_index
        assert index is not None
        lowering = canonical_lowering(slot_of_step(case.steps, index))
        if not lowering:
            return True
        steps = list(case.steps[:index]) + lowering + list(case.steps[index:])
        again = self.tester.observe(case.with_steps(steps), timeout)
        return _reproduces(dataclasses.replace(got, step_index=None), again, names)

    def _ancestor(self, case: Case, got: Observation, names: frozenset[str], timeout: float) -> Case:
        """The least mutated IR (the original seed first, then the parent) that fails the same way."""
        for label, script in self.job.ancestors:
            if not script or script == case.script:
                continue
            again = self.tester.observe(case.with_steps(case.steps, script=script), timeout)
            if _reproduces(got, again, names | ir_names(script)):
                self.notes.append(f"{label} fails the same way: filed with its IR")
                return case.with_steps(case.steps, script=script)
        return case

    def _pipeline_itself(self, case: Case, got: Observation, names: frozenset[str], timeout: float) -> bool:
        """Whether TVM's default pipeline alone makes the same ill-formed IR from the input."""
        again = self.tester.observe(verified_from_start(case.with_steps(reference_steps(case.steps))), timeout)
        return _reproduces(dataclasses.replace(got, step_index=None), again, names)


def run_gate(job: GateJob) -> Verdict:
    """The gate's entry point (a module-level function, so a forked process can run it)."""
    return Gate(job).run()
