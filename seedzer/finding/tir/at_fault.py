"""The pass at fault: the step that made the IR a failing step cannot handle, found from intermediate IRs.

A failure shows at one step (the pass that raised, the code generator) but is often made earlier: a
vectorized ``sinh`` that only the code generator rejects was made by VectorizeLoop; a non-Ramp vector
index that CompactBufferAllocation rejects, by the pass that wrote it. Bisection (:mod:`.culprit`)
names the passes a failure *needs*, which includes passes that only enable it (StmtSimplify removing a
guard that kept a loop scalar) and leaves out which of them is wrong. Here the IR itself is asked.

For a case with steps ``s_0 .. s_{n-1}`` whose failure shows at step ``k`` (``n`` for the build), let
``IR_i`` be the PrimFunc after ``s_0 .. s_{i-1}`` (``IR_0`` the input). From ``IR_i`` the *minimal
remainder* runs: the steps from ``i`` on, each optional one in its minimal form or left out (as in a
minimal lowering), the failing step as it ran. When ``IR_i`` fails the same way from there, whatever
the failing step cannot handle is already in ``IR_i``: one of ``s_0 .. s_{i-1}`` made it. A failure
baked into ``IR_i`` stays in every later IR, so the earliest such ``i`` is found by binary search, and
``s_{i-1}`` is the pass at fault (it is optional: a mandatory step runs in the remainder as well).
When even ``IR_0`` fails so, the input asks for it and the failing step itself is at fault.

A wrong result is asked differently: its culprit's passes before the last one only enable it when
``IR_j``, the IR just before that last culprit pass ``s_j``, still gives the wrong result with
``s_j`` applied as it was; then the root is named after ``s_j`` alone, and the enabling passes stay in
the reproducer (their effect is in the IR it starts from).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass

from seedzer.finding.component import component_of
from seedzer.finding.fault import FaultRules
from seedzer.finding.tir.context import TirContext, reproduces
from seedzer.finding.tir.culprit import Culprit, variant
from seedzer.finding.tir.witness import MAKING_FAILED, WitnessIR, forked_ir_before
from seedzer.finding.verdict import AtFault as Fault
from seedzer.kernel.common import OPT, OPT_VS_REFERENCE, Observation, Symptom, label_parts, step_label
from seedzer.kernel.messages import ir_names, normalize
from seedzer.kernel.tir.case import FUZZED, Case, Step

ObserveFn = Callable[[Case], Observation]
"""Runs a case alone (in a forked child) and returns what it showed."""
MakeIrFn = Callable[[Case, int], WitnessIR]
"""The TVMScript of a case's IR after its first ``i`` steps (or why it could not be made)."""
Reproduces = Callable[[Observation, Observation, str], bool]
"""Whether an observation (second) is the expected failure (first), given the TVMScript it ran on."""

HOST_STEPS = ("tirx.SplitHostDevice", "tirx.MakePackedAPI")
"""Steps after which the IR is a host module, no longer a PrimFunc a user could write: a build or run
failure is searched for in the IRs before the first of them."""
MINIMAL_FAILS = "the minimal lowering fails, the IR is unusable: "
"""How the kernel reports a minimal lowering that fails: from an IR whose remainder keeps no optional
step (a build failure's), the minimal lowering is the program itself, so its failure is the one sought."""
MAX_TESTS = 8
"""Most intermediate IRs one localization runs (a binary search over 60 steps needs 6)."""
ERRORS = (Symptom.EXCEPTION, Symptom.ILLFORMED, Symptom.CRASH)


@dataclass(frozen=True)
class AtFault:
    """The pass at fault (None: not localized, with ``why``) and the intermediate IRs run."""

    step: Step | None
    tests: int
    why: str = ""


def failing_index(case: Case, failure: Observation) -> int | None:
    """The index of the step the failure showed at in the optimized program (the step count for a
    build or run failure); None when it showed elsewhere (another program, or no step)."""
    program, _ = label_parts(failure.pass_name or "")
    if failure.step_index is not None:
        return failure.step_index if program == OPT and failure.step_index < len(case.steps) else None
    return len(case.steps) if failure.stage is not None and failure.stage.value in ("build", "run") else None


