"""A schedule plan as a sequence of items, the form the house's sequence mutators and the corpus keep.

A sched corpus entry's sequence is its plan: the instructions of its schedule trace, one
:class:`~seedzer.seed.PassSpec` each (the instruction kind as its name; its ``inputs``, ``attrs``,
``outputs`` and, for a sampler, ``decision`` as its arguments, in TVM's trace JSON terms:
:mod:`seedzer.kernel.sched.trace`), then the MetaSchedule postprocessors run after it
(``postproc.<Name>``). :func:`plan_items` and :func:`items_plan` turn a
:class:`~seedzer.kernel.sched.case.SchedPlan` (TVM's trace JSON, what the kernel case holds) into
items and back.

An edit of the items (a deletion, a crossover) may leave an instruction whose input is no longer
defined: :func:`settled` keeps a sequence as a trace (the instructions that lost an input go, with what
uses their results; a name defined again is the newer one from there on; a getter or sampler whose
results nothing uses goes; random variables numbered as TVM numbers them; the postprocessors last, in
MetaSchedule's order). :func:`items_problem` says why a stored sequence is not a plan (an unknown
instruction kind or postprocessor, a random variable used before it is defined, a decision out of its
range), in one line, without TVM: what resuming a campaign says of a hand-edited entry. TVM-free.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from seedzer.kernel.sched.case import LLVM_POSTPROCS, SchedPlan
from seedzer.kernel.sched.trace import (
    GETTERS,
    KINDS,
    SAMPLERS,
    Instruction,
    TraceError,
    canonical,
    is_name,
    parse_trace,
    trace_problem,
)
from seedzer.seed import PassSpec, passes_from_json

POSTPROC = "postproc."
"""The name prefix of a postprocessor item (``postproc.RewriteLayout``)."""
PURE = GETTERS | SAMPLERS
"""Instructions that change nothing: they support the primitives that use their results."""
FIELDS = ("attrs", "decision", "inputs", "outputs")
"""The arguments of an instruction item."""


def _tuples(value: Any) -> Any:
    if isinstance(value, (list, tuple)):
        return tuple(_tuples(v) for v in value)
    return value


def item_of(inst: Instruction) -> PassSpec:
    """The item of one instruction."""
    args: list[tuple[str, Any]] = [("attrs", _tuples(inst.attrs))]
    if inst.decision is not None:
        args.append(("decision", _tuples(inst.decision)))
    args += [("inputs", _tuples(inst.inputs)), ("outputs", tuple(inst.outputs))]
    return PassSpec(inst.kind, tuple(args))


def postproc_item(name: str) -> PassSpec:
    """The item of MetaSchedule's postprocessor ``name``."""
    return PassSpec(POSTPROC + name)


def is_postproc(item: PassSpec) -> bool:
    """Whether ``item`` is a postprocessor's."""
    return item.name.startswith(POSTPROC)


def instruction_of(item: PassSpec) -> Instruction:
    """The instruction of an item (raises :class:`~seedzer.kernel.sched.trace.TraceError` when its
    arguments are not an instruction's)."""
    args = dict(item.args)
    unknown = set(args) - set(FIELDS)
    if unknown:
        raise TraceError(f"{item.name}: unknown argument {sorted(unknown)[0]!r} (an instruction has "
                         f"{', '.join(FIELDS)})")
    inputs, attrs, outputs = args.get("inputs", ()), args.get("attrs", ()), args.get("outputs", ())
    if not all(isinstance(part, (list, tuple)) for part in (inputs, attrs, outputs)):
        raise TraceError(f"{item.name}: its inputs, attrs and outputs are not lists")
    if not all(isinstance(o, str) for o in outputs):
        raise TraceError(f"{item.name}: its outputs are not names")
    return Instruction(item.name, _tuples(inputs), _tuples(attrs), tuple(outputs), _tuples(args.get("decision")))


def split(items: Sequence[PassSpec]) -> tuple[list[PassSpec], list[str]]:
    """The instruction items and the postprocessors' names of a sequence."""
    return ([i for i in items if not is_postproc(i)],
            [i.name[len(POSTPROC):] for i in items if is_postproc(i)])


def plan_items(plan: SchedPlan) -> list[PassSpec]:
    """The items of a plan: its trace's instructions, then its postprocessors."""
    return [*(item_of(i) for i in parse_trace(plan.trace)), *(postproc_item(p) for p in plan.postprocs)]


def instructions_of(items: Sequence[PassSpec]) -> list[Instruction]:
    """The instructions of a sequence's instruction items (postprocessors left out)."""
    return [instruction_of(i) for i in items if not is_postproc(i)]


def items_plan(items: Sequence[PassSpec]) -> SchedPlan:
    """The plan of a sequence (settled first: :func:`settled`)."""
    kept = settled(items)
    instructions, postprocs = split(kept)
    return SchedPlan.of([instruction_of(i) for i in instructions], tuple(postprocs))


