"""The graph gate's rules, one class per check (:data:`seedzer.finding.graph.gate.RULES` orders them).

Each rule judges a :class:`GraphContext`: a verdict, or None to let the next rule judge. A rule
reads what the rules before it established (the failure the case showed alone). Every TVM run goes
through the context's ``observe`` (a forked child in the gate, a fake in the unit tests), every
comparison with an expected failure through its ``match`` (the kernel's ``same_graph_failure``), and
the Relax pass contracts through its ``contracts`` (:func:`seedzer.passes.graph.contracts.out_of_contract`,
imported when first used), so each rule can be judged without TVM.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from seedzer.finding.component import component_of
from seedzer.finding.ddmin import ddmin
from seedzer.finding.gate import GateSettings, undefined_refusal
from seedzer.finding.gate import InvalidInput as HouseInvalidInput
from seedzer.finding.graph.at_fault import FAULT_RULES, GraphFault, failing_pass
from seedzer.finding.graph.check import (
    ill_typed_forked,
    matches,
    mirrored_forked,
    observe_forked,
    retyped_forked,
    unbuildable_forked,
)
from seedzer.finding.graph.folder import KIND_NAME, stored, to_specs
from seedzer.finding.graph.layout_rule import LayoutCulprit, locate_forked
from seedzer.finding.graph.unlowered import UNLOWERED, unlowered_on_purpose
from seedzer.finding.lowered_types import Retyped
from seedzer.finding.meta import BUG, NOT_A_BUG
from seedzer.finding.mirrored import MirroredCall
from seedzer.finding.onnx_types import IllTyped
from seedzer.finding.unbuildable import Unbuildable
from seedzer.finding.verdict import CONTRACT, INVALID, NOT_REPRODUCED, PRECONDITION, Verdict
from seedzer.kernel.common import IMPORTER_LIMIT, IMPORTER_LIMITS, Observation, Symptom
from seedzer.kernel.graph.case import MUTATION_PREFIX, RANDOM_INPUTS, GraphCase
from seedzer.oracles.preconditions import is_precondition_error
from seedzer.oracles.signature import component_key, root_key
from seedzer.seed import PassSpec

INVALID_STEPS = frozenset({"parse", "reference", "onnx-reference", "validate"})
"""Steps whose failures are about the input (an unreadable model, the reference engines, the validity
check), never TVM: an engine that crashes there is not TVM's finding."""
INVALID_MODEL = ("ValidationError", "onnx.checker", "InvalidModel", "Error parsing message")
"""Message fragments of a model ONNX itself refuses."""
UNSUPPORTED = ("not supported for frontend ONNX", "OpNotImplemented")
"""Message fragments of an operator TVM's ONNX importer does not support (anywhere)."""
SEEDZER_STEP = "Seedzer's own rewrite"
"""How the reason of a failure that is Seedzer's rather than TVM's starts (a Relax IR mutation)."""

Contracts = Callable[[Sequence[PassSpec]], list[tuple[int, str]]]
"""``(index, reason)`` of every pass of a sequence out of its contract."""


def relax_out_of_contract(passes: Sequence[PassSpec]) -> list[tuple[int, str]]:
    """The Relax catalog's judgement (:func:`seedzer.passes.graph.contracts.out_of_contract`),
    imported when first asked."""
    from seedzer.passes.graph.contracts import out_of_contract

    return out_of_contract(passes)


def seedzer_step(step: str | None) -> str | None:
    """``step`` when it is one of Seedzer's own rewrites (a Relax IR mutation ``mutate.X``), else None."""
    return step if step is not None and step.startswith(MUTATION_PREFIX) else None


def invalid_reason(observation: Observation) -> str | None:
    """Why a graph failure is about its input rather than TVM (a failure in Seedzer's own rewrite, an
    unsupported operator or input type, a violated precondition, a model ONNX refuses, a setting the
    specification does not define that TVM refuses, a call TVM's legalization leaves unlowered on purpose:
    :mod:`seedzer.finding.graph.unlowered`), or None."""
    message = observation.message
    if observation.symptom is Symptom.INVALID:
        return message
    own = seedzer_step(failing_pass(observation))
    if own is not None:
        return f"{SEEDZER_STEP}: {observation.symptom.value} in {own}: {message}"
    if any(text in message for text in UNSUPPORTED):
        return f"unsupported operator: {message}"
    if observation.pass_name in INVALID_STEPS:
        return f"{observation.pass_name}: {message}"
    if observation.pass_name == "import" and any(text in message for text in INVALID_MODEL):
        return f"invalid model: {message}"
    if observation.pass_name == "import" and any(text.lower() in message.lower() for text in IMPORTER_LIMITS):
        return f"{IMPORTER_LIMIT}: {message}"
    refused = undefined_refusal(message) if observation.symptom is Symptom.EXCEPTION else None
    if refused is not None:
        return refused
    unlowered = unlowered_on_purpose(message) if observation.symptom is Symptom.EXCEPTION else None
    if unlowered is not None:
        return f"{UNLOWERED}: {unlowered}: {message}"
    if observation.symptom is Symptom.EXCEPTION and is_precondition_error(message):
        return f"{PRECONDITION}: {message}"
    return None


