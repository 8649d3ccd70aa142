"""The code at fault as data: an ordered tuple of named rules, the first answer wins.

The gate's last rule of every kind names the code a bug is filed under (:class:`~seedzer.finding.verdict.AtFault`)
by asking its kind's *fault rules* in order (``seedzer/finding/<kind>/`` defines them over a context of
its own, as its gate rules are): each rule answers with the code at fault and its evidence, or None to
let the next one decide. A kind's tuple ends with a rule that always answers, or the bisected culprit
stands. The answer names the rule that gave it (``meta.json`` ``at_fault.rule``), and the manual's table
of the rules is generated from their docstrings (``python -m seedzer.docs``).

Two rules serve every kind that imports ONNX models: :class:`SharedComponentRule` (the frames name a
shared component, :mod:`seedzer.finding.component`) and the operator rule's table
(:mod:`seedzer.finding.operator_code`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Generic, Protocol, TypeVar

from seedzer.finding.component import component_of
from seedzer.finding.verdict import AtFault
from seedzer.kernel.common import Observation

C = TypeVar("C", contravariant=True)
C2 = TypeVar("C2")


class FaultRule(Protocol[C]):
    """One rule of the code at fault: the code and its evidence, or None to let the next rule decide."""

    name: str

    def decide(self, context: C) -> AtFault | None:
        """The code at fault this rule finds in ``context``, or None."""
        ...


class FaultRules(Generic[C2]):
    """An ordered tuple of fault rules over contexts of one type (see the module docstring)."""

    def __init__(self, rules: Sequence[FaultRule[C2]]) -> None:
        self.rules = tuple(rules)

    def names(self) -> list[str]:
        """The rules' names, in the order they decide."""
        return [rule.name for rule in self.rules]

    def decide(self, context: C2) -> AtFault | None:
        """The first rule's answer, marked with its name (None: no rule decided)."""
        for rule in self.rules:
            fault = rule.decide(context)
            if fault is not None:
                return fault if fault.rule else dataclasses.replace(fault, rule=rule.name)
        return None


class Reaching(Protocol):
    """What :class:`SharedComponentRule` needs of a kind's context: the failure and the ways it was reached."""

    @property
    def observation(self) -> Observation:
        """The failure, as the gate confirmed it."""
        ...

    @property
    def reached(self) -> tuple[str, ...]:
        """Everything that only led there: passes, model mutations, the input mode."""
        ...


R = TypeVar("R", bound=Reaching)


class SharedComponentRule(Generic[R]):
    """A failure raised in a shared component of TVM (its frames: an ONNX converter, a TOPI operator, a
    legalization rule, a code generator's intrinsic rule, the arithmetic analyzer): that component, every
    pass, model mutation or input mode only reaching it; keyed by it whatever kind of finding reached it."""

    name = "component"

    def decide(self, context: R) -> AtFault | None:
        """The component the frames name, or None."""
        component = component_of(context.observation)
        if component is None:
            return None
        return AtFault(component.name, f"raised in {component.frame}, code every way reaching it shares",
                       tuple(r for r in context.reached if r != component.name), shared=True)