def from_ir(case: Case, script: str, start: int, failing: int) -> Case:
    """The minimal remainder of ``case`` run from ``script`` (its IR after ``start`` steps): the steps
    from ``start`` on, optional ones minimal, the failing step kept as it ran."""
    rest = dataclasses.replace(case, script=script, steps=case.steps[start:])
    keep = [failing - start] if failing < len(case.steps) else []
    return variant(rest, keep)


class Localizer:
    """Finds the pass at fault of a failure (see the module docstring)."""

    def __init__(self, observe: ObserveFn, make_ir: MakeIrFn, reproduces: Reproduces,
                 max_tests: int = MAX_TESTS) -> None:
        self.observe, self.make_ir, self.reproduces, self.max_tests = observe, make_ir, reproduces, max_tests
        self.tests = 0

    def _fails_from(self, case: Case, failure: Observation, start: int, failing: int) -> bool | None:
        """Whether the IR after ``start`` steps fails the same way from its minimal remainder (None:
        the IR could not be made)."""
        self.tests += 1
        made = self.make_ir(case, start) if start > 0 else WitnessIR(case.script)
        if made.problem is not None or not made.script:
            return None
        got = self.observe(from_ir(case, made.script, start, failing))
        if got.symptom is Symptom.INVALID and got.message.startswith(MINIMAL_FAILS):
            names = ir_names(made.script)
            return normalize(got.message[len(MINIMAL_FAILS):], names) == normalize(failure.headline(), names)
        return self.reproduces(dataclasses.replace(failure, step_index=None), got, made.script)

    def error(self, case: Case, failure: Observation) -> AtFault:
        """The pass at fault of an error, an ill-formed IR or a crash."""
        failing = failing_index(case, failure)
        if failure.symptom not in ERRORS or failing is None:
            return AtFault(None, 0, "it did not show at a step of the optimized program")
        high = failing
        if failing == len(case.steps):  # a build or run failure: from the last IR a user could write
            high = next((i for i, s in enumerate(case.steps) if s.name in HOST_STEPS), failing)
        low = 0  # invariant: the IR after `high` steps fails; after `low - 1` it does not
        first = self._fails_from(case, failure, high, failing)
        if first is None and high > 0:  # that IR does not print back: the input itself may decide
            if self._fails_from(case, failure, 0, failing):
                at = case.steps[failing] if failing < len(case.steps) else None
                return AtFault(at, self.tests, "" if at else "the input fails the build as it is")
            return AtFault(None, self.tests, f"the IR after {high} steps could not be made")
        if not first:
            return AtFault(None, self.tests, "the last IR searched does not fail the same way from there")
        while low < high and self.tests < self.max_tests:
            middle = (low + high) // 2
            fails = self._fails_from(case, failure, middle, failing)
            if fails is None:
                return AtFault(None, self.tests, f"the IR after {middle} steps could not be made")
            if fails:
                high = middle
            else:
                low = middle + 1
        if low < high:
            return AtFault(None, self.tests, f"out of tests between steps {low} and {high}")
        if high == 0:
            at = case.steps[failing] if failing < len(case.steps) else None
            return AtFault(at, self.tests, "" if at else "the input fails the build as it is")
        return AtFault(case.steps[high - 1], self.tests)

    def enabling(self, case: Case, failure: Observation, culprit: list[int]) -> AtFault:
        """For a wrong result: the last culprit step alone at fault when the earlier ones only enable
        it (``culprit``: the culprit's step indices, in order). From the IR just before that step,
        the step is the only insertion and the reference the minimal lowering, as in bisection."""
        if failure.symptom is not Symptom.MISMATCH or len(culprit) < 2:
            return AtFault(None, 0, "one culprit pass")
        last = culprit[-1]
        self.tests += 1
        made = self.make_ir(case, last)
        if made.problem is not None or not made.script:
            return AtFault(None, self.tests, f"the IR before {case.steps[last].name}: {made.problem}")
        rest = dataclasses.replace(case, script=made.script, steps=case.steps[last:], expected=failure)
        got = self.observe(variant(rest, [0]))
        if not self.reproduces(dataclasses.replace(failure, comparison=OPT_VS_REFERENCE), got, made.script):
            return AtFault(None, self.tests, f"from the IR before {case.steps[last].name} it gives {got.headline()}")
        return AtFault(case.steps[last], self.tests)