def _renamed(value: Any, names: dict[str, str]) -> Any:
    if isinstance(value, tuple):
        return tuple(_renamed(v, names) for v in value)
    return names.get(value, value) if is_name(value) else value


def repaired(instructions: Sequence[Instruction]) -> list[Instruction]:
    """``instructions`` as a trace: an unknown kind, or an instruction using a name no instruction before
    it defines, goes (and then so does what uses its results); a name defined again means the newer
    definition from there on; a decision stays on samplers only; then getters and samplers whose results
    nothing uses go; random variables renumbered (:func:`~seedzer.kernel.sched.trace.canonical`)."""
    names: dict[str, str] = {}
    kept: list[Instruction] = []
    for index, inst in enumerate(instructions):
        if inst.kind not in KINDS or any(name not in names for name in inst.used()):
            for out in inst.outputs:
                names.pop(out, None)
            continue
        outputs = tuple(out if out == "_" or not is_name(out) else f"{out[0]}{index}_{k}"
                        for k, out in enumerate(inst.outputs))
        inputs = _renamed(inst.inputs, names)
        names.update({old: new for old, new in zip(inst.outputs, outputs, strict=True) if old != new})
        kept.append(Instruction(inst.kind, inputs, inst.attrs, outputs,
                                inst.decision if inst.kind in SAMPLERS else None))
    return canonical(_without_orphans(kept))


def _without_orphans(instructions: list[Instruction]) -> list[Instruction]:
    """``instructions`` without the getters and samplers whose results nothing after them uses."""
    kept = list(instructions)
    while True:
        used = {name for inst in kept for name in inst.used()}
        orphans = [i for i, inst in enumerate(kept)
                   if inst.kind in PURE and not any(o in used for o in inst.outputs if o != "_")]
        if not orphans:
            return kept
        kept = [inst for i, inst in enumerate(kept) if i not in set(orphans)]


def settled(items: Sequence[PassSpec]) -> list[PassSpec]:
    """``items`` as a plan keeps them (see the module docstring): the instructions :func:`repaired`
    (an item that is no instruction goes), then the known postprocessors, each once, in MetaSchedule's
    order."""
    instructions: list[Instruction] = []
    for item in items:
        if is_postproc(item):
            continue
        try:
            instructions.append(instruction_of(item))
        except TraceError:
            continue
    postprocs = {i.name[len(POSTPROC):] for i in items if is_postproc(i)}
    return [*(item_of(i) for i in repaired(instructions)),
            *(postproc_item(p) for p in LLVM_POSTPROCS if p in postprocs)]


def items_problem(items: Sequence[PassSpec]) -> str | None:
    """Why a sequence is not a plan (None: it is): an unknown postprocessor or one before an instruction,
    an item that is no instruction, or a trace :func:`~seedzer.kernel.sched.trace.trace_problem` refuses."""
    seen_postproc = False
    instructions = []
    for index, item in enumerate(items):
        if is_postproc(item):
            name = item.name[len(POSTPROC):]
            if name not in LLVM_POSTPROCS:
                return f"item {index}: unknown postprocessor {name!r} (known: {', '.join(LLVM_POSTPROCS)})"
            seen_postproc = True
            continue
        if seen_postproc:
            return f"item {index} ({item.name}): an instruction after the postprocessors"
        try:
            instructions.append(instruction_of(item))
        except TraceError as exc:
            return f"item {index}: {exc}"
    return trace_problem(instructions)


def sequence_problem(passes_json: str) -> str | None:
    """:func:`items_problem` of a stored sequence's JSON (one that does not parse says so)."""
    try:
        items = passes_from_json(passes_json)
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        return f"the schedule plan is not a sequence of items ({type(exc).__name__}: {exc})"
    return items_problem(items)


def apart(items: Sequence[PassSpec], tag: str) -> list[PassSpec]:
    """``items`` with every random variable renamed apart (``<name>_<tag>``), so that they can be joined
    with another trace's without one name meaning two things."""
    instructions, postprocs = split(items)
    insts = [instruction_of(i) for i in instructions]
    names = {out: f"{out}_{tag}" for inst in insts for out in inst.outputs if out != "_" and is_name(out)}
    renamed = [Instruction(i.kind, _renamed(i.inputs, names), i.attrs, tuple(names.get(o, o) for o in i.outputs),
                           i.decision) for i in insts]
    return [*(item_of(i) for i in renamed), *(postproc_item(p) for p in postprocs)]


def plan_json(items: Sequence[PassSpec]) -> str:
    """The JSON of the plan of ``items`` (what a finding's ``passes.json`` shows)."""
    plan = items_plan(items)
    return json.dumps(plan.to_json(), indent=1)
