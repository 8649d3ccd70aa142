"""What the low-level gate's rules judge: the job, the context they share, and the helpers they use.

:class:`GateJob` is one candidate as the campaign sends it; :class:`TirContext` is the state of
its judgement (the case, the failure it must show and the one it showed alone, the tester, notes so
far), which the rules of :mod:`seedzer.finding.tir.rules` read and narrow in turn.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from seedzer.execute.forked import call_forked
from seedzer.finding.gate import GateSettings, Judgement, judgement_start, reproduces
from seedzer.finding.meta import NOT_A_BUG
from seedzer.finding.tir.hang_size import IRSize, lowered_size
from seedzer.finding.verdict import INSTRUMENTATION, INVALID, NOT_REPRODUCED, Verdict
from seedzer.kernel.common import Observation, Stage, Symptom
from seedzer.kernel.messages import normalize
from seedzer.kernel.tir.case import Case

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


class Parser(Protocol):
    """Parses a TVMScript text (the tester's builder, with its parse cache)."""

    def parse(self, script: str) -> Any:
        """The PrimFunc of ``script``."""
        ...


class GateTester(Protocol):
    """What the rules need of :class:`~seedzer.finding.tir.check.Tester`."""

    tests: int
    builder: Parser

    def observe(self, case: Case, timeout: float) -> Observation:
        """What ``case`` shows when run alone within ``timeout`` seconds."""
        ...


def lines(case: Case) -> int:
    """The non-blank lines of a case's IR (its size in verdicts)."""
    return sum(1 for ln in case.script.splitlines() if ln.strip())


def reproduces_legacy(expected: Observation, got: Observation, names: frozenset[str]) -> bool:
    """Whether a program of an older Seedzer still fails as it recorded (older versions named a build
    error after the pipeline's last pass and a nested pass by its inner name: the message decides)."""
    if expected.symptom in (Symptom.EXCEPTION, Symptom.ILLFORMED):
        return got.symptom is expected.symptom and normalize(got.message, names) == normalize(expected.message, names)
    return reproduces(expected, got, names)


def forked_size(case: Case, program: str, before: str | None, timeout: float) -> IRSize | None:
    """The size of ``program`` of ``case`` lowered, or of its IR entering its first step named
    ``before`` (:func:`~seedzer.finding.tir.hang_size.lowered_size`), measured in a forked child;
    None when the child fails or times out."""
    size = call_forked(lowered_size, case, program, before, timeout=timeout)
    return size.value if size.ok and isinstance(size.value, IRSize) else None


def check_ub(mutant: Any, seed: Any) -> str | None:
    """:func:`seedzer.tir.ub.check` (imported on first use: it imports TVM)."""
    from seedzer.tir.ub import check

    return check(mutant, seed)


ShrinkStep = Callable[[str, Callable[[str], bool], Callable[[], bool]], "str | None"]
"""One greedy shrink step of a TVMScript text keeping a test true (None: no smaller one keeps it)."""


@dataclass
class TirContext(Judgement):
    """One candidate's judgement so far, shared by the gate's rules (see :mod:`seedzer.finding.tir.gate`).

    ``expected`` is the failure to confirm, ``got`` the one the case showed alone (None until a
    rule ran it); ``case`` is the case judged (narrowed by the rules: the re-observed failure as its
    expectation, then the least mutated ancestor's IR), ``names`` the IR names its messages are
    normalized with. ``measure`` and ``ub_check`` are the forked hang-size measure and the undefined-
    behaviour analysis (injectable, so a rule can be judged without TVM).
    """

    job: GateJob
    tester: GateTester
    case: Case
    expected: Observation
    names: frozenset[str]
    timeout: float
    got: Observation | None = None
    culprit: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    start: float = field(default_factory=time.monotonic)
    measure: Callable[[Case, str, str | None, float], IRSize | None] = forked_size
    ub_check: Callable[[Any, Any], str | None] = check_ub
    witnessed: bool = False
    """The case is a witness's (:func:`seedzer.finding.tir.rules.witnessed`): a bug is filed through it."""
    shrink_step: ShrinkStep | None = None
    """Shrinks IR one step (None: :func:`seedzer.finding.shrink_ir.shrink_step`)."""
    make_witness_ir: Callable[[Case, int, float], Any] | None = None
    """Makes the IR before a step (None: a forked child, :func:`seedzer.finding.tir.witness.ir_before`)."""

    @staticmethod
    def of(job: GateJob, tester: GateTester) -> TirContext:
        """The context of a new judgement of ``job``, its tests run by ``tester``."""
        return TirContext(job, tester, job.case, *judgement_start(job))

    def ub_text(self, mutant: str, seed: str) -> str | None:
        """:attr:`ub_check` on two TVMScript texts, parsed by the tester's builder (a text that does not
        parse is a reason, never a pass)."""
        try:
            return self.ub_check(self.tester.builder.parse(mutant), self.tester.builder.parse(seed))
        except Exception as exc:  # TVMScript the parser refuses
            return f"ub: cannot parse: {type(exc).__name__}: {(str(exc).splitlines() or [''])[0][:200]}"

    def observe(self, case: Case, timeout: float | None = None) -> Observation:
        """What ``case`` shows alone within ``timeout`` (default: the judgement's limit)."""
        return self.tester.observe(case, self.timeout if timeout is None else timeout)

    def verdict(self, verdict: str, reason: str, case: Case, observation: Observation,
                culprit: list[str] | None = None, root: str | None = None) -> Verdict:
        """A verdict with the judgement's cost so far and its notes."""
        return Verdict(self.job.signature, verdict, reason, case, observation, culprit or [], root,
                       self.tester.tests, time.monotonic() - self.start, self.notes)

    def not_reproduced(self, case: Case, expected: Observation, got: Observation) -> Verdict:
        """Not a bug: ``case`` run alone gave ``got``, not ``expected`` (an invalid test case; a crash
        only coverage instrumentation shows; else not reproduced)."""
        if got.symptom is Symptom.INVALID:
            return self.verdict(NOT_A_BUG, f"{INVALID}: {got.message[:300]}", case, got)
        if expected.symptom is Symptom.CRASH and self.settings.instrumented:
            return self.verdict(NOT_A_BUG, f"{INSTRUMENTATION}: the crash does not happen without coverage "
                                f"instrumentation (observed {got.headline()[:200]})", case, got)
        return self.verdict(NOT_A_BUG, f"{NOT_REPRODUCED}: run alone it gives {got.headline()[:300]}", case, got)