@dataclass
class GraphContext:
    """One graph candidate's judgement so far, shared by the rules (see the module docstring).

    ``case`` is the case to re-run (its model embedded), ``expected`` the failure to confirm and
    ``timeout`` each run's time limit; ``got`` is the finding's failure as the run alone showed it
    (None until the ``alone`` rule ran) and ``parent`` what TVM's default pipeline alone showed
    (None until the ``parent`` rule ran it).
    """

    signature: str
    case: GraphCase
    expected: Observation
    timeout: float
    settings: GateSettings = field(default_factory=GateSettings)
    start: float = field(default_factory=time.monotonic)
    observe: Callable[[GraphCase, float], Observation] = observe_forked
    match: Callable[[Observation, Observation], bool] = matches
    contracts: Contracts = relax_out_of_contract
    check_types: Callable[[GraphCase, str], IllTyped | None] = ill_typed_forked
    locate_layout: Callable[[GraphCase, Observation, float], LayoutCulprit | None] = locate_forked
    check_lowering: Callable[[GraphCase, str | int], Retyped | None] = retyped_forked
    locate_build: Callable[[GraphCase, Observation], Unbuildable | None] = unbuildable_forked
    check_mirror: Callable[[GraphCase, str], MirroredCall | None] = mirrored_forked
    got: Observation | None = None
    parent: Observation | None = None
    tests: int = 0
    notes: list[str] = field(default_factory=list)

    @property
    def seen(self) -> Observation:
        """The finding's failure as the re-run showed it (a rule that needs it runs after ``alone``)."""
        assert self.got is not None, "the case has not been run alone yet"
        return self.got

    def run(self, case: GraphCase) -> Observation:
        """What ``case`` shows, run alone (one more test)."""
        self.tests += 1
        return self.observe(case, self.timeout)

    def verdict(self, verdict: str, reason: str, observation: Observation, culprit: list[str] | None = None,
                root: str | None = None, case: GraphCase | None = None) -> Verdict:
        """A verdict on the candidate; ``case`` (a bug's minimal case, model left in the folder)."""
        return Verdict(self.signature, verdict, reason, case, observation, culprit or [], root, self.tests,
                       time.monotonic() - self.start, list(self.notes))


class Alone:
    """The case runs once more alone: it must fail the finding's way."""

    name = "alone"

    def judge(self, context: GraphContext) -> Verdict | None:
        observed = context.run(context.case)
        if context.match(context.expected, observed):
            context.got = observed
            return None
        if observed.symptom is Symptom.INVALID:
            return context.verdict(NOT_A_BUG, f"{INVALID}: {observed.message[:300]}", observed)
        return context.verdict(NOT_A_BUG, f"{NOT_REPRODUCED}: run alone it gives {observed.headline()[:300]}",
                               observed)


class InvalidInput(HouseInvalidInput[GraphContext]):
    """A failure about the input rather than TVM (:func:`invalid_reason`) is an invalid test case."""

    def __init__(self) -> None:
        super().__init__(invalid_reason)


class Contract:
    """A pass that ran out of its contract (its position in the sequence breaks what it needs, per
    :mod:`seedzer.passes.graph.contracts`) makes the failure the test case's: not a bug. Only the
    passes that ran are judged: up to the failing one for a failure in a pass, else all."""

    name = "contract"

    def judge(self, context: GraphContext) -> Verdict | None:
        passes = context.case.passes
        index = context.seen.step_index
        if failing_pass(context.seen) is not None and index is not None:
            passes = passes[: index + 1]
        broken = context.contracts(to_specs(passes))
        if not broken:
            return None
        at, why = broken[0]
        return context.verdict(NOT_A_BUG, f"{CONTRACT}: {passes[at].name} (pass {at + 1} of the sequence) is out of "
                               f"its contract: {why}", context.seen)


class Parent:
    """The seed model with no Relax step and no model mutation (TVM's default pipeline alone, on the
    random inputs the load kind runs) failing the same way is the load kind's finding, not the case's:
    not a bug. A failure in a step of the sequence, or a mismatch, cannot happen that way: not run for
    them."""

    name = "parent"

    def judge(self, context: GraphContext) -> Verdict | None:
        got, case = context.seen, context.case
        if not (case.passes or case.model_mutations) or failing_pass(got) is not None \
                or got.symptom is Symptom.MISMATCH:
            return None
        parent = context.parent = context.run(dataclasses.replace(case, passes=(), model_mutations=(),
                                                                  input_mode=RANDOM_INPUTS))
        if not context.match(context.expected, parent):  # what the seed alone shows, said as such
            context.notes.append("the seed model alone (no model mutation, no Relax step; TVM's default pipeline on "
                                 f"random inputs) does not fail this way: {parent.headline()[:200]}")
            return None
        return context.verdict(NOT_A_BUG, f"{INVALID}: TVM's default pipeline alone (no Relax pass) fails the same "
                               "way: the load kind's finding, not the sequence's", parent)


