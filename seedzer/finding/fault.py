"""The code at fault as data: an ordered tuple of named rules, the first answer wins.

The gate's last rule of every kind names the code a bug is filed under (:class:`~seedzer.finding.verdict.AtFault`)
by asking its kind's *fault rules* in order (``seedzer/finding/<kind>/`` defines them over a context of
its own, as its gate rules are): each rule answers with the code at fault and its evidence, or None to
let the next one decide. A kind's tuple ends with a rule that always answers, or the bisected culprit
stands. The answer names the rule that gave it (``meta.json`` ``at_fault.rule``), and the manual's table
of the rules is generated from their docstrings (``python -m seedzer.docs``).

Four rules serve every kind that imports ONNX models: :class:`IllTypedInputRule` (a converter tripped on a
value another converter typed wrongly, :mod:`seedzer.finding.onnx_types`), :class:`SharedComponentRule` (the
frames name a shared component, :mod:`seedzer.finding.component`), :class:`RetypedByLoweringRule` (an output
of the wrong dtype or shape that the importer typed right, :mod:`seedzer.finding.lowered_types`) and the
operator rule's table (:mod:`seedzer.finding.operator_code`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import TYPE_CHECKING, Generic, Protocol, TypeVar

from seedzer.finding.component import IMPORTER, component_of, legalization
from seedzer.finding.lowered_types import SHAPE_DTYPE
from seedzer.finding.onnx_types import ILL_TYPED_OUTPUT, own_slip
from seedzer.finding.verdict import AtFault
from seedzer.kernel.common import Observation, Symptom

if TYPE_CHECKING:
    from seedzer.finding.lowered_types import Retyped
    from seedzer.finding.onnx_types import IllTyped

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
    pass, model mutation or input mode only reaching it; keyed by it whatever kind of finding reached it. A
    converter tripping on a value it typed wrongly itself (:data:`~seedzer.finding.onnx_types.OWN_SLIPS`) is keyed
    by that mistake, as the ill-typed-input rule keys the readers that trip on it."""

    name = "component"

    def decide(self, context: R) -> AtFault | None:
        """The component the frames name, or None."""
        component = component_of(context.observation)
        if component is None:
            return None
        slip = own_slip(context.observation.message) if component.name.startswith(IMPORTER + ".") else None
        return AtFault(component.name, f"raised in {component.frame}, code every way reaching it shares",
                       tuple(r for r in context.reached if r != component.name), shared=True,
                       essence=ILL_TYPED_OUTPUT + slip if slip else "")


class Typing(Reaching, Protocol):
    """What :class:`IllTypedInputRule` needs of a kind's context: the failure, the ways there, and the check of
    the failing node's inputs (:func:`seedzer.finding.onnx_types.ill_typed_input`, in a forked child)."""

    def ill_typed(self, operator: str) -> IllTyped | None:
        """The first input of a node of op type ``operator`` its producer's converter typed wrongly, or None."""
        ...


T = TypeVar("T", bound=Typing)


class IllTypedInputRule(Generic[T]):
    """An import failure in a converter whose input another converter made with a type ONNX's type inference
    does not give it (a tensor for a sequence, another element type or rank): that other converter, keyed by
    the kind of mistake whichever converter tripped on it (SplitToSequence into one chunk is one root, whether
    SequenceAt or SequenceLength read it)."""

    name = "ill-typed-input"

    def decide(self, context: T) -> AtFault | None:
        """The converter that made the ill-typed value, or None."""
        observed = context.observation
        component = component_of(observed)
        if observed.pass_name != "import" or component is None or not component.name.startswith(IMPORTER + "."):
            return None
        operator = component.name.removeprefix(IMPORTER + ".").split(".")[0]
        found = context.ill_typed(operator)
        if found is None or found.converter.split(".")[3] == operator:
            return None
        return AtFault(found.converter, f"{found.operator}'s converter gave {found.value!r} {found.mistake} "
                       f"({found.detail}); {component.name} only tripped on it",
                       tuple(r for r in (*context.reached, component.name) if r != found.converter), shared=True,
                       essence=ILL_TYPED_OUTPUT + found.mistake)


class Retyping(Reaching, Protocol):
    """What :class:`RetypedByLoweringRule` needs of a kind's context: the failure, the ways there, and the check of
    a graph output's lowering (:func:`seedzer.finding.lowered_types.retyped_output`, in a forked child)."""

    def retyped(self, output: str | int) -> Retyped | None:
        """The first binding LegalizeOps retypes, when the importer typed graph ``output`` (name or index) as
        ONNX does; else None."""
        ...


RT = TypeVar("RT", bound=Retyping)


class RetypedByLoweringRule(Generic[RT]):
    """An output of another dtype or shape than ONNX's (a wrong result of that kind) that the importer declared with
    ONNX's type: the converter typed it right, and the legalization of the first Relax operator whose type
    LegalizeOps changes is at fault (``R.mean`` of int32 declared int32, lowered to int64: ``legalize.statistical``),
    keyed by what it changes. Otherwise (the importer declared it wrongly, or no legalization retypes it) the next
    rule decides."""

    name = "lowering-retyped"

    def decide(self, context: RT) -> AtFault | None:
        """The legalization that retypes the value, or None."""
        observed = context.observation
        diff = observed.difference
        if observed.symptom is not Symptom.MISMATCH or diff is None or not diff.reason.startswith(SHAPE_DTYPE):
            return None
        found = context.retyped(diff.name if diff.name else diff.output)
        code = legalization(found.op) if found is not None else None
        if found is None or code is None:
            return None
        return AtFault(code, f"the importer declared output {found.output!r} as ONNX types it; LegalizeOps' rule for "
                       f"{found.op} ({code}) retypes {found.value} from {found.declared} to {found.lowered}",
                       tuple(r for r in context.reached if r != code), shared=True,
                       essence=f"lowering retypes: {found.what}")
