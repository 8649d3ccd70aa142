"""Witnesses: a failure reached only outside the pass contracts, re-rooted at a program a user could write.

A fuzzed pass sequence may reach a genuine TVM defect through a pass order TVM never runs (e.g.
LowerIntrin run early leaves ``x >> 63`` that NarrowDataType then narrows and crashes on). The gate's
contract rules would dismiss it, although the IR just before the failing pass is a valid program and
plain ``tvm.compile`` on it fails the same way. :func:`find_witness` takes that IR (the *witness*)
and checks, in this order, that it

1. can be printed, parses back from TVMScript and passes TIR's well-formedness verifier
   (:func:`ir_before`, in a forked child);
2. carries no attribute TVM's lowering reserves for itself (``compute_scope``...);
3. adds no undefined behaviour to the original seed lowered by the same steps, by the analysis the
   mutants get (:mod:`seedzer.tir.ub`), where undefined behaviour could excuse the failure (any for a
   wrong or slow run; a possibly-zero division for TVM's refusal of a division by zero);
4. fails the same way as a user program: through TVM's own pipeline (what ``tvm.compile`` runs), with
   the failing pass inserted at its contract position when it is not one of the pipeline's passes.

The witness case (its TVMScript with TVM's pipeline) then replaces the candidate, and the gate's
remaining rules judge it as they judge any case (a verifier report of TVM's own pipeline is still
dismissed, the culprit is bisected within TVM's pipeline, the root signature is the witness's): a
bug's ``repro.py`` starts from the witness. Any failed check is named in the dismissal that stands.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from seedzer.execute.forked import call_forked
from seedzer.finding.tir.context import COMPILE_STAGES, reproduces
from seedzer.kernel.common import Observation, Symptom
from seedzer.kernel.messages import ir_names
from seedzer.kernel.tir.case import Case, Step, reference_steps
from seedzer.passes.tir.contracts import pipeline_steps, reserved_attribute, within_contract

DIVISION = re.compile(r"division|modulo", re.IGNORECASE)
"""Undefined behaviour that can make a compiler refuse the program (TVM's "Divide by zero" checks)."""


MAKING_FAILED = "making it failed ("
"""How a :class:`WitnessIR` that could not be made says so (a step before it raised, crashed or timed out)."""


@dataclass(frozen=True)
class WitnessIR:
    """The IR just before a step, printed as TVMScript (empty when it could not be made), or why it
    is not a program TVM accepts as input."""

    script: str
    problem: str | None = None
    mixed: str | None = None
    """An iterator of another index dtype than its domain or its binding (:func:`mixed_index_dtypes`): IR the
    verifier accepts and the printer hides (it prints the domain's dtype), set only when the IR could be made."""
    unchecked: str | None = None
    """An invariant later passes rely on that the verifier does not check, broken (:func:`unrolled_nonconstant`),
    set only when the IR could be made."""


@dataclass(frozen=True)
class Witness:
    """A witness that fails the same way (``case`` expects ``observation``), or why there is none."""

    case: Case | None
    observation: Observation | None
    why_not: str = ""


def ir_before(case: Case, index: int) -> WitnessIR:
    """The PrimFunc after ``case.steps[:index]``, as TVMScript that parses back and is well-formed.
    Runs TVM: call it in a forked child."""
    import tvm

    from seedzer.kernel.tir.lowering import lower, make_target, parse_func, well_formed_error
    from seedzer.tvmio import script_of

    module = lower(parse_func(case.script), case.steps[:index], make_target(case.target))
    funcs = [f for f in module.functions.values() if isinstance(f, tvm.tirx.PrimFunc)]
    if len(funcs) != 1:
        return WitnessIR("", f"the IR before the step holds {len(funcs)} PrimFuncs, not one")
    func = funcs[0]
    if func.attrs is not None and "target" in func.attrs:  # bound by the lowering; a user program has none
        func = func.without_attr("target")
    script, mixed, unchecked = script_of(func), mixed_index_dtypes(func), unrolled_nonconstant(func)
    try:
        again = parse_func(script)
    except Exception as exc:  # TVMScript that does not parse back is not a program a user could write
        return WitnessIR(script, f"its TVMScript does not parse back ({type(exc).__name__}: "
                                 f"{(str(exc).splitlines() or [''])[0][:200]})", mixed, unchecked)
    error = well_formed_error(tvm.IRModule({"main": again}))
    if error is not None:
        return WitnessIR(script, f"it is not well-formed ({(error.splitlines() or [''])[0][:200]})", mixed,
                         unchecked)
    return WitnessIR(script, mixed=mixed, unchecked=unchecked)


def mixed_index_dtypes(func: Any) -> str | None:
    """The first block iterator of ``func`` whose dtype is not its domain's or its binding's (``block 'b':
    iterator v_k is int64, its domain int32, its binding int32``), or None. TVM's verifier accepts such IR,
    but a pass that narrows every index (ForceNarrowIndexToInt32) promises none is left. Runs TVM."""
    import tvm
    import tvm_ffi

    found: list[str] = []

    def visit(realize: Any) -> None:
        for iterator, value in zip(realize.block.iter_vars, realize.iter_values, strict=False):
            dtypes = (str(iterator.var.ty), str(iterator.dom.extent.ty), str(value.ty))
            if not found and len(set(dtypes)) > 1:
                found.append(f"block {realize.block.name_hint!r}: iterator {iterator.var.name} is {dtypes[0]}, its "
                             f"domain {dtypes[1]}, its binding {dtypes[2]}")

    tvm_ffi.structural_walk(func.body, (tvm.s_tir.SBlockRealize, visit))
    return found[0] if found else None


def unrolled_nonconstant(func: Any) -> str | None:
    """The first loop of ``func`` that must be unrolled (``T.unroll``) over an extent that is no constant
    (``loop i0_i is unrolled over 37 - T.max(i0_o * 5, 32)``), or None. The verifier accepts it, but
    UnrollLoop cannot unroll it ("Cannot unroll non-constant loop"): a pass that rewrites a loop's extent
    must drop the kind it can no longer honour. Runs TVM."""
    import tvm
    import tvm_ffi

    found: list[str] = []

    def visit(loop: Any) -> None:
        if not found and loop.kind == tvm.tirx.ForKind.UNROLLED and not isinstance(loop.extent, tvm.tirx.IntImm):
            found.append(f"loop {loop.loop_var.name} is unrolled over the non-constant extent {loop.extent}")

    tvm_ffi.structural_walk(func.body, (tvm.tirx.For, visit))
    return found[0] if found else None


def witness_steps(case: Case, failing: Step) -> list[Step] | None:
    """What the witness runs: TVM's pipeline, with the failing pass inserted at its contract position
    when it is not one of the pipeline's own passes (None: it has no contract for the case's target,
    so no program TVM builds runs it)."""
    pipeline = reference_steps(case.steps) or pipeline_steps()
    if any(s.name == failing.name for s in pipeline):
        return pipeline
    return within_contract(failing, str(case.target.get("kind", "llvm")))


ObserveFn = Callable[[Case, float], Observation]
"""Runs a case alone within a time limit."""
UbFn = Callable[[str, str], "str | None"]
"""The undefined-behaviour analysis of a TVMScript text against its seed's (None: nothing added)."""
MakeIrFn = Callable[[Case, int, float], "WitnessIR"]
"""Makes the IR before a step of a case, within a time limit."""


class WitnessSearch:
    """Finds the witness of a failure reached outside the contracts (see the module docstring).

    ``observe(case, timeout)`` runs a case alone; ``ub(witness, seed)`` is the undefined-behaviour
    analysis over two TVMScript texts (None: none added); ``make_ir`` makes the IR before a step (a
    forked child running :func:`ir_before` by default).
    """

    def __init__(self, observe: ObserveFn, ub: UbFn, timeout: float, make_ir: MakeIrFn | None = None) -> None:
        self.observe = observe
        self.ub = ub
        self.timeout = timeout
        self.make_ir = make_ir or forked_ir_before

    def find(self, program: Case, failure: Observation, seed: str | None, excusable: bool,
             names: frozenset[str]) -> Witness:
        """The witness of ``failure`` (observed when ``program`` ran; its ``step_index`` names the step),
        checked against the original ``seed`` (TVMScript, None: unknown)."""
        if failure.symptom is Symptom.HANG:
            return Witness(None, None, "a hang has none (how long a program takes is not judged from an "
                                       "intermediate one)")
        index = failure.step_index
        if index is None or not 0 <= index < len(program.steps):
            return Witness(None, None, "the failure names no step of the program")
        made = self.make_ir(program, index, self.timeout)
        if made.problem is not None:
            return Witness(None, None, f"the IR before {program.steps[index].name}: {made.problem}")
        reserved = reserved_attribute(made.script)
        if reserved is not None:
            return Witness(None, None, f"the IR before {program.steps[index].name} carries `{reserved}`, "
                                       "an attribute TVM's lowering reserves for itself")
        at_run_time = failure.stage not in COMPILE_STAGES
        if excusable and seed is not None:
            # against the seed lowered by the same steps: the analysis compares like with like
            lowered_seed = self.make_ir(dataclasses.replace(program, script=seed), index, self.timeout)
            undefined = self.ub(made.script, seed if lowered_seed.problem is not None else lowered_seed.script)
            if undefined is not None and not at_run_time and not DIVISION.search(undefined):
                undefined = None  # only a division by zero can make a compiler refuse a division by zero
            if undefined is not None:
                return Witness(None, None, f"the IR before {program.steps[index].name} has undefined "
                                           f"behaviour its original seed lacks ({undefined})")
        failing = program.steps[index]
        steps = witness_steps(program, failing)
        if steps is None:
            return Witness(None, None, f"{failing.name} has no contract for the target: no program TVM builds runs it")
        expected = dataclasses.replace(failure, step_index=None)
        case = dataclasses.replace(program, script=made.script, steps=tuple(steps), expected=expected)
        if failure.symptom is Symptom.ILLFORMED:
            case = dataclasses.replace(case, checks=dataclasses.replace(case.checks, illformed=True,
                                                                        pipeline_illformed=True))
        got = self.observe(case, self.timeout)
        if not reproduces(expected, got, names | ir_names(made.script)):
            return Witness(None, None, f"the IR before {program.steps[index].name}, run through TVM's own "
                                       f"pipeline, gives {got.headline()[:200]}")
        return Witness(dataclasses.replace(case, expected=got), got)


def forked_ir_before(program: Case, index: int, timeout: float) -> WitnessIR:
    """:func:`ir_before` in a forked child (a crash or a timeout is a reason, never a witness)."""
    made = call_forked(ir_before, program, index, timeout=timeout)
    if made.ok:
        value: WitnessIR = made.value
        return value
    return WitnessIR("", f"{MAKING_FAILED}{made.describe()})")

