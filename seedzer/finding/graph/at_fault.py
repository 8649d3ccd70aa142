"""The graph kind's code at fault: its ordered fault rules (:mod:`seedzer.finding.fault`).

The ``culprit`` gate rule minimizes a graph case (its model mutations, then its steps) and asks these
rules, in order, which code a maintainer would fix. Model mutations and the input mode are never the
code at fault: they made the model or the inputs TVM then handled wrongly, so they go into ``reached``
(``meta.json`` ``at_fault.reached_through``) with the steps that only led there.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from seedzer.finding.component import IMPORTER, legalization
from seedzer.finding.fault import FaultRules, IllTypedInputRule, RetypedByLoweringRule, SharedComponentRule
from seedzer.finding.graph.layout_rule import CONVERT_LAYOUT, LayoutCulprit
from seedzer.finding.lowered_types import Retyped
from seedzer.finding.mirrored import MirroredCall
from seedzer.finding.onnx_types import IllTyped
from seedzer.finding.operator_code import evidence, operator_code
from seedzer.finding.unbuildable import Unbuildable
from seedzer.finding.verdict import AtFault
from seedzer.kernel.common import Observation, Stage, Symptom
from seedzer.kernel.graph.case import MUTATION_PREFIX, RANDOM_INPUTS, WELL_FORMED, GraphPass, ModelMutation
from seedzer.oracles.signature import EXTERNAL, VALUE_KINDS

MUTATED_OPS = ("edge", "insert")
"""Model mutations that make one operator the test case is about: an insertion adds it, a spec-edge
change edits its attributes or inputs (the others, MT-DLComp's relations, wrap a node in garbage
arithmetic that only feeds it)."""


def failing_pass(observation: Observation) -> str | None:
    """The Relax pass a failure surfaced in (``relax.X``, also for ``relax.X:well-formed``), or None
    when it surfaced after the sequence (build, run, comparison)."""
    name = observation.pass_name or ""
    if observation.stage is not Stage.PASS or not name.startswith(("relax.", MUTATION_PREFIX)):
        return None
    return name.removesuffix(WELL_FORMED)


def mutation_label(mutation: ModelMutation) -> str:
    """How a model mutation is named among the ways a root was reached: its kind and the operator a
    spec-edge change moved or an insertion added, or the garbage ops of an obscure condition
    (``edge:Resize``, ``insert:TopK``, ``uoc:Conv+Add``)."""
    if mutation.kind in MUTATED_OPS:
        return f"{mutation.kind}:{mutation.params.get('op', '?')}"
    return f"{mutation.kind}:{'+'.join(mutation.garbage) or '-'}"


@dataclass(frozen=True)
class GraphFault:
    """What the graph kind's fault rules read: the failure the minimal case showed, the minimal step
    sequence, the minimal model mutations and the input mode."""

    observation: Observation
    minimal: tuple[GraphPass, ...] = ()
    mutations: tuple[ModelMutation, ...] = ()
    input_mode: str = RANDOM_INPUTS
    check_types: Callable[[str], IllTyped | None] = lambda operator: None
    """The check of the failing node's inputs (:func:`seedzer.finding.onnx_types.ill_typed_input` on the
    minimal case's model, in a forked child; none by default)."""
    locate_layout: Callable[[], LayoutCulprit | None] = lambda: None
    """The layout rule a ConvertLayout failure of the minimal case is in
    (:func:`seedzer.finding.graph.layout_rule.locate_forked`; none by default)."""
    check_lowering: Callable[[str | int], Retyped | None] = lambda output: None
    """The check of a graph output's lowering (:func:`seedzer.finding.lowered_types.retyped_output` on the minimal
    case's model, in a forked child; none by default)."""
    locate_build: Callable[[], Unbuildable | None] = lambda: None
    """The operator whose call alone fails the build the same way
    (:func:`seedzer.finding.unbuildable.unbuildable_operator` on the minimal case's model, in a forked child; none
    by default)."""

    check_mirror: Callable[[str], MirroredCall | None] = lambda operator: None
    """Whether every node of an ONNX operator in the minimal case's model imports as the one call of the Relax operator
    of its meaning (:func:`seedzer.finding.mirrored.mirrored_call`, in a forked child; none by default)."""

    def ill_typed(self, operator: str) -> IllTyped | None:
        """The first input of a node of op type ``operator`` its producer's converter typed wrongly, or None."""
        return self.check_types(operator)

    def retyped(self, output: str | int) -> Retyped | None:
        """The first binding LegalizeOps retypes, when the importer typed graph ``output`` as ONNX does; else None."""
        return self.check_lowering(output)

    @property
    def passes(self) -> list[str]:
        """The Relax passes of the minimal sequence (Seedzer's own rewrites left out), in order."""
        return [p.name for p in self.minimal if not p.name.startswith(MUTATION_PREFIX)]

    @property
    def reached(self) -> tuple[str, ...]:
        """The steps, model mutations and input mode the failure was reached through."""
        steps = [p.name for p in self.minimal]
        labels = [mutation_label(m) for m in self.mutations]
        mode = [f"inputs:{self.input_mode}"] if self.input_mode != RANDOM_INPUTS else []
        return tuple(dict.fromkeys([*steps, *sorted(set(labels)), *mode]))

    def without(self, code: str) -> tuple[str, ...]:
        """:attr:`reached` without ``code`` itself."""
        return tuple(r for r in self.reached if r != code)

    def wrong_operator(self) -> tuple[str | None, str]:
        """The operator a wrong result is about and how it was found: the first node TVM computes wrongly from inputs
        it computes right (located by the kernel), else the one operator the model mutations insert or edit (None:
        neither)."""
        observed = self.observation
        diff = observed.difference
        wrong = observed.symptom is Symptom.MISMATCH
        located = diff.operator if wrong and diff is not None and diff.operator else None
        if located:
            return located, "located by the kernel"
        return self.mutated_operator(), "the one operator the model mutations insert or edit"

    def value_kind(self) -> str | None:
        """The kind of special value (``nan``, ``inf``) an external comparison found wrong where the located operator
        made it (its own output's, not the judged output's), or None."""
        diff = self.observation.difference
        return VALUE_KINDS.get(diff.at_operator) if diff is not None and self.observation.comparison in EXTERNAL \
            else None

    def mutated_operator(self) -> str | None:
        """The one operator the minimal model mutations insert or edit (None: none, or several)."""
        ops = {str(m.params.get("op")) for m in self.mutations if m.kind in MUTATED_OPS and m.params.get("op")}
        return next(iter(ops)) if len(ops) == 1 else None


