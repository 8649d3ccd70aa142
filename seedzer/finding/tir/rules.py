"""The low-level gate's rules, one class per check (:data:`seedzer.finding.tir.gate.RULES` orders them).

Each rule judges a :class:`~seedzer.finding.tir.context.TirContext`: a verdict, or None
to let the next rule judge (after narrowing the context, for some). Their order matters: a rule
reads what the rules before it established (the failure the case showed alone, the case it now
expects, the least mutated IR that fails the same way).
"""

from __future__ import annotations

import dataclasses
import time

from seedzer.finding.gate import timeout_for
from seedzer.finding.meta import BUG, NOT_A_BUG
from seedzer.finding.tir.at_fault import code_at_fault
from seedzer.finding.tir.context import (
    TirContext,
    excused_by_ub,
    lines,
    reproduces,
    reproduces_legacy,
)
from seedzer.finding.tir.culprit import bisect, verified_from_start
from seedzer.finding.tir.folder import SALT, WITNESS_RULE
from seedzer.finding.tir.hang_size import unrolling_asked
from seedzer.finding.tir.witness import WitnessSearch
from seedzer.finding.verdict import CONTRACT, INVALID, NOT_REPRODUCED, PRECONDITION, VERIFIER, AtFault, Verdict
from seedzer.kernel.common import MINIMAL, Observation, Stage, Symptom, label_parts
from seedzer.kernel.messages import ir_names
from seedzer.kernel.tir.case import FUZZED, Case, reference_steps
from seedzer.oracles.registry import judge, make_oracles
from seedzer.oracles.signature import component_key, root_key
from seedzer.passes.tir.contracts import canonical_lowering, slot_of_step

PIPELINE_SHARE = 0.5
"""A hang is the fuzzed sequence's doing only when TVM's default pipeline on the same program finishes
within this share of the limit the hang outlived: slower, the program itself is that slow (why this
value: docs/measurements.md, 'Filing gate')."""


def _bug(context: TirContext, case: Case, got: Observation, culprit: list[str]) -> Verdict:
    root = root_key(SALT, got, culprit, ir_names(case.script)).digest()
    verdict = context.verdict(BUG, "bug", case, got, culprit, root)
    verdict.at_fault = AtFault(" + ".join(culprit), f"the gate's {'culprit' if len(culprit) > 1 else 'failing'} "
                               "step (not localized further)")
    if context.witnessed:  # decided by the rules after the witness's: filed through it
        verdict.rule = WITNESS_RULE
    return verdict


def _asked_for(context: TirContext, case: Case, hang: Observation) -> Verdict | None:
    """Not a bug when a slow pass, compile or kernel comes from unrolling the test case asks for into
    huge IR (:mod:`seedzer.finding.tir.hang_size`): for a hang in a pass, the IR entering that
    pass; else the IR the program generates code for."""
    asked = unrolling_asked(case) if hang.stage in (Stage.PASS, Stage.BUILD, Stage.RUN) else None
    if asked is None:
        return None
    program, step = label_parts(hang.pass_name or "")
    before = step if hang.stage is Stage.PASS and step else None
    size = context.measure(case, program, before, timeout_for(context.settings, hang))
    if size is None or not size.huge:
        return None
    what = f"the IR entering {step}" if before else "the lowered program"
    slow = f"{before} pass" if before else "kernel" if hang.stage is Stage.RUN else "compile"
    return context.verdict(NOT_A_BUG, f"{INVALID}: {asked}, and {what} has {size.describe()} (from {lines(case)} "
                           f"lines of IR): the slow {slow} is the work the test case asks for", case, hang)


def _pipeline_slow_too(context: TirContext, case: Case, hang: Observation) -> Verdict | None:
    """Not a bug when TVM's default pipeline on the same program (the case without its fuzzed steps)
    does not finish within :data:`PIPELINE_SHARE` of the limit the hang outlived: the time is the
    program's, not the fuzzed sequence's. A case without fuzzed steps is that pipeline: not judged."""
    steps = reference_steps(case.steps)
    if len(steps) == len(case.steps):
        return None
    budget = PIPELINE_SHARE * context.timeout
    start = time.monotonic()
    pipeline = context.observe(case.with_steps(steps), budget)
    if pipeline.symptom is not Symptom.HANG:
        context.notes.append(f"TVM's default pipeline on the same program finishes in {time.monotonic() - start:.0f} s "
                             f"(limit {budget:.0f} s): {pipeline.headline()[:200]}")
        return None
    return context.verdict(NOT_A_BUG, f"{INVALID}: the program itself is slow: TVM's default pipeline on it takes over "
                           f"{budget:.0f} s too (fuzzed: over {context.timeout:.0f} s; IR of {lines(case)} lines, "
                           f"stopped at {pipeline.where()}): the time is the program's, not the fuzzed passes'",
                           case, hang)