class Culprit:
    """A bug: ddmin over the model mutations, then over the step sequence (its in-contract
    subsequences only: the repro is a sequence a user may run), to a minimal case that still fails
    the same way (relations go first, as in MT-DLComp's reduction); the culprit is the code at fault
    the kind's fault rules name (:data:`~seedzer.finding.graph.at_fault.FAULT_RULES`: a shared component
    the frames name, the failing step, the last Relax pass, the operator a wrong result is located at,
    the step it surfaced at), and the root is keyed by it; model mutations and the input mode are only
    ways there. A minimal sequence of Seedzer's own rewrites only (Relax IR mutations ``mutate.X``, no
    Relax pass) makes the failure Seedzer's, not TVM's: invalid. Always answers."""

    name = "culprit"

    def judge(self, context: GraphContext) -> Verdict:
        case, got = context.case, context.seen
        deadline = time.monotonic() + context.settings.max_seconds
        budget = context.tests + context.settings.max_tests

        def out_of_time() -> bool:
            return context.tests >= budget or time.monotonic() >= deadline

        shown: dict[str, Observation] = {"last": got}

        def minimize(items: tuple[object, ...], make: Callable[[tuple[int, ...]], GraphCase | None]
                     ) -> tuple[int, ...]:
            found: dict[tuple[int, ...], bool] = {tuple(range(len(items))): True}

            def holds(keep: list[int]) -> bool:
                key = tuple(keep)
                if key not in found:  # a subset that is no case the gate may judge fails no way
                    candidate = make(key)
                    observed = context.run(candidate) if candidate is not None else None
                    found[key] = observed is not None and context.match(context.expected, observed)
                    if observed is not None and found[key]:
                        shown["last"] = observed
                return found[key]

            return tuple(ddmin(list(range(len(items))), holds, out_of_time)) if items else ()

        kept = minimize(case.model_mutations, lambda keep: dataclasses.replace(
            case, model_mutations=tuple(case.model_mutations[i] for i in keep)))
        case = dataclasses.replace(case, model_mutations=tuple(case.model_mutations[i] for i in kept))
        def in_contract(keep: tuple[int, ...]) -> GraphCase | None:  # a repro must be a user's sequence
            passes = tuple(case.passes[i] for i in keep)
            return None if context.contracts(to_specs(passes)) else case.with_passes(passes)

        keep = minimize(case.passes, in_contract)
        minimal = tuple(case.passes[i] for i in keep)
        if out_of_time():
            context.notes.append("the culprit search stopped at its limit: the case may not be minimal")
        observed = shown["last"]
        context.notes.append("minimal sequence: " + (", ".join(p.label() for p in minimal) or "none"))
        if case.model_mutations:
            context.notes.append("minimal model mutations: " + ", ".join(m.label() for m in case.model_mutations))
        passes = [p.name for p in minimal if seedzer_step(p.name) is None]
        fault_case = case.with_passes(minimal)
        fault_context = GraphFault(observed, minimal, case.model_mutations, case.input_mode,
                                   lambda operator: context.check_types(fault_case, operator),
                                   locate_layout=lambda: context.locate_layout(fault_case, observed, context.timeout),
                                   check_lowering=lambda output: context.check_lowering(fault_case, output),
                                   locate_build=lambda: context.locate_build(fault_case, observed),
                                   check_mirror=lambda operator: context.check_mirror(fault_case, operator))
        shared = component_of(observed) is not None  # a shared TVM component at fault outranks the steps
        if failing_pass(observed) is None and not passes and minimal and not shared:
            return context.verdict(NOT_A_BUG, f"{INVALID}: {SEEDZER_STEP} is the only culprit (the minimal sequence "
                                   f"{', '.join(p.label() for p in minimal)} has no Relax pass): "
                                   f"{observed.headline()[:200]}", observed)
        fault = FAULT_RULES.decide(fault_context)
        assert fault is not None, "the graph kind's last fault rule always answers"
        culprit = [fault.code]
        key = component_key(observed, fault.code, keyed_on=fault.essence) if fault.shared else \
            root_key(KIND_NAME, observed, culprit)
        bug_case = stored(dataclasses.replace(case.with_passes(minimal), expected=observed))
        verdict = context.verdict(BUG, "bug", observed, culprit, key.digest(), bug_case)
        verdict.at_fault = fault
        return verdict
