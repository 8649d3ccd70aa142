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
from seedzer.finding.gate import GateSettings
from seedzer.finding.gate import InvalidInput as HouseInvalidInput
from seedzer.finding.graph.check import matches, observe_forked
from seedzer.finding.graph.folder import KIND_NAME, stored, to_specs
from seedzer.finding.meta import BUG, NOT_A_BUG
from seedzer.finding.verdict import CONTRACT, INVALID, NOT_REPRODUCED, PRECONDITION, AtFault, Verdict
from seedzer.kernel.common import IMPORTER_LIMIT, IMPORTER_LIMITS, Observation, Stage, Symptom
from seedzer.kernel.graph.case import MUTATION_PREFIX, RANDOM_INPUTS, WELL_FORMED, GraphCase, GraphPass, ModelMutation
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
    unsupported operator or input type, a violated precondition, a model ONNX refuses), or None."""
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
    if observation.symptom is Symptom.EXCEPTION and is_precondition_error(message):
        return f"{PRECONDITION}: {message}"
    return None


def failing_pass(observation: Observation) -> str | None:
    """The Relax pass a failure surfaced in (``relax.X``, also for ``relax.X:well-formed``), or None
    when it surfaced after the sequence (build, run, comparison)."""
    name = observation.pass_name or ""
    if observation.stage is not Stage.PASS or not name.startswith(("relax.", MUTATION_PREFIX)):
        return None
    return name.removesuffix(WELL_FORMED)


def mutation_culprit(mutation: ModelMutation) -> str:
    """How a model mutation names a root: its kind and the operator a spec-edge change moved or an
    insertion added, or the garbage ops of an obscure condition (``edge:Resize``, ``insert:TopK``,
    ``uoc:Conv+Add``)."""
    if mutation.kind in ("edge", "insert"):
        return f"{mutation.kind}:{mutation.params.get('op', '?')}"
    return f"{mutation.kind}:{'+'.join(mutation.garbage) or '-'}"


def graph_fault(observed: Observation, culprit: list[str], minimal: tuple[GraphPass, ...]) -> AtFault:
    """The code at fault of a graph failure: the shared component it was raised in (a TOPI operator, a
    legalization rule, the importer's converter, the arithmetic analyzer...), every step of the
    minimal sequence only reaching it; else ``culprit`` (the failing step, the last step of the
    minimal sequence, or the model mutations)."""
    component = component_of(observed)
    steps = tuple(dict.fromkeys(p.name for p in minimal))
    if component is not None:
        return AtFault(component.name, f"raised in {component.frame}, code every step reaching it shares",
                       steps or tuple(culprit), shared=True)
    return AtFault(" + ".join(culprit), "the failing step" if failing_pass(observed) else
                   "the last step of the minimal sequence, or the model mutations it needs",
                   tuple(p for p in steps if p not in culprit))


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

    def verdict(self, kind: str, reason: str, observation: Observation, culprit: list[str] | None = None,
                root: str | None = None, case: GraphCase | None = None) -> Verdict:
        """A verdict on the candidate; ``case`` (a bug's minimal case, model left in the folder)."""
        return Verdict(self.signature, kind, reason, case, observation, culprit or [], root, self.tests,
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


SPECIAL_KINDS = {"nan positions": "nan", "inf positions": "inf"}
"""The kind of special value a difference is about (:func:`seedzer.kernel.comparison.compare`'s reasons)."""


def input_culprit(mode: str, observed: Observation) -> str:
    """The culprit an input mode adds (``inputs:special``), with the operator computing the output that
    differs where the kernel names it and the kind of value it gets wrong (``inputs:special:Relu:nan``):
    a NaN lost by Relu and one lost by Sign are two bugs, not one root of every special-values
    mismatch, and so are a NaN and an infinity one reduction gets wrong (the study's audit: ReduceMin's
    lost NaN and its +inf turned into FLT_MAX, two defects, were one root)."""
    diff = observed.difference
    operator = diff.operator if diff is not None else None
    if not operator:
        return f"inputs:{mode}"
    kind = SPECIAL_KINDS.get(diff.reason) if diff is not None else None
    return f"inputs:{mode}:{operator}" + (f":{kind}" if kind else "")


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
        if not context.match(context.expected, parent):
            context.notes.append(f"TVM's default pipeline alone: {parent.headline()[:200]}")
            return None
        return context.verdict(NOT_A_BUG, f"{INVALID}: TVM's default pipeline alone (no Relax pass) fails the same "
                               "way: the load kind's finding, not the sequence's", parent)


class Culprit:
    """A bug: ddmin over the model mutations, then over the step sequence (its in-contract
    subsequences only: the repro is a sequence a user may run), to a minimal case that still fails
    the same way (relations go first, as in MT-DLComp's reduction); the culprit is the
    failing step (an error, ill-formed IR or a crash in a step), else the last Relax pass of the minimal
    sequence, else the minimal model mutations (:func:`mutation_culprit`) and the input mode when
    special; a failure raised inside a shared TVM component (a TOPI operator, a legalization rule,
    the arithmetic analyzer: the innermost TVM frame) blames that component instead, every step only
    reaching it, and is keyed by it (one root whichever pass reached it). Otherwise a minimal
    sequence of Seedzer's own rewrites only (Relax IR mutations ``mutate.X``, no Relax pass) makes
    the failure Seedzer's, not TVM's: invalid. Always answers."""

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
        culprit = [failing_pass(observed) or (passes[-1] if passes else "")]
        shared = component_of(observed) is not None  # a shared TVM component at fault outranks the steps
        if not culprit[0] and minimal and not shared:  # Seedzer's Relax IR mutations and no Relax pass
            return context.verdict(NOT_A_BUG, f"{INVALID}: {SEEDZER_STEP} is the only culprit (the minimal sequence "
                                   f"{', '.join(p.label() for p in minimal)} has no Relax pass): "
                                   f"{observed.headline()[:200]}", observed)
        if not culprit[0]:
            special = [input_culprit(case.input_mode, observed)] if case.input_mode != RANDOM_INPUTS else []
            culprit = sorted({mutation_culprit(m) for m in case.model_mutations}) + special or \
                [observed.pass_name or "build"]
        fault = graph_fault(observed, culprit, minimal)
        culprit = [fault.code]
        key = component_key(observed, fault.code) if fault.shared else root_key(KIND_NAME, observed, culprit)
        root = key.digest()
        bug_case = stored(dataclasses.replace(case.with_passes(minimal), expected=observed))
        verdict = context.verdict(BUG, "bug", observed, culprit, root, bug_case)
        verdict.at_fault = fault
        return verdict