def witnessed(context: TirContext, program: Case, failure: Observation, dismissal: Verdict) -> Verdict | None:
    """A failure reached only outside the pass contracts: when its witness (the IR just before the
    failing pass, run as a user program through TVM's own pipeline) fails the same way, the context
    becomes the witness's and the rules after this one judge it (None); else ``dismissal``, saying
    which check the witness failed (:mod:`seedzer.finding.tir.witness`)."""
    if not context.settings.witnesses:
        return dismissal
    seed = context.job.ancestors[0][1] if context.job.ancestors else None
    search = WitnessSearch(context.observe, context.ub_text, context.timeout, context.make_witness_ir)
    found = search.find(program, failure, seed, excused_by_ub(failure), context.names)
    if found.case is None or found.observation is None:
        dismissal.reason = f"{dismissal.reason}; no witness: {found.why_not}"
        return dismissal
    context.notes.append(f"{dismissal.reason}; but its witness, the IR just before {found.observation.pass_name} "
                         "run as a user program through TVM's own pipeline, fails the same way: judged from the "
                         "witness")
    context.case, context.expected = found.case, found.observation
    context.got, context.witnessed = found.observation, True
    context.names = context.names | ir_names(found.case.script)
    return None


class ExpectsFailure:
    """Not a bug (not reproduced) when the case expects no failure at all."""

    name = "expects-failure"

    def judge(self, context: TirContext) -> Verdict | None:
        expected = context.expected
        if expected.symptom.is_bug:
            return None
        return context.verdict(NOT_A_BUG, f"{NOT_REPRODUCED}: the case expects no failure ({expected.headline()})",
                               context.case, expected)


class LegacyProgram:
    """A finding of an older Seedzer: its own program (passes outside their contracts) must still fail
    as recorded; then the case, within the contracts, must fail at all, and that failure is the one
    to confirm (its observation is the case's re-run alone)."""

    name = "legacy-program"

    def judge(self, context: TirContext) -> Verdict | None:
        program, expected = context.job.legacy, context.expected
        if program is None:
            return None
        illformed = expected.symptom is Symptom.ILLFORMED
        legacy = dataclasses.replace(program, checks=dataclasses.replace(
            program.checks, illformed=illformed, pipeline_illformed=illformed))
        old = context.observe(legacy)
        if not reproduces_legacy(expected, old, context.names):
            return context.not_reproduced(legacy, expected, old)
        got = context.observe(context.case)
        if got.symptom is Symptom.OK:
            return witnessed(context, legacy, old, context.verdict(
                NOT_A_BUG, f"{CONTRACT}: it happens only when passes run outside their contracts (within them "
                "every check passes)", context.case, got))
        if got.symptom.is_bug and not reproduces(old, got, context.names):
            context.notes.append(f"within the pass contracts it shows as: {got.headline()[:200]}")
        context.expected = context.got = got
        return None