INVALID_IR = ("not well-formed", "Check failed")
"""What makes an intermediate IR that does not print back *invalid* rather than printed badly: the
verifier's report, or a constructor's type check failing as it parses (e.g. an int64 Add given an int32
operand). A parse error of another kind may be the printer's (a buffer view printed as an expression)."""
TYPE_CHECK = "Check failed"
"""A constructor's check failing while the TVMScript parses: raised at the first such node, before the
parser's closing well-formedness check, so IR that fails it has a defect IR failing only that last
check did not have."""


def verified_input(case: Case, index: int) -> bool:
    """Whether the verifier accepted the IR step ``index`` of the optimized program received (it runs
    after every step from the first fuzzed one on, see the kernel's ``watch_from``)."""
    from seedzer.kernel.tir.observe import watch_from

    start = watch_from(case, OPT, case.steps)
    return start is not None and start < index


def first_broken(problem: Callable[[int], str | None], high: int, found: str) -> tuple[int, str]:
    """The fewest steps after which the IR has a problem (``problem(i)``: the IR after ``i`` steps, None when
    it has none), by binary search between the input (none) and ``high`` steps (``found``), with that problem:
    a defect made stays in every later IR up to ``high``."""
    low = 0
    while high - low > 1:
        middle = (low + high) // 2
        seen = problem(middle)
        if seen is not None:
            high, found = middle, seen
        else:
            low = middle
    return high, found


def made_invalid(make_ir: Callable[[Case, int], WitnessIR], case: Case, culprit: list[int]) -> tuple[Step, str] | None:
    """The step that made IR with a defect its input did not have, when it is a culprit step
    (``culprit``: the culprit's step indices, in order), with what is wrong with its output; None when
    none did. Either a culprit step given a valid program made IR the verifier or a type check rejects
    (:data:`INVALID_IR`), or a culprit step received IR that fails a constructor's type check as it
    parses back (:data:`TYPE_CHECK`) and the first step before it whose output fails it (found by
    binary search: a later pass may simplify the defect away, never before the culprit step) has a
    culprit step's name (e.g. a fuzzed LoopPartition before the pipeline's own)."""
    names = {case.steps[i].name for i in culprit}

    def typed(i: int) -> str | None:  # an IR that could not be made (a step raised) fails no type check
        made = make_ir(case, i)
        problem = made.problem
        return problem if problem is not None and TYPE_CHECK in problem and not problem.startswith(MAKING_FAILED) \
            else None

    for index in culprit:
        before = make_ir(case, index)
        if before.problem is None and before.script:
            after = make_ir(case, index + 1)  # not made: the step raised itself, its output is not the question
            if after.problem is not None and not after.problem.startswith(MAKING_FAILED) and \
                    any(word in after.problem for word in INVALID_IR):
                return case.steps[index], after.problem
            continue
        problem = typed(index)
        if problem is None or typed(0) is not None:
            continue
        high, problem = first_broken(typed, index, problem)
        return (case.steps[high - 1], problem) if case.steps[high - 1].name in names else None
    return None


UNCHECKED: tuple[tuple[str, str], ...] = (
    ("Cannot unroll non-constant loop", "unrolled loops have constant extents"),
)
"""Failures that report an invariant later passes rely on and TVM's verifier does not check, with the
invariant (:attr:`WitnessIR.unchecked` says where an IR breaks it): the pass whose output first breaks it
is at fault, not the one whose check fires (UnrollLoop reporting the ``T.unroll`` LoopPartition kept on
the symbolic extents it made)."""


def broke_unchecked(make_ir: Callable[[Case, int], WitnessIR], case: Case, failing: int) -> tuple[Step, str] | None:
    """The step whose output first breaks the invariant :attr:`WitnessIR.unchecked` reports, when the IR
    the failing step (index ``failing``) received breaks it and the input keeps it, with what is broken;
    None otherwise. Found by binary search over the intermediate IRs (they need not parse back: the
    invariant is read from the IR as made)."""

    def broken(i: int) -> str | None:
        return make_ir(case, i).unchecked

    what = broken(failing)
    if what is None or broken(0) is not None:
        return None
    high, what = first_broken(broken, failing, what)
    return case.steps[high - 1], what


