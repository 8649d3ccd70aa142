"""A schedule trace as data: TVM's trace JSON read into :class:`Instruction` items and written back.

TVM serializes a ``tvm.s_tir.Trace`` (``trace.as_json()``) as ``[instructions, decisions]``: each
instruction is ``[kind, inputs, attrs, outputs]`` and each decision ``[index, value]``. An input is
a random variable's name (``b0`` a block, ``l1`` a loop, ``v2`` an integer), ``"None"``, a quoted
string (``'"read"'``), a number, a list of those, or an IndexMap as TVM's JSON graph (a string that
starts with ``{``); an output is a fresh name (``_`` for none). A sched case stores exactly that
JSON, so ``tvm.s_tir.Trace.apply_json_to_schedule`` replays it too.

This module reads and writes the format, says whether a sequence of instructions is well-formed as
a trace (every name defined before it is used, once; known kinds; decisions only on samplers)
without TVM, renames random variables as TVM numbers them, and classifies the instruction kinds of
the 0.27 wheel (a test compares :data:`KINDS` with the installed API). It needs no TVM: the campaign
process checks corpus entries with it.

Depends on the standard library only (copied verbatim into repro.py).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

# --- kernel code (everything below is copied verbatim into repro.py) ---
GETTERS = frozenset({"GetSBlock", "GetLoops", "GetChildBlocks", "GetProducers", "GetConsumers",
                     "GetOutputBlocks"})
"""Pure instructions that look a block or loop up (they change nothing)."""
SAMPLERS = frozenset({"SampleCategorical", "SamplePerfectTile", "SamplePartitionedTile",
                      "SampleComputeLocation"})
"""Pure instructions that draw a value; their decision is stored with the trace."""
TRANSFORMING = frozenset({
    "Split", "LoopPartition", "Fuse", "Merge", "Reorder", "ReorderBlockIterVar", "AddUnitLoop",
    "Parallel", "Vectorize", "Unroll", "Bind", "Annotate", "Unannotate",
    "ComputeAt", "ReverseComputeAt", "ComputeInline", "ReverseComputeInline", "FuseReductionEpilogue",
    "CacheRead", "CacheWrite", "CacheInplace", "CacheIndex", "ReIndex", "ReindexCacheRead",
    "ReindexCacheWrite", "ReadAt", "WriteAt",
    "DecomposeReduction", "RFactor", "Blockize", "Tensorize",
    "TransformLayout", "TransformBlockLayout", "SetScope", "StorageAlign", "UnsafeSetDType",
    "UnsafeHideBufferAccess", "AnnotateBufferAccess", "DecomposePadding", "PadEinsum", "RollingBuffer",
})
"""Instructions that change the schedule (each is a schedule primitive)."""
POSTPROC_MARK = "EnterPostproc"
"""The no-op instruction after which MetaSchedule's postprocessors recorded theirs."""
KINDS = GETTERS | SAMPLERS | TRANSFORMING | {POSTPROC_MARK}
"""Every instruction kind of apache-tvm 0.27 (``tvm.s_tir.schedule.InstructionKind``)."""
UNSAFE = frozenset({"UnsafeSetDType", "UnsafeHideBufferAccess", "AnnotateBufferAccess"})
"""Primitives that, by their documented contract, let the IR state what is not so (a buffer's
dtype, the regions a block accesses): after one of them a wrong result or a later primitive's
failure is not TVM's fault (see :func:`is_unsafe`)."""
REASSOCIATING = frozenset({"RFactor", "Reorder", "Fuse", "Merge", "TransformBlockLayout",
                           "ReorderBlockIterVar", "Blockize", "Tensorize", "Vectorize", "Parallel",
                           "DecomposeReduction", "PadEinsum", "FuseReductionEpilogue"})
"""Primitives that may change the order in which a reduction combines its terms (a partial
reduction, reduction loops in another order, a vectorized or parallel reduction): with one of them
in a trace, a float reduction may round differently (:func:`reassociation_bound`)."""


STALE_FLAGS = frozenset({"CacheInplace"})
"""Primitives that leave the schedule's cached block flags stale by design: ``cache_inplace`` adds a
write after read, so its scope is no longer a stage pipeline, and TVM's own test runs it with
``debug_mask=VERIFY_SREF_TREE`` only ("cache_inplace could introduce WAR, which is expected but stage
pipeline property changes", tests/python/s_tir/schedule/test_tir_schedule_cache_read_write.py). Under
``debug_mask="all"`` every call it accepts fails ``VerifyCachedFlags`` (``Wrong stage_pipeline``)."""
VERIFY_SREF_TREE = 1
"""``tvm.s_tir.schedule.state.ScheduleDebugMask.VERIFY_SREF_TREE``."""