class Alone:
    """The case runs again alone and must fail the same way (a hang must outlive a generous limit; a
    crash must die by a signal, never SIGKILL). A slow compile or kernel the test case asks for is
    answered before the long re-run; ill-formed IR that now shows later (a later step's error, a wrong
    result) is the same defect when the IR verified right after its step is ill-formed the same way
    (same_defect, as repro.py judges), and a wrong result is judged as that wrong result."""

    name = "alone"

    def judge(self, context: TirContext) -> Verdict | None:
        case, expected = context.case, context.expected
        if context.got is None:
            # a slow pass on huge IR is confirmed first: such IR may still pass within the limit
            compiled = expected.symptom is Symptom.HANG and expected.stage in (Stage.BUILD, Stage.RUN)
            early = _asked_for(context, case, expected) if compiled else None
            if early is not None:  # known without waiting out the generous limit
                return early
            context.got = context.observe(case)
        got = context.got
        if reproduces(expected, got, context.names):
            return None
        from seedzer.kernel.tir.observe import same_defect  # imports TVM: only the gate's process runs this

        if same_defect(case, expected, got, context.observe, context.names):  # as repro.py and the reducer judge
            context.notes.append(f"run alone the ill-formed IR shows later as: {got.headline()[:200]}; verified "
                                 f"right after {expected.pass_name}, its output is ill-formed the same way")
            return None
        if not (expected.symptom is Symptom.ILLFORMED and got.symptom is Symptom.MISMATCH):
            return context.not_reproduced(case, expected, got)
        # the verifier no longer looks where it did (a pipeline step before any fuzzed one):
        # the wrong result is what the build of that IR gives, judged as such
        context.notes.append(f"run alone the ill-formed IR shows as: {got.headline()[:200]}")
        return None


class Hang:
    """A hang that outlived the generous limit alone: a bug only when TVM is at fault, not when even
    the minimal lowering is slow, the test case asks for the work (huge unrolled IR), or TVM's default
    pipeline on the same program is slow too (:data:`PIPELINE_SHARE`). Hangs are not bisected: every
    test would take the limit."""

    name = "hang"

    def judge(self, context: TirContext) -> Verdict | None:
        case, got = context.case, context.seen
        if got.symptom is not Symptom.HANG:
            return None
        where = got.pass_name or ""
        program, step = label_parts(where)
        if program == MINIMAL:
            return context.verdict(NOT_A_BUG, f"{INVALID}: even the minimal lowering is this slow ({where}; the IR "
                                   f"has {lines(case)} lines): the test case asks for the work", case, got)
        dismissed = _asked_for(context, case, got) or _pipeline_slow_too(context, case, got)
        if dismissed is not None:
            return dismissed
        context.notes.append(f"the {'kernel' if got.stage is Stage.RUN else 'compilation'} was slow at {where} "
                             f"(IR of {lines(case)} lines)")
        return _bug(context, case, got, [step] if where else [])


class Precondition:
    """The failure goes through the enabled oracles: a pass stating a precondition is an invalid input."""

    name = "precondition"

    def judge(self, context: TirContext) -> Verdict | None:
        judged = judge(make_oracles(context.settings.oracles), context.seen)
        if judged.symptom is not Symptom.INVALID:
            return None
        return context.verdict(NOT_A_BUG, f"{PRECONDITION}: {judged.message[:300]}", context.case, judged)


class Contract:
    """A fuzzed step's failure that disappears once the canonical lowering is inserted right before it:
    the pass was given IR in a form TVM's pipeline never gives it (a pipeline step at its own
    position always has the form the pipeline gives it)."""

    name = "contract"

    def judge(self, context: TirContext) -> Verdict | None:
        case, got = context.case, context.seen
        index = got.step_index
        fuzzed = (got.stage is Stage.PASS and index is not None and index < len(case.steps)
                  and case.steps[index].role == FUZZED)
        if not fuzzed or index is None:
            return None
        lowering = canonical_lowering(slot_of_step(case.steps, index))
        if not lowering:
            return None
        again = context.observe(case.with_steps(list(case.steps[:index]) + lowering + list(case.steps[index:])))
        if reproduces(dataclasses.replace(got, step_index=None), again, context.names):
            return None
        return witnessed(context, case, got, context.verdict(
            NOT_A_BUG, f"{CONTRACT}: {got.pass_name} fails only on IR its pipeline position never has (the "
            "canonical lowering inserted before it makes the failure disappear)", case, got))


class Ancestor:
    """Narrows the case to the least mutated IR (the original seed first, then the parent) that fails
    the same way with the same steps; never answers."""

    name = "ancestor"

    def judge(self, context: TirContext) -> Verdict | None:
        case, got = context.case, context.seen
        for label, script in context.job.ancestors:
            if not script or script == case.script:
                continue
            again = context.observe(case.with_steps(case.steps, script=script))
            if reproduces(got, again, context.names | ir_names(script)):
                context.notes.append(f"{label} fails the same way: filed with its IR")
                context.case = case.with_steps(case.steps, script=script)
                break
        context.names = context.names | ir_names(context.case.script)
        return None