class BrokenInvariant:
    """A failing step whose check reports an invariant the verifier does not check (:data:`UNCHECKED`),
    on IR that breaks it: the pass that first broke it is at fault, the failing step only reports it."""

    name = "unchecked-invariant"

    def decide(self, fault: TirFault) -> Fault | None:
        """The pass that broke the invariant, or None."""
        failing = fault.failing
        invariant = next((what for message, what in UNCHECKED if message in fault.got.message), None)
        if invariant is None or failing is None or failing >= len(fault.case.steps):
            return None
        broken = broke_unchecked(fault.make_ir, fault.case, failing)
        if broken is None or broken[0].name == fault.surfaced:
            return None
        step, what = broken
        return Fault(step.name, f"{step.name} left {what}, but {invariant} ({fault.surfaced} only reports it; "
                     "TVM's verifier does not check it)", fault.others(step.name) or (fault.surfaced,))


@dataclass
class TirFault:
    """What the TIR kind's fault rules read: the gate's context, the case and the failure it confirmed,
    the bisection's culprit (``found``: the passes the failure needs), and the case's intermediate IRs,
    each made once (a forked child each) and shared by the rules."""

    context: TirContext
    case: Case
    got: Observation
    found: Culprit
    made: dict[int, WitnessIR] = dataclasses.field(default_factory=dict)

    def make_ir(self, program: Case, index: int) -> WitnessIR:
        """The TVMScript of ``program``'s IR after ``index`` steps (the case's own made once)."""
        if program is self.case and index in self.made:
            return self.made[index]
        make = self.context.make_witness_ir or forked_ir_before
        made: WitnessIR = make(program, index, self.context.timeout)
        if program is self.case:
            self.made[index] = made
        return made

    def same(self, expected: Observation, observed: Observation, script: str) -> bool:
        """Whether ``observed`` (run on ``script``) is the failure ``expected`` describes."""
        return reproduces(expected, observed, self.context.names | ir_names(script))

    @property
    def needed(self) -> tuple[str, ...]:
        """The culprit's pass names."""
        return tuple(self.found.names())

    @property
    def failing(self) -> int | None:
        """The index of the step the failure showed at (:func:`failing_index`)."""
        return failing_index(self.case, self.got)

    @property
    def surfaced(self) -> str:
        """The name of the step the failure showed at (empty: none)."""
        return label_parts(self.got.pass_name or "")[1]

    @property
    def indices(self) -> list[int]:
        """The culprit's step indices, in order."""
        return [i for i, step in enumerate(self.case.steps) if any(step is s for s in self.found.steps)]

    def others(self, code: str) -> tuple[str, ...]:
        """The culprit's passes but ``code``: what only reached it."""
        return tuple(p for p in self.needed if p != code)

    def localizer(self) -> Localizer:
        """A :class:`Localizer` over this case's IRs."""
        return Localizer(self.context.observe, self.make_ir, self.same)


class IllformedOutput:
    """Ill-formed IR after a step whose input the verifier accepted (it runs after every step from the
    first fuzzed one on): that step (its output is invalid, its input was not)."""

    name = "illformed-output"

    def decide(self, fault: TirFault) -> Fault | None:
        """The step that emitted the ill-formed IR, or None."""
        failing, surfaced = fault.failing, fault.surfaced
        if fault.got.symptom is not Symptom.ILLFORMED or failing is None or failing >= len(fault.case.steps) \
                or not verified_input(fault.case, failing):
            return None
        return Fault(surfaced, f"the verifier accepted the IR {surfaced} was given and rejects its output",
                     fault.others(surfaced))


POSTCONDITIONS: dict[str, str] = {
    "tirx.ForceNarrowIndexToInt32": "it narrows every index (loops, block iterators, their domains and bindings) "
                                    "to int32",
}
"""What a pass promises of its output beyond TVM's verifier, by pass: an output that breaks it is the pass's
defect, whichever later pass trips on it (apache/tvm#20409: block iterators left int64)."""