class FailingStep:
    """An error, ill-formed IR or a crash in a Relax pass of the sequence: that pass (the pass is the unit
    a maintainer fixes; the steps before it and the model mutations only made its input)."""

    name = "failing-step"

    def decide(self, context: GraphFault) -> AtFault | None:
        """The pass it failed in, or None after the sequence."""
        step = failing_pass(context.observation)
        if step is None:
            return None
        return AtFault(step, f"{step} raised, crashed or left ill-formed IR", context.without(step))


class LayoutRule:
    """An error, a crash or ill-formed IR in ``relax.ConvertLayout``: the layout rule (``FRelaxInferLayout``) of
    the operator it failed at, bisected over the function's bindings (the first binding the pass fails on, or
    the operator whose rule gave that binding's input a layout nothing asked for:
    :mod:`seedzer.finding.graph.layout_rule`), keyed by that rule whatever message it fails with; the pass and
    the steps before it only reach it. A failure at a binding that calls no operator with a rule (a tuple, a
    match_cast) stays the pass's."""

    name = "layout-rule"

    def decide(self, context: GraphFault) -> AtFault | None:
        """The operator's layout rule, or None (not ConvertLayout's failure, or no rule located)."""
        if failing_pass(context.observation) != CONVERT_LAYOUT:
            return None
        found = context.locate_layout()
        if found is None:
            return None
        return AtFault(found.code, found.evidence, context.without(found.code), shared=True, essence="layout rule")


class LastPass:
    """A failure after the sequence (a wrong result, the build) that needs a Relax pass: the last Relax pass
    of the minimal sequence (delta debugging kept every pass of it: the ones before only enable it)."""

    name = "last-pass"

    def decide(self, context: GraphFault) -> AtFault | None:
        """The last Relax pass of the minimal sequence, or None without one."""
        passes = context.passes
        if not passes:
            return None
        return AtFault(passes[-1], f"the last Relax pass of the minimal sequence ({', '.join(passes)}): the case "
                       "needs it", context.without(passes[-1]))


