"""The schedule gate's rules, one class per check (:data:`seedzer.finding.sched.gate.RULES` orders them), and
the context they share.

Each rule judges a :class:`SchedContext`: a verdict, or None to let the next rule judge (after narrowing
the context, for some). Every TVM run goes through the context's ``observe`` (a forked child in the gate,
a fake in the unit tests), so each rule can be judged without TVM.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from seedzer.finding.gate import GateSettings, Judgement, judgement_start, reproduces
from seedzer.finding.meta import BUG, NOT_A_BUG
from seedzer.finding.sched.at_fault import FAULT_RULES, SchedFault
from seedzer.finding.sched.folder import SALT
from seedzer.finding.sched.reduce import cut_trace, primitive_indices, up_to_failure
from seedzer.finding.verdict import INSTRUMENTATION, INVALID, NOT_REPRODUCED, PRECONDITION, Verdict
from seedzer.kernel.common import Observation, Stage, Symptom
from seedzer.kernel.messages import ir_names, key_line
from seedzer.kernel.sched.apply import refused_message
from seedzer.kernel.sched.case import SchedCase
from seedzer.kernel.sched.trace import is_unsafe, parse_trace, transforming
from seedzer.kernel.tir.case import Step, minimal_steps
from seedzer.oracles.registry import judge, make_oracles
from seedzer.oracles.signature import component_key, root_key
from seedzer.passes.tir.contracts import pipeline_steps

UNROLLING = ("Unroll", "pragma_auto_unroll_max_step", "meta_schedule.unroll_explicit", "meta_schedule.unroll_implicit")
"""What in a trace asks the build to unroll loops (a slow build of the unrolled code is that work)."""
SCHEDULE_CONTRACTS = ("Nested parallel loop is not supported", "Order of the software pipeline is not defined",
                      "parsed.unroll_explicit == -1 || parsed.unroll_implicit == -1")
"""What TVM's build (or MetaSchedule's postprocessor) says when a schedule asks for what it does not support
(:class:`ScheduleContract`): a block annotated to unroll both explicitly and implicitly is one MetaSchedule's
rules never make (RewriteParallelVectorizeUnroll checks one of them is unset)."""
BUILT = (Stage.BUILD, Stage.RUN, Stage.COMPARE)
"""Stages after the schedule: the build of the scheduled function, its run, the comparison."""


@dataclass
class SchedGateJob:
    """One candidate: its signature, its case (``expected`` is what the campaign observed) and the gate's
    settings."""

    signature: str
    case: SchedCase
    settings: GateSettings = field(default_factory=GateSettings)


def check_sentence(message: str) -> str:
    """A failed check's message cut after the first sentence of its explanation: TVM goes on with the
    offending IR (``Check failed: seq.size() != 1 (1 vs. 1) : A SeqStmt of length 1 is prohibited.  Use the
    node for ax0 in range(...)``), which varies with the input a bug is reached by, not with the bug. An error
    without a failed check is cut after its first sentence too (``Invalid use of undefined variable ax0 at
    <path>.  While this variable was previously defined at <path>, ...``: the second sentence is sometimes
    there, sometimes not, for one defect)."""
    at = message.find("Check failed")
    if at < 0:  # an error without a check: its first sentence (the verifier goes on with where the name was defined)
        line = key_line(message)
        end = line.find(". ")
        return (line[:end] if end >= 0 else line).rstrip(". ")
    explained = message.find(" : ", at)
    end = message.find(". ", explained) if explained >= 0 else -1
    return message[:end + 1] if end >= 0 else message


ObserveFn = Callable[[SchedCase, float], Observation]
"""Runs a case alone within a time limit (in a forked child) and returns what it showed."""


@dataclass
class SchedContext(Judgement):
    """One candidate's judgement so far, shared by the gate's rules.

    ``expected`` is the failure to confirm, ``got`` the one the case showed alone (None until a rule ran
    it); ``case`` is the case judged (narrowed: the trace cut to what the failure needs); ``lowering`` the
    pipeline pass found failing on the scheduled IR (None: none); ``tests`` counts the runs.
    """

    job: SchedGateJob
    run: ObserveFn
    case: SchedCase
    expected: Observation
    names: frozenset[str]
    timeout: float
    got: Observation | None = None
    lowering: str | None = None
    notes: list[str] = field(default_factory=list)
    tests: int = 0
    start: float = field(default_factory=time.monotonic)

    @staticmethod
    def of(job: SchedGateJob, run: ObserveFn) -> SchedContext:
        """The context of a new judgement of ``job``, its tests run by ``run``."""
        return SchedContext(job, run, job.case, *judgement_start(job))

    def observe(self, case: SchedCase, timeout: float | None = None) -> Observation:
        """What ``case`` shows alone within ``timeout`` (default: the judgement's limit)."""
        self.tests += 1
        return self.run(case, self.timeout if timeout is None else timeout)

    def holds(self, case: SchedCase) -> bool:
        """Whether ``case`` still fails the way the candidate did alone."""
        return reproduces(self.seen, self.observe(case), self.names | ir_names(case.script))

    def out_of_budget(self) -> bool:
        """Whether the gate spent its test or time budget (a cut stops; the judgement goes on)."""
        return self.tests >= self.settings.max_tests or time.monotonic() - self.start > self.settings.max_seconds

    def verdict(self, verdict: str, reason: str, observation: Observation, culprit: list[str] | None = None,
                root: str | None = None) -> Verdict:
        """A verdict on the case judged, with the judgement's cost so far and its notes."""
        return Verdict(self.job.signature, verdict, reason, self.case, observation, culprit or [], root, self.tests,
                       time.monotonic() - self.start, self.notes)


class ExpectsFailure:
    """Not a bug (not reproduced) when the case expects no failure at all."""

    name = "expects-failure"

    def judge(self, context: SchedContext) -> Verdict | None:
        if context.expected.symptom.is_bug:
            return None
        return context.verdict(NOT_A_BUG, f"{NOT_REPRODUCED}: the case expects no failure "
                               f"({context.expected.headline()})", context.expected)


class Alone:
    """The case runs again alone and must fail the same way (a hang must outlive a generous limit; a crash
    must die by a signal at the same step, never SIGKILL)."""

    name = "alone"

    def judge(self, context: SchedContext) -> Verdict | None:
        got = context.got = context.observe(context.case)
        if reproduces(context.expected, got, context.names):
            return None
        if got.symptom is Symptom.INVALID:
            return context.verdict(NOT_A_BUG, f"{INVALID}: {got.message[:300]}", got)
        if context.expected.symptom is Symptom.CRASH and context.settings.instrumented:
            return context.verdict(NOT_A_BUG, f"{INSTRUMENTATION}: the crash does not happen without coverage "
                                   f"instrumentation (observed {got.headline()[:200]})", got)
        return context.verdict(NOT_A_BUG, f"{NOT_REPRODUCED}: run alone it gives {got.headline()[:300]}", got)


class Refusal:
    """A primitive or a postprocessor refusing its input (TVM's ``ScheduleError``, or an argument check's
    ``ValueError``, ``TypeError`` or ``IndexError``) is its contract, never a bug."""

    name = "refusal"

    def judge(self, context: SchedContext) -> Verdict | None:
        got = context.seen
        refused = got.symptom is Symptom.EXCEPTION and got.stage is Stage.SCHEDULE \
            and refused_message(got.message)
        if not refused:
            return None
        return context.verdict(NOT_A_BUG, f"{INVALID}: {got.pass_name} refused its input ({got.message[:200]})", got)


class Unsafe:
    """A failure after an unsafe primitive (``unsafe_set_dtype``, ``unsafe_hide_buffer_access``,
    ``annotate_buffer_access``, a ``split`` without predication): by its documented contract the IR may then
    state what is not so, and what follows (a crash included) is not TVM's fault."""

    name = "unsafe"

    def judge(self, context: SchedContext) -> Verdict | None:
        got = context.seen
        instructions = parse_trace(context.case.trace)
        last = got.step_index if got.stage is Stage.SCHEDULE and got.step_index is not None else len(instructions)
        unsafe = next((i for i in instructions[:last] if is_unsafe(i.kind, i.attrs)), None)
        if unsafe is None:
            return None
        return context.verdict(NOT_A_BUG, f"{INVALID}: after the unsafe primitive {unsafe.label()[:120]}, the IR may "
                               "state what is not so: what follows is not TVM's fault", got)


class Precondition:
    """The failure goes through the enabled oracles: a pass stating a precondition is an invalid input."""

    name = "precondition"

    def judge(self, context: SchedContext) -> Verdict | None:
        judged = judge(make_oracles(context.settings.oracles), context.seen)
        if judged.symptom is not Symptom.INVALID:
            return None
        return context.verdict(NOT_A_BUG, f"{PRECONDITION}: {judged.message[:300]}", judged)


class ScheduleContract:
    """A build that refuses what the schedule asked for, in so many words: a parallel loop inside another
    (LLVM's code generator: "Nested parallel loop is not supported"), a software pipeline annotated with
    its stages and not its order ("Order of the software pipeline is not defined"); or a postprocessor's check
    that the trace annotated a block both ways MetaSchedule's rules choose between (explicit and implicit
    unrolling). The schedule broke the contract of the annotation or primitive it used: an invalid input,
    never a bug."""

    name = "schedule-contract"

    def judge(self, context: SchedContext) -> Verdict | None:
        got = context.seen
        if got.symptom is not Symptom.EXCEPTION or got.stage not in (*BUILT, Stage.SCHEDULE):
            return None
        found = next((c for c in SCHEDULE_CONTRACTS if c in got.message), None)
        if found is None:
            return None
        return context.verdict(NOT_A_BUG, f"{INVALID}: the build refuses what the schedule asked for ({found})", got)


class Hang:
    """A hang in the build or run of a schedule that asks to unroll loops (``unroll``, an unroll annotation)
    is the work it asks for; any other hang is a bug at the step it hung at (not cut: every test would
    take the limit)."""

    name = "hang"

    def judge(self, context: SchedContext) -> Verdict | None:
        got = context.seen
        if got.symptom is not Symptom.HANG:
            return None
        instructions = parse_trace(context.case.trace)
        asked = next((i for i in instructions if i.kind == "Unroll" or (i.kind == "Annotate" and i.attrs[:1]
                                                                        and i.attrs[0] in UNROLLING)), None)
        if got.stage in BUILT and asked is not None:
            return context.verdict(NOT_A_BUG, f"{INVALID}: the schedule asks to unroll ({asked.label()[:100]}): the "
                                   f"slow {got.stage.value if got.stage else 'build'} is that work", got)
        return None


class Trace:
    """Cuts the trace to what the failure needs: the instructions after the one it happened in, the
    postprocessors when it does not need them, then ddmin over the primitives (dropping one drops what uses
    its results). Never answers."""

    name = "trace"

    def judge(self, context: SchedContext) -> Verdict | None:
        got = context.seen
        if got.symptom is Symptom.HANG:
            return None
        case = up_to_failure(context.case, got)
        if case != context.case and context.holds(case):
            context.case = case
        before = len(primitive_indices(context.case))
        context.case = cut_trace(context.case, context.holds, context.out_of_budget)
        after = transforming(parse_trace(context.case.trace))
        context.notes.append(f"the trace's primitives cut from {before} to {len(after)}: {', '.join(after) or 'none'}"
                             + (" (budget ran out)" if context.out_of_budget() else ""))
        again = context.observe(context.case)
        context.got = again if reproduces(got, again, context.names) else got  # a flaky cut: as first seen
        return None


def _with_steps(case: SchedCase, steps: list[Step]) -> SchedCase:
    return dataclasses.replace(case, steps=tuple(steps))


class Lowering:
    """A failure of the scheduled function's build (its IR passed TIR's verifier after every primitive)
    is localized in TVM's default pipeline, run as flat steps: the pass it fails in; a wrong result (or a
    run's failure) that the minimal lowering does not show is the optional pass whose optimizing form it
    needs, the last in pipeline order when it needs several (the ones before only enable it: buffers
    compacted into a vectorized loop that VectorizeLoop then does not widen per lane). Never answers (the
    fault rules name the code)."""

    name = "lowering"

    def judge(self, context: SchedContext) -> Verdict | None:
        got = context.seen
        if got.stage not in BUILT or got.symptom is Symptom.HANG:
            return None
        steps = pipeline_steps()
        if got.stage is Stage.BUILD and got.symptom in (Symptom.EXCEPTION, Symptom.CRASH):
            flat = context.observe(_with_steps(context.case, steps))
            if flat.symptom is got.symptom and flat.stage is Stage.PASS and flat.pass_name:
                context.lowering = flat.pass_name
                context.notes.append(f"run as flat steps, TVM's default pipeline fails in {flat.pass_name}: "
                                     f"{flat.headline()[:160]}")
                return None
        if context.observe(_with_steps(context.case, minimal_steps(steps))).symptom is got.symptom:
            return None  # the minimal lowering shows it too: no optional pass is needed
        optional = [i for i, s in enumerate(steps) if s.optional]
        needed = []
        for index in optional:
            minimized = steps[index].minimized()
            without = [s for i, s in enumerate(steps) if i != index] if minimized is None else \
                [minimized if i == index else s for i, s in enumerate(steps)]
            if context.observe(_with_steps(context.case, without)).symptom is not got.symptom:
                needed.append(steps[index].name)
        if len(needed) == 1:
            context.lowering = needed[0]
            context.notes.append(f"the failure needs {needed[0]} of TVM's default pipeline (the minimal lowering, and "
                                 f"the pipeline without it, do not show it)")
        elif needed:  # the passes before the last only enable it (as the graph kind's last-pass rule)
            context.lowering = needed[-1]
            context.notes.append(f"the failure needs {' + '.join(needed)} of TVM's default pipeline: the last, "
                                 f"{needed[-1]}, is at fault (the ones before only made the IR it mishandles)")
        return None


class Culprit:
    """A bug: its code at fault is what the kind's fault rules name
    (:data:`~seedzer.finding.sched.at_fault.FAULT_RULES`: the primitive's implementation its frames name, a
    postprocessor, the pipeline pass that fails on the scheduled IR, a shared component, else the primitive
    it failed in or the last one the trace needs). The root keys on that code and the essence of the
    symptom. Always answers."""

    name = "culprit"

    def judge(self, context: SchedContext) -> Verdict:
        got = context.seen
        primitives = tuple(transforming(parse_trace(context.case.trace)))
        fault = FAULT_RULES.decide(SchedFault(got, primitives, context.case.postprocs, context.lowering,
                                              context.expected))
        assert fault is not None, "the schedule kind's last fault rule always answers"
        # a one-letter IR name (a buffer A) would also turn TVM's own words into ID ("A SeqStmt of length 1")
        names = frozenset(n for n in context.names | ir_names(context.case.script) if len(n) > 1)
        keyed = dataclasses.replace(got, message=check_sentence(got.message))
        key = component_key(keyed, fault.code, names) if fault.shared else root_key(SALT, keyed, [fault.code], names)
        verdict = context.verdict(BUG, "bug", got, [fault.code], key.digest())
        verdict.at_fault = fault
        return verdict
