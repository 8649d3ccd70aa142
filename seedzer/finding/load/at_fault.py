"""The load kind's code at fault: its ordered fault rules (:mod:`seedzer.finding.fault`).

A load finding is a pool model that TVM's importer, lowering or build rejects, crashes on or gets wrong;
its steps are TVM's own, so the code at fault is named from the failure alone.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from seedzer.finding.component import IMPORTER
from seedzer.finding.fault import FaultRules, IllTypedInputRule, RetypedByLoweringRule, SharedComponentRule
from seedzer.finding.lowered_types import Retyped
from seedzer.finding.onnx_types import IllTyped
from seedzer.finding.operator_code import evidence, operator_code
from seedzer.finding.verdict import AtFault
from seedzer.kernel.common import Observation, Symptom


@dataclass(frozen=True)
class LoadFault:
    """What the load kind's fault rules read: the failure the re-run confirmed."""

    observation: Observation
    check_types: Callable[[str], IllTyped | None] = lambda operator: None
    """The check of the failing node's inputs (:func:`seedzer.finding.onnx_types.ill_typed_input` on the case's
    model, in a forked child; none by default)."""

    check_lowering: Callable[[str | int], Retyped | None] = lambda output: None
    """The check of a graph output's lowering (:func:`seedzer.finding.lowered_types.retyped_output` on the case's
    model, in a forked child; none by default)."""

    def ill_typed(self, operator: str) -> IllTyped | None:
        """The first input of a node of op type ``operator`` its producer's converter typed wrongly, or None."""
        return self.check_types(operator)

    def retyped(self, output: str | int) -> Retyped | None:
        """The first binding LegalizeOps retypes, when the importer typed graph ``output`` as ONNX does; else None."""
        return self.check_lowering(output)

    @property
    def step(self) -> str:
        """The load step it happened at (``import``, ``legalize``, ``build``, ``compare``...)."""
        return self.observation.pass_name or "import"

    @property
    def reached(self) -> tuple[str, ...]:
        """The load step, the only way there."""
        return (self.step,)


class Operator:
    """A wrong result whose operator the kernel located: that operator's code (the importer's converter, or
    the lowering several operators share, as for the graph kind); an import failure that names no
    converter: the importer."""

    name = "operator"

    def decide(self, context: LoadFault) -> AtFault | None:
        """The operator's code, the importer, or None."""
        observed = context.observation
        diff = observed.difference
        if observed.symptom is Symptom.MISMATCH and diff is not None and diff.operator:
            code = operator_code(diff.operator)
            return AtFault(code, evidence(diff.operator), context.reached, shared=True)
        if observed.symptom is not Symptom.MISMATCH and context.step == "import":
            return AtFault(IMPORTER, "the import failed, and its frames name no converter", context.reached,
                           shared=True)
        return None


class LoadStep:
    """Otherwise the load step it happened at (TVM's default lowering, build or run there). Always answers."""

    name = "load-step"

    def decide(self, context: LoadFault) -> AtFault:
        """The step."""
        return AtFault(context.step, f"the load step it happened at ({context.step})")


FAULT_RULES: FaultRules[LoadFault] = FaultRules((IllTypedInputRule[LoadFault](), SharedComponentRule[LoadFault](),
                                                 RetypedByLoweringRule[LoadFault](), Operator(), LoadStep()))
"""The load kind's fault rules, in the order they decide (the first answer wins)."""