class UnbuildableLowering:
    """A build failure that no frame names (no code generation frame in its trace) and no Relax pass needs: the
    legalization of the first Relax operator whose call alone fails the build the same way
    (:mod:`seedzer.finding.unbuildable`), keyed by that operator; the converter only emitted a well-typed call. A
    failure raised in LLVM's code generator names it (the shared-component rule: a bool product that
    ``CodeGenLLVM::CreateMul`` has no case for is its defect whichever operator made it, the e53 audit)."""

    name = "unbuildable-lowering"

    def decide(self, context: GraphFault) -> AtFault | None:
        """The operator's legalization, or None (not a build failure, or no call alone fails so)."""
        observed = context.observation
        if observed.stage is not Stage.BUILD or observed.symptom is not Symptom.EXCEPTION or context.passes:
            return None
        found = context.locate_build()
        code = legalization(found.op) if found is not None else None
        if found is None or code is None:
            return None
        return AtFault(code, f"{found.op} alone ({found.value}), legalized by {code}, fails the build the same way: "
                       f"{found.message[:200]}", context.without(code), shared=True,
                       essence=f"lowering does not build: {found.op}")


class MirroredOperator:
    """A wrong result of ordinary values, needing no Relax pass, of an ONNX operator whose converter emitted only the
    one call of the Relax operator of the same meaning (:mod:`seedzer.finding.mirrored`: NonMaxSuppression as
    ``R.vision.all_class_non_max_suppression(.., output_format="onnx")``, ScatterElements as ``R.scatter_elements``):
    the TOPI function that operator's legalization calls (``topi.vision.nms``), keyed by the Relax operator; the
    converter made no choice that could be wrong."""

    name = "mirrored-operator"

    def decide(self, context: GraphFault) -> AtFault | None:
        """The Relax operator's lowering, or None (not such a wrong result, or the converter emitted more)."""
        if context.observation.symptom is not Symptom.MISMATCH or context.passes or context.value_kind() is not None:
            return None
        operator, how = context.wrong_operator()
        found = context.check_mirror(operator) if operator is not None else None
        if found is None:
            return None
        return AtFault(found.code, f"{operator} ({how}) computes the first wrong output; its converter emitted only "
                       f"{found.op}, the Relax operator of its meaning, which {found.code} computes",
                       context.without(found.code), shared=True, essence=f"wrong result: {found.op}")


class Operator:
    """A wrong result that needs no Relax pass, or a failure of the import, the build or the run that no frame
    names: the code implementing the operator at fault (the kernel locates the first node TVM computes
    wrongly from inputs it computes right; else the one operator the model mutations insert or edit), by
    the operator table (the importer's converter, or a lowering several operators share for the kind of
    value it gets wrong: NaN through Relu, Clip, Max, Min, ReduceMax, ReduceMin is one root). An import
    failure naming no operator is the importer's."""

    name = "operator"

    def decide(self, context: GraphFault) -> AtFault | None:
        """The operator's code, or None (a failure after the import that names no one operator)."""
        observed = context.observation
        wrong = observed.symptom is Symptom.MISMATCH
        operator, how = context.wrong_operator()
        if operator is None:
            return AtFault(IMPORTER, "the import failed, and no one operator is named", context.reached,
                           shared=True) if observed.pass_name == "import" and not wrong else None
        value = context.value_kind()
        code = operator_code(operator, value)
        if not wrong:
            return AtFault(code, f"{observed.pass_name or 'the build'} failed and no frame names the code; {operator} "
                           "is the one operator the model mutations insert or edit, and its converter owns its meaning",
                           context.without(code), shared=True)
        return AtFault(code, f"{evidence(operator, value)} ({how})", context.without(code), shared=True)


class SurfacedStep:
    """Otherwise the step the failure surfaced at (``build``, ``run``): TVM's default pipeline there, the
    model mutations and the input mode only leading to it. Always answers."""

    name = "stage"

    def decide(self, context: GraphFault) -> AtFault:
        """The step it surfaced at."""
        step = context.observation.pass_name or "build"
        return AtFault(step, f"the step it surfaced at ({step}); no pass, component or operator is named",
                       context.without(step))


FAULT_RULES: FaultRules[GraphFault] = FaultRules(
    (IllTypedInputRule[GraphFault](), SharedComponentRule[GraphFault](), LayoutRule(), FailingStep(), LastPass(),
     RetypedByLoweringRule[GraphFault](), UnbuildableLowering(), MirroredOperator(), Operator(),
     SurfacedStep()))
"""The graph kind's fault rules, in the order they decide (the first answer wins)."""