class Verifier:
    """Ill-formed IR that TVM's default pipeline itself makes from the input, whose build then runs
    correctly, is a verifier issue: not a bug unless ``verifier_issues`` is on (then a note)."""

    name = "verifier"

    def judge(self, context: TirContext) -> Verdict | None:
        case, got = context.case, context.seen
        if got.symptom is not Symptom.ILLFORMED:
            return None
        pipeline = context.observe(verified_from_start(case.with_steps(reference_steps(case.steps))))
        if not reproduces(dataclasses.replace(got, step_index=None), pipeline, context.names):
            return None
        after = context.observe(dataclasses.replace(case, checks=dataclasses.replace(case.checks, illformed=False)))
        if after.symptom is not Symptom.OK:
            context.notes.append(f"the default pipeline makes this IR, and the build then fails: {after.headline()}")
            return None
        reason = (f"{VERIFIER}: TVM's default pipeline itself produces this IR from the input, and the build then "
                  "runs correctly")
        if not context.settings.verifier_issues:
            return context.verdict(NOT_A_BUG, reason, case, got)
        context.notes.append(reason)
        return None


class Culprit:
    """Bisection over the fuzzed and pipeline passes (:mod:`seedzer.finding.tir.culprit`) names
    the passes the failure needs; the root signature keys on them and on the essence of the symptom.
    A slowdown whose fuzzed culprit is its pass's non-optimizing form is asked for (invalid); a wrong
    result, or a later pass's failure, that comes with ill-formed IR out of a culprit pass given
    well-formed IR is filed as that ill-formedness. Always answers."""

    name = "culprit"

    def judge(self, context: TirContext) -> Verdict:
        case, got, settings = context.case, context.seen, context.settings
        found = bisect(case, context.observe, context.names, settings.max_tests,
                       max(5.0, settings.max_seconds - (time.monotonic() - context.start)))
        if not found.complete:
            context.notes.append(f"culprit bisection stopped after {found.tests} tests (budget)")
        culprit = context.culprit = found.names()
        deoptimized = self.deoptimizing(case, culprit) if got.symptom is Symptom.PERF else None
        if deoptimized is not None:
            return context.verdict(NOT_A_BUG, f"{INVALID}: the fuzzed {deoptimized} is the pipeline's non-optimizing "
                                   "form of that pass: slower code is what it asks for", case, got)
        if got.symptom is Symptom.MISMATCH or (got.symptom in (Symptom.EXCEPTION, Symptom.CRASH) and len(culprit) > 1):
            strict = context.observe(verified_from_start(case))
            culprit_pass = strict.pass_name
            if strict.symptom is Symptom.ILLFORMED and culprit_pass is not None and culprit_pass in culprit:
                context.notes.append(f"the wrong result comes with ill-formed IR after {culprit_pass}")
                got, culprit = strict, [culprit_pass]
                context.culprit = culprit
        fault = code_at_fault(context, case, got, found)
        if fault is None:
            fault = AtFault(" + ".join(culprit) or label_parts(got.pass_name or "")[1] or "build",
                            "culprit bisection: the passes the failure needs (the code at fault was not decided)")
        elif [fault.code] != culprit:
            context.notes.append(f"the code at fault is {fault.code} (the failure needs "
                                 f"{' + '.join(culprit) or 'no optional pass'}): the root is named after it")
            culprit = context.culprit = [fault.code]
        verdict = _bug(context, case, got, culprit)
        verdict.at_fault = fault
        if fault.shared:
            verdict.root = component_key(got, fault.code, ir_names(case.script)).digest()
        return verdict

    @staticmethod
    def deoptimizing(case: Case, culprit: list[str]) -> str | None:
        """A fuzzed culprit step that runs in its pass's minimal (non-optimizing) form, such as
        VectorizeLoop(enable_vectorize=False), as its label (None: none does)."""
        minimal = {s.name: s.minimal for s in case.steps if s.role != FUZZED and s.minimal is not None}
        return next((s.label() for s in case.steps
                     if s.role == FUZZED and s.name in culprit and minimal.get(s.name) == s.args), None)