def debug_mask_for(instructions: Iterable[Any], debug_mask: str | int) -> str | int:
    """The debug mask a trace is checked with: ``debug_mask``, but only the sref tree's check when
    ``debug_mask`` is ``"all"`` and the trace has a :data:`STALE_FLAGS` primitive (``instructions``:
    instructions or their kinds)."""
    kinds = {getattr(i, "kind", i) for i in instructions}
    return VERIFY_SREF_TREE if debug_mask == "all" and kinds & STALE_FLAGS else debug_mask


def is_unsafe(kind: str, attrs: Sequence[Any]) -> bool:
    """Whether an instruction is unsafe by contract: an :data:`UNSAFE` primitive, or a ``split`` with
    ``disable_predication`` (its docstring: "may result in incorrect code generation if not used
    carefully": the schedule writer promises the factors divide the loop)."""
    return kind in UNSAFE or (kind == "Split" and len(attrs) > 1 and bool(attrs[1]))


class TraceError(ValueError):
    """A trace's JSON or instruction sequence is malformed (says which instruction and why)."""


@dataclasses.dataclass(frozen=True)
class Instruction:
    """One instruction of a trace, in TVM's JSON terms, with its decision (None: none)."""

    kind: str
    inputs: tuple[Any, ...] = ()
    attrs: tuple[Any, ...] = ()
    outputs: tuple[str, ...] = ()
    decision: Any = None

    def to_json(self) -> list[Any]:
        """``[kind, inputs, attrs, outputs]`` as TVM writes it."""
        return [self.kind, _lists(self.inputs), _lists(self.attrs), list(self.outputs)]

    def used(self) -> list[str]:
        """The random variables this instruction reads, in order."""
        return [name for name in _names(self.inputs)]

    def label(self) -> str:
        """Short form for messages, e.g. ``Split(l2, None, 4) -> l5, l6``."""
        args = ", ".join(_short(x) for x in (*self.inputs, *self.attrs))
        outs = f" -> {', '.join(self.outputs)}" if self.outputs else ""
        decision = f" [decision {json.dumps(self.decision)}]" if self.decision is not None else ""
        return f"{self.kind}({args}){outs}{decision}"


def _lists(value: Any) -> Any:
    if isinstance(value, (list, tuple)):
        return [_lists(v) for v in value]
    return value


def _tuples(value: Any) -> Any:
    if isinstance(value, (list, tuple)):
        return tuple(_tuples(v) for v in value)
    return value


def _short(value: Any) -> str:
    if isinstance(value, str) and value.startswith("{"):
        return "<IndexMap>"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_short(v) for v in value) + "]"
    return str(value)


def is_name(value: Any) -> bool:
    """Whether a JSON input is a random variable's name (not None, a quoted string or an IndexMap)."""
    return isinstance(value, str) and value not in ("None", "") and not value.startswith(('"', "{"))


def _names(values: Iterable[Any]) -> Iterator[str]:
    for value in values:
        if isinstance(value, (list, tuple)):
            yield from _names(value)
        elif is_name(value):
            yield value


def parse_trace(data: Any) -> list[Instruction]:
    """The instructions of TVM's trace JSON ``[instructions, decisions]`` (raises :class:`TraceError`)."""
    if isinstance(data, str):
        try:
            data = json.loads(data)
        except ValueError as exc:
            raise TraceError(f"the trace is not JSON: {exc}") from None
    if not isinstance(data, (list, tuple)) or len(data) != 2 or not all(isinstance(d, (list, tuple)) for d in data):
        raise TraceError("a trace is [instructions, decisions]")
    raw, raw_decisions = data
    decisions: dict[int, Any] = {}
    for entry in raw_decisions:
        if not (isinstance(entry, (list, tuple)) and len(entry) == 2 and isinstance(entry[0], int)
                and 0 <= entry[0] < len(raw)):
            raise TraceError(f"decision {entry!r} is not [index of an instruction, value]")
        decisions[entry[0]] = entry[1]
    out = []
    for index, entry in enumerate(raw):
        if not (isinstance(entry, (list, tuple)) and len(entry) == 4 and isinstance(entry[0], str)
                and all(isinstance(part, (list, tuple)) for part in entry[1:])):
            raise TraceError(f"instruction {index} is not [kind, inputs, attrs, outputs]: {entry!r}")
        kind, inputs, attrs, outputs = entry
        if not all(isinstance(o, str) for o in outputs):
            raise TraceError(f"instruction {index} ({kind}): its outputs are not names")
        out.append(Instruction(kind, _tuples(inputs), _tuples(attrs), tuple(outputs), decisions.get(index)))
    return out


