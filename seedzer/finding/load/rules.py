"""The load gate's rules, one class per check (:data:`seedzer.finding.load.gate.RULES` orders them).

Each rule judges a :class:`LoadContext`: a verdict, or None to let the next rule judge. Every TVM run
goes through the context's ``observe`` (a forked child in the gate, a fake in the unit tests) and every
comparison with the expected failure through its ``match`` (the kernel's ``same_load_failure``), so
each rule can be judged without TVM.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from seedzer.finding.gate import InvalidInput as HouseInvalidInput
from seedzer.finding.gate import undefined_refusal
from seedzer.finding.load.at_fault import FAULT_RULES, LoadFault
from seedzer.finding.load.check import matching, observe_forked
from seedzer.finding.load.folder import SALT
from seedzer.finding.lowered_types import Retyped, retyped_forked
from seedzer.finding.meta import BUG, NOT_A_BUG
from seedzer.finding.onnx_types import IllTyped, ill_typed_forked
from seedzer.finding.verdict import INVALID, NOT_REPRODUCED, Verdict
from seedzer.kernel.common import Observation, Symptom
from seedzer.oracles.preconditions import is_precondition_error
from seedzer.oracles.signature import component_key, root_key

if TYPE_CHECKING:
    from seedzer.kernel.load.observe import LoadCase

INVALID_STEPS = frozenset({"parse", "fold", "reference"})
"""Load steps whose failures are about the input (an unreadable model, a reference engine), never TVM."""


def invalid_reason(observation: Observation) -> str | None:
    """Why a loader failure is about its input rather than TVM, or None."""
    message = observation.message
    if observation.symptom is Symptom.INVALID:
        return observation.message
    if "not supported for frontend ONNX" in observation.message or "OpNotImplemented" in observation.message:
        return f"unsupported operator: {observation.message}"
    if observation.pass_name in INVALID_STEPS:
        return f"{observation.pass_name}: {observation.message}"
    refused = undefined_refusal(message) if observation.symptom is Symptom.EXCEPTION else None
    if refused is not None:
        return refused
    if observation.symptom is Symptom.EXCEPTION and is_precondition_error(observation.message):
        return f"precondition: {observation.message}"
    return None


def check_model_types(case: LoadCase, operator: str) -> IllTyped | None:
    """:func:`seedzer.finding.onnx_types.ill_typed_forked` of the case's model (its bytes read here, TVM only in
    the child)."""
    from seedzer.kernel.onnx.model import model_bytes

    return ill_typed_forked(model_bytes(case), operator)


def check_model_lowering(case: LoadCase, output: str | int) -> Retyped | None:
    """:func:`seedzer.finding.lowered_types.retyped_forked` of the case's model (its bytes read here, TVM only in
    the child)."""
    from seedzer.kernel.onnx.model import model_bytes

    return retyped_forked(model_bytes(case), output)


@dataclass
class LoadContext:
    """One loader candidate's judgement so far, shared by the rules (see the module docstring).

    ``case`` is the case to re-run (its own limit is the re-run's ``timeout``), ``expected`` the
    failure to confirm; ``observed`` is every failure the re-run showed and ``got`` the one that is
    the finding's (None until the ``alone`` rule ran). ``observe`` runs a case in a forked child and
    ``match`` picks the finding's failure (injectable, so a rule can be judged without TVM).
    """

    signature: str
    case: LoadCase
    expected: Observation
    timeout: float
    start: float = field(default_factory=time.monotonic)
    observe: Callable[[LoadCase, float], list[Observation]] = observe_forked
    match: Callable[[Observation, Sequence[Observation]], Observation | None] = matching
    check_types: Callable[[LoadCase, str], IllTyped | None] = lambda case, operator: check_model_types(case, operator)
    check_lowering: Callable[[LoadCase, str | int], Retyped | None] = \
        lambda case, output: check_model_lowering(case, output)
    observed: list[Observation] = field(default_factory=list)
    got: Observation | None = None

    @property
    def seen(self) -> Observation:
        """The finding's failure as the re-run showed it (a rule that needs it runs after ``alone``)."""
        assert self.got is not None, "the case has not been run alone yet"
        return self.got

    def verdict(self, verdict: str, reason: str, observation: Observation, culprit: list[str] | None = None,
                root: str | None = None) -> Verdict:
        """A verdict on the candidate (one test; the folder's case stands, so no case is sent back)."""
        return Verdict(self.signature, verdict, reason, None, observation, culprit or [], root, 1,
                       time.monotonic() - self.start)


class Alone:
    """The case runs once more alone: one of its failures must be the finding's."""

    name = "alone"

    def judge(self, context: LoadContext) -> Verdict | None:
        observed = context.observed = context.observe(context.case, context.timeout)
        context.got = context.match(context.expected, observed)
        if context.got is not None:
            return None
        first = next(iter(observed), Observation.ok())
        if first.symptom is Symptom.INVALID:
            return context.verdict(NOT_A_BUG, f"{INVALID}: {first.message[:300]}", first)
        seen = "; ".join(o.headline()[:200] for o in observed[:3]) or "every step passes"
        return context.verdict(NOT_A_BUG, f"{NOT_REPRODUCED}: run alone it gives {seen}", first)


class InvalidInput(HouseInvalidInput[LoadContext]):
    """A failure about the input rather than TVM (:func:`invalid_reason`) is an invalid test case."""

    def __init__(self) -> None:
        super().__init__(invalid_reason)


class Culprit:
    """A bug: its code at fault is what the kind's fault rules name
    (:data:`~seedzer.finding.load.at_fault.FAULT_RULES`: the shared component it was raised in, such as
    the importer's converter, a TOPI operator or a legalization rule; else the load step it happened at).
    Always answers."""

    name = "culprit"

    def judge(self, context: LoadContext) -> Verdict:
        got = context.seen
        fault = FAULT_RULES.decide(LoadFault(got, lambda operator: context.check_types(context.case, operator),
                                             lambda output: context.check_lowering(context.case, output)))
        assert fault is not None, "the load kind's last fault rule always answers"
        key = component_key(got, fault.code, keyed_on=fault.essence) if fault.shared else \
            root_key(SALT, got, [fault.code])
        verdict = context.verdict(BUG, "bug", got, [fault.code], key.digest())
        verdict.at_fault = fault
        return verdict