def broken_postcondition(make_ir: Callable[[Case, int], WitnessIR], case: Case, culprit: list[int]
                         ) -> tuple[Step, str] | None:
    """The culprit step (``culprit``: step indices) with a promise in :data:`POSTCONDITIONS` whose output
    has an iterator of mixed index dtypes its input did not have, with what is mixed; None when none."""
    for index in culprit:
        step = case.steps[index]
        if step.name not in POSTCONDITIONS:
            continue
        after = make_ir(case, index + 1)
        if after.mixed is not None and make_ir(case, index).mixed is None:
            return step, after.mixed
    return None


class BrokenPostcondition:
    """Of the culprit passes, one whose output breaks what the pass promises of it (:data:`POSTCONDITIONS`:
    ForceNarrowIndexToInt32 leaving a block iterator int64 over an int32 domain, IR the verifier accepts and
    the printer hides): that pass, the later passes that trip on its output only reaching it."""

    name = "postcondition"

    def decide(self, fault: TirFault) -> Fault | None:
        """The pass that broke its promise, or None."""
        broken = broken_postcondition(fault.make_ir, fault.case, fault.indices)
        if broken is None:
            return None
        step, what = broken
        return Fault(step.name, f"{step.name} left {what}, but {POSTCONDITIONS[step.name]}", fault.others(step.name))


class MadeInvalid:
    """Of several culprit passes, the one that made IR with a defect its input did not have (the verifier
    rejects it, or a constructor's type check fails as it parses back: :func:`made_invalid`): that pass,
    the others only reaching the failure (a component that trips on such IR, e.g. the simplifier building
    an int64 + int32 Add, is not at fault)."""

    name = "made-invalid"

    def decide(self, fault: TirFault) -> Fault | None:
        """The pass that made the invalid IR, or None."""
        indices = fault.indices
        if len(indices) < 2:
            return None
        invalid = made_invalid(fault.make_ir, fault.case, indices)
        if invalid is None:
            return None
        step, problem = invalid
        return Fault(step.name, f"{step.name} made IR with a defect the IR it was given did not have ({problem})",
                     fault.others(step.name))


class SharedComponent:
    """A failure raised in a shared component (its TVM frames: a code generator's intrinsic rule, an
    operator's implementation, the arithmetic analyzer; :func:`~seedzer.finding.component.component_of`):
    that component, every culprit pass only reaching it, unless the IR the failing step received fails a
    constructor's type check (then the component only tripped on it, and the next rule finds its maker)."""

    name = "component"

    def decide(self, fault: TirFault) -> Fault | None:
        """The component, or None."""
        component = component_of(fault.got)
        if component is None:
            return None
        failing = fault.failing
        received = fault.make_ir(fault.case, failing) if failing is not None else None
        if received is not None and received.problem is not None and TYPE_CHECK in received.problem:
            return None  # it tripped on IR no program has (e.g. an int64 + int32 Add): the maker is at fault
        return Fault(component.name, f"raised in {component.frame}, code every pass reaching it shares",
                     fault.others(component.name), shared=True)


class Maker:
    """An error, ill-formed IR or a crash: the pass that made the IR the failing step cannot handle
    (:meth:`Localizer.error`: the earliest intermediate IR that, lowered minimally with the failing step,
    fails the same way); when that pass is not the failing step, the IR the failing step received
    decides: a valid program (it parses back as TVMScript and passes the verifier) makes the failing step
    the one at fault (the pass before only reached it), anything else the pass that made it."""

    name = "maker"

    def decide(self, fault: TirFault) -> Fault | None:
        """The pass at fault of an error, or None (not localized, or not an error)."""
        got, failing, surfaced = fault.got, fault.failing, fault.surfaced
        if got.symptom not in ERRORS:
            return None
        at = fault.localizer().error(fault.case, got)
        if at.step is None:
            return None
        if not surfaced or surfaced == at.step.name or failing is None:
            return Fault(at.step.name, f"{at.step.name} fails on the IR it is given, as a user program gives it",
                         fault.others(at.step.name))
        received = fault.make_ir(fault.case, failing) if failing < len(fault.case.steps) else \
            WitnessIR("", "a lowered host module")
        if received.problem is None and received.script:
            return Fault(surfaced, f"{surfaced} fails on the IR it received, a valid program (it parses back and "
                         f"passes the verifier): {at.step.name}, which made it, only reached it",
                         fault.others(surfaced) or (at.step.name,))
        return Fault(at.step.name, f"{at.step.name} made the IR {surfaced} fails on, which is no valid program "
                     f"({received.problem or 'it cannot be printed'})", (surfaced,))