def trace_json(instructions: Sequence[Instruction]) -> list[Any]:
    """TVM's trace JSON of ``instructions`` (what ``Trace.apply_json_to_schedule`` takes)."""
    return [[i.to_json() for i in instructions],
            [[n, _lists(i.decision)] for n, i in enumerate(instructions) if i.decision is not None]]


def _count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def decision_problem(inst: Instruction) -> str | None:
    """Why a sampler's recorded decision is out of its range as far as the trace alone tells (None: it
    may be in range): a categorical index beyond its candidates, a tile that is not as many positive
    factors as the sampler draws, a compute location below -2. Whether a tile's product is its loop's
    extent, or a location names a loop there is, only applying the trace tells."""
    decision, attrs = inst.decision, inst.attrs
    if decision is None:
        return None
    if inst.kind == "SampleCategorical":
        candidates = attrs[0] if attrs and isinstance(attrs[0], (list, tuple)) else ()
        if not _count(decision) or not 0 <= decision < len(candidates):
            return f"decision {decision!r} is not the index of one of its {len(candidates)} candidates"
    elif inst.kind in ("SamplePerfectTile", "SamplePartitionedTile"):
        n = attrs[0] if attrs and _count(attrs[0]) else None
        if not isinstance(decision, (list, tuple)) or not all(_count(d) and d > 0 for d in decision) \
                or (n is not None and len(decision) != n):
            return f"decision {decision!r} is not {n if n is not None else 'its'} positive tile factors"
    elif inst.kind == "SampleComputeLocation" and not (_count(decision) and decision >= -2):
        return f"decision {decision!r} is not a compute location (-2, -1 or a loop's index)"
    return None


def trace_problem(instructions: Sequence[Instruction], kinds: Iterable[str] = KINDS) -> str | None:
    """Why ``instructions`` cannot be a trace (None: they can): an unknown kind, a random variable
    used before it is defined or defined twice, a decision on an instruction that samples nothing or
    out of its range (:func:`decision_problem`). Whether TVM accepts the arguments is known only by
    applying it."""
    known = frozenset(kinds)
    defined: set[str] = set()
    for index, inst in enumerate(instructions):
        if inst.kind not in known:
            return f"instruction {index}: unknown instruction kind {inst.kind!r}"
        for name in inst.used():
            if name not in defined:
                return f"instruction {index} ({inst.kind}): random variable {name!r} is not defined before it"
        if inst.decision is not None and inst.kind not in SAMPLERS:
            return f"instruction {index} ({inst.kind}) has a decision but samples nothing"
        wrong = decision_problem(inst)
        if wrong is not None:
            return f"instruction {index} ({inst.kind}): {wrong}"
        for name in inst.outputs:
            if name == "_":
                continue
            if name in defined or not is_name(name):
                return f"instruction {index} ({inst.kind}): output {name!r} is defined twice or is not a name"
            defined.add(name)
    return None


def check_trace(instructions: Sequence[Instruction]) -> list[Instruction]:
    """``instructions`` when :func:`trace_problem` finds nothing (raises :class:`TraceError`)."""
    problem = trace_problem(instructions)
    if problem is not None:
        raise TraceError(problem)
    return list(instructions)


def _rename(value: Any, names: dict[str, str]) -> Any:
    if isinstance(value, tuple):
        return tuple(_rename(v, names) for v in value)
    return names.get(value, value) if is_name(value) else value


def renamed(instructions: Sequence[Instruction], names: dict[str, str]) -> list[Instruction]:
    """``instructions`` with random variables renamed by ``names`` (others kept)."""
    return [dataclasses.replace(i, inputs=_rename(i.inputs, names),
                                outputs=tuple(names.get(o, o) for o in i.outputs)) for i in instructions]


def canonical(instructions: Sequence[Instruction]) -> list[Instruction]:
    """``instructions`` with their random variables numbered as TVM numbers them (``b0``, ``l1``,
    ...: the kind letter, then the count of outputs before it)."""
    names: dict[str, str] = {}
    count = 0
    for inst in instructions:
        for out in inst.outputs:
            if out != "_":
                names[out] = f"{out[0]}{count}"
            count += 1
    return renamed(instructions, names)


def transforming(instructions: Sequence[Instruction]) -> list[str]:
    """The kinds of the instructions that change the schedule, in order."""
    return [i.kind for i in instructions if i.kind in TRANSFORMING]
