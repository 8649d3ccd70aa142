"""The filing gate as data: an ordered tuple of named rules, the first answer wins.

A kind's gate (:mod:`seedzer.finding.tir.gate`, :mod:`seedzer.finding.load.gate`) is a tuple
of :class:`Rule` objects over a context of its own; :func:`first_answer` asks each in turn and
returns the first :class:`~seedzer.finding.verdict.Verdict`, marked with the rule that gave it. A
rule that only narrows the case (e.g. to the least mutated ancestor that fails the same way)
updates the context and answers None. The last rule of every gate always answers. LibAFL's
``Feedback`` / ``CombinedFeedback`` is the model.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Generic, Protocol, TypeVar

from seedzer.config import Config, stage_limits
from seedzer.finding.meta import NOT_A_BUG
from seedzer.finding.verdict import INVALID, Verdict
from seedzer.kernel.common import Observation, Symptom
from seedzer.kernel.messages import ir_names, same_failure

INSTRUMENTED_BACKENDS = frozenset({"breakpoints"})
"""Coverage backends that patch TVM's code: a crash may be theirs rather than TVM's."""

C = TypeVar("C", contravariant=True)
C2 = TypeVar("C2")


@dataclass
class GateSettings:
    """Limits of the gate: a hang must outlive ``hang_factor`` times its stage limit alone; at most
    ``max_tests`` tests and ``max_seconds`` for the culprit bisection; ``job_seconds`` for a whole run."""

    timeouts: dict[str, float] = field(default_factory=stage_limits)
    hang_factor: float = 3.0
    max_tests: int = 40
    max_seconds: float = 90.0
    job_seconds: float = 600.0
    """The wall-clock limit of one gate run in a campaign (its culprit bisection has ``max_seconds``; a
    hang's re-run alone ``hang_factor`` times its stage limit): a run over it is killed and its
    candidate stays pending, judged again on ``--resume`` or by ``seedzer recheck``."""
    verifier_issues: bool = False
    instrumented: bool = False
    witnesses: bool = True
    """File a failure reached only outside the pass contracts through its witness (a user program)."""
    oracles: tuple[str, ...] = ("crash", "hang", "illformed", "exception", "mismatch", "special-values", "perf")


def gate_settings(cfg: Config) -> GateSettings:
    """The gate's settings for a campaign's configuration (stage limits, oracles, instrumentation)."""
    return GateSettings(timeouts=stage_limits(cfg.timeouts), instrumented=cfg.fuzz.coverage in INSTRUMENTED_BACKENDS,
                        verifier_issues=cfg.oracles.verifier_issues, witnesses=cfg.oracles.witnesses,
                        oracles=tuple(cfg.oracles.enabled))


def timeout_for(settings: GateSettings, observation: Observation) -> float:
    """The limit of a test re-running a failure: a hang ``hang_factor`` times its stage's limit, any
    other failure twice the limits of all stages together."""
    limits = settings.timeouts
    if observation.symptom is Symptom.HANG:
        stage = observation.stage.value if observation.stage else "build"
        return settings.hang_factor * float(limits.get(stage, 60.0))
    return 2.0 * sum(float(v) for v in limits.values())


def reproduces(expected: Observation, got: Observation, names: frozenset[str]) -> bool:
    """Whether ``got`` is the failure ``expected`` describes, as the gate judges it (a crash at the
    same step, any hang, else :func:`~seedzer.kernel.messages.same_failure`)."""
    if expected.symptom is Symptom.CRASH:
        return got.symptom is Symptom.CRASH and got.pass_name == expected.pass_name
    if expected.symptom is Symptom.HANG:
        return got.symptom is Symptom.HANG
    return same_failure(expected, got, names)


class ScriptCaseLike(Protocol):
    """What a judgement's start reads of a TVMScript kind's case."""

    @property
    def script(self) -> str: ...
    @property
    def expected(self) -> Observation | None: ...


class ScriptJob(Protocol):
    """What a judgement's start reads of a TVMScript kind's gate job (the ``tir`` and ``sched`` kinds)."""

    @property
    def case(self) -> ScriptCaseLike: ...
    @property
    def settings(self) -> GateSettings: ...


def judgement_start(job: ScriptJob) -> tuple[Observation, frozenset[str], float]:
    """What a new judgement of ``job`` starts from: the failure to confirm (its case's), the IR names its
    messages are normalized with and the time limit of a re-run (:func:`timeout_for`)."""
    expected = job.case.expected
    assert expected is not None, "a gate job's case carries the observation to confirm"
    return expected, ir_names(job.case.script), timeout_for(job.settings, expected)


class Judgement:
    """What a TVMScript kind's judgement context (a dataclass with these fields) offers every rule."""

    job: ScriptJob
    got: Observation | None

    @property
    def settings(self) -> GateSettings:
        """The job's gate settings."""
        return self.job.settings

    @property
    def seen(self) -> Observation:
        """The failure the case showed alone (a rule that needs it runs after the one that saw it)."""
        assert self.got is not None, "the case has not been run alone yet"
        return self.got


class Rule(Protocol[C]):
    """One check of a gate: a verdict, or None to let the next rule judge."""

    name: str

    def judge(self, context: C) -> Verdict | None:
        """The verdict of this rule on ``context``, or None."""
        ...


class Judging(Protocol):
    """What a rule that only reads the re-observed failure needs of a kind's context."""

    @property
    def seen(self) -> Observation:
        """The finding's failure as its re-run showed it."""
        ...

    def verdict(self, verdict: str, reason: str, observation: Observation) -> Verdict:
        """A verdict on the candidate."""
        ...


J = TypeVar("J", bound=Judging)


def undefined_refusal(message: str) -> str | None:
    """The reason of an error by which TVM refuses a setting the ONNX specification does not define (a row of
    :data:`seedzer.kernel.onnx.undefined.REFUSALS`), for the ONNX kinds' ``invalid_reason``; None otherwise.
    Imports onnx when first asked (the gates' modules import none)."""
    from seedzer.kernel.onnx.undefined import UNDEFINED_HERE, refused_where_undefined

    why = refused_where_undefined(message)
    return f"{UNDEFINED_HERE}: {why}: {message}" if why is not None else None


class InvalidInput(Generic[J]):
    """A failure about the input rather than TVM (the kind's ``reason`` of it: an unsupported operator,
    a violated precondition, a model ONNX refuses...) is an invalid test case, not a bug."""

    name = "invalid-input"

    def __init__(self, reason: Callable[[Observation], str | None]) -> None:
        self.reason = reason

    def judge(self, context: J) -> Verdict | None:
        """``invalid`` with the reason, or None when the failure is TVM's to answer for."""
        why = self.reason(context.seen)
        if why is None:
            return None
        return context.verdict(NOT_A_BUG, f"{INVALID}: {why[:300]}", context.seen)


class GateRules(Generic[C2]):
    """An ordered tuple of rules over contexts of one type (see the module docstring)."""

    def __init__(self, rules: Sequence[Rule[C2]]) -> None:
        self.rules = tuple(rules)

    def names(self) -> list[str]:
        """The rules' names, in the order they judge."""
        return [rule.name for rule in self.rules]

    def first_answer(self, context: C2) -> Verdict:
        """The first rule's verdict, marked with its name; a gate whose rules all pass is a defect."""
        for rule in self.rules:
            verdict = rule.judge(context)
            if verdict is not None:
                verdict.rule = verdict.rule or rule.name
                return verdict
        raise AssertionError(f"no rule of the gate ({', '.join(self.names())}) answered")