class Enabling:
    """A wrong result: its last culprit pass when the ones before only enable it (from the IR just before
    that pass, it alone gives the wrong result: :meth:`Localizer.enabling`)."""

    name = "enabling"

    def decide(self, fault: TirFault) -> Fault | None:
        """The last culprit pass, or None."""
        enabled = fault.localizer().enabling(fault.case, fault.got, fault.indices)
        if enabled.step is None:
            return None
        return Fault(enabled.step.name, f"from the IR just before {enabled.step.name}, it alone gives the wrong "
                     "result", fault.others(enabled.step.name))


FAULT_RULES: FaultRules[TirFault] = FaultRules((IllformedOutput(), BrokenPostcondition(), BrokenInvariant(),
                                                MadeInvalid(), SharedComponent(), Maker(), Enabling()))
"""The TIR kind's fault rules, in the order they decide (the first answer wins; none: the bisected culprit
stands)."""


COMPOSITES: dict[str, tuple[str, ...]] = {
    "tirx.RemoveAssume": ("tirx.RemoveNoOp",),
    "s_tir.RemoveStoreUndef": ("tirx.RemoveNoOp",),
    "s_tir.HoistExpression": ("tirx.StmtSimplify", "tirx.RemoveNoOp"),
    "s_tir.HoistIfThenElse": ("tirx.StmtSimplify", "tirx.RemoveNoOp"),
}
"""Passes TVM builds as a ``Sequential`` of its own stage and other passes (remove_assume.cc,
remove_store_undef.cc, hoist_expression.cc), with those passes a user runs alone: a failure inside one of
them is that pass's defect (the d53 audit: RemoveAssume's 'A SeqStmt of length 1' is RemoveNoOp's, on a
no-op store into a 0-d buffer)."""
INNER = "inner-pass"
"""The name of the refinement that names a composite pass's inner pass (:func:`inner_pass`)."""


def inner_pass(observe: ObserveFn, make_ir: MakeIrFn, same: Reproduces, case: Case, got: Observation,
               decided: Fault) -> Fault | None:
    """When ``decided`` names a composite pass (:data:`COMPOSITES`) and ``got`` is an error: the first of its
    inner passes that, run alone in its place on the IR it was given (``make_ir``), fails the same way;
    None otherwise (the composite's own stage may be needed: it stays)."""
    inner, failing = COMPOSITES.get(decided.code, ()), failing_index(case, got)
    if not inner or got.symptom not in ERRORS or failing is None:
        return None
    index = next((i for i in range(min(failing, len(case.steps) - 1), -1, -1) if case.steps[i].name == decided.code),
                 None)
    if index is None:
        return None
    made = make_ir(case, index)
    if made.problem is not None or not made.script:
        return None
    keep = [0] + ([failing - index] if index < failing < len(case.steps) else [])
    program, surfaced = label_parts(got.pass_name or "")
    for name in inner:
        steps = (Step(name, role=FUZZED, optional=True), *case.steps[index + 1:])
        probe = variant(dataclasses.replace(case, script=made.script, steps=steps), keep)
        label = step_label(name, program) if surfaced == decided.code else got.pass_name
        if same(dataclasses.replace(got, step_index=None, pass_name=label), observe(probe), made.script):
            return Fault(name, f"{decided.code} runs {name} inside it (a Sequential in TVM's source); {name} alone, "
                         f"in its place on the IR it was given, fails the same way", (decided.code, *decided.reached),
                         rule=INNER)
    return None


def code_at_fault(context: TirContext, case: Case, got: Observation, found: Culprit) -> Fault | None:
    """The code at fault of a confirmed failure, the gate's last rule's root (``found``: the bisection's
    culprit, the passes the failure needs): the first answer of :data:`FAULT_RULES`, an inner pass of a
    composite one when it fails alone (:func:`inner_pass`). None: not decided (the bisected culprit stands)."""
    fault = TirFault(context, case, got, found)
    decided = FAULT_RULES.decide(fault)
    if decided is None:
        return None
    return inner_pass(context.observe, fault.make_ir, fault.same, case, got, decided) or decided
