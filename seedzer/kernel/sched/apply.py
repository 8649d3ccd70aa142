"""A schedule trace applied one instruction at a time, each through the ``tvm.s_tir.Schedule`` method
a user would call, then MetaSchedule's postprocessors.

TVM's ``Trace.apply_json_to_schedule`` applies a whole trace in one call; here every instruction is
one step, so that a failure names the primitive and its position, TIR's well-formedness verifier
runs after each primitive that accepted its arguments, and a reproducer's calls are the public
Schedule API. :data:`APPLY` maps each instruction kind to the call (its inputs and attributes in
TVM's JSON order, :mod:`seedzer.kernel.sched.trace`). Judged per step:

- the primitive refused its arguments (``ScheduleError``, or a ``ValueError``/``TypeError``/
  ``IndexError`` TVM raises on an argument), or the trace does not fit the IR (a name it expects is
  missing, a getter returns another number of loops): ``invalid``, never a bug;
- any other error inside the primitive (an ``InternalError``: a failed check): ``exception``;
- the IR after the primitive fails ``verify_well_formed``, or, after a primitive that adds copies
  (:data:`COPYING`), ``OOBChecker`` finds an access out of range in a function it found in range, both the
  input function and the IR that primitive was given (a cache copy beyond its buffer): ``illformed``;
- a postprocessor returning False rejects the schedule (MetaSchedule discards it): ``invalid``.

After an unsafe primitive (:func:`~seedzer.kernel.sched.trace.is_unsafe`) the IR may state what is
not so: a later failure is ``invalid``. Depends on tvm and the kernel modules before it only (copied
verbatim into repro.py).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

import tvm
import tvm_ffi
from tvm.s_tir import Schedule

from seedzer.kernel.common import OPT, Observation, Stage, Symptom, error_text, tvm_frames
from seedzer.kernel.sched.trace import TRANSFORMING, Instruction, debug_mask_for, is_unsafe
from seedzer.kernel.tir.lowering import OnStep, StepFailure, quiet_step, symptom_of

# --- kernel code (everything below is copied verbatim into repro.py) ---
REFUSALS = ("ScheduleError", "ValueError", "TypeError", "IndexError")
"""Error types with which TVM refuses a primitive's arguments (its ``ScheduleError``, and its
argument checks ``TVM_FFI_CHECK(cond, ValueError)``...): an invalid test case. Everything else a
primitive raises (``InternalError``: a failed ``ICHECK``) is a candidate bug."""
REFUSING_CHECKS = ("Valid index:",)
"""Starts of ``InternalError`` messages that are argument checks all the same: ``compute_at`` and
``reverse_compute_at`` throw ``Valid index:(-1, -2, [a, b]), current index=i`` on an ``index`` argument out
of the range their docstring gives (src/s_tir/schedule/primitive/compute_at.cc)."""


INTERNAL_TYPE_ERRORS = ("mismatched types",)
"""``TypeError`` messages that are no argument check: TVM building an expression of two index dtypes inside the
primitive (``rolling_buffer`` comparing an int64 loop variable with an int32 literal) is its own failure."""


COPYING = frozenset({"CacheRead", "CacheWrite", "CacheInplace", "ReIndex", "ReindexCacheRead", "ReindexCacheWrite",
                     "ReadAt", "WriteAt", "DecomposePadding", "PadEinsum", "RollingBuffer"})
"""Primitives that add blocks copying a region of a buffer: after them ``OOBChecker`` judges the
copies. (After a primitive that rewrites index expressions, such as ``transform_block_layout``, the
checker may fail to follow a guard that still keeps an access in range: it is not asked.)"""
SEED = 1
"""The schedule's random seed: a sampler whose recorded decision is unusable draws again, the same way
on every run."""


class TraceMismatch(Exception):
    """The trace does not fit the IR it is applied to (not a bug of TVM)."""


def _value(value: Any, rvs: dict[str, Any]) -> Any:
    """A JSON input as the Schedule method takes it: a random variable, None, a string, an IndexMap."""
    if isinstance(value, (list, tuple)):
        return [_value(v, rvs) for v in value]
    if not isinstance(value, str):
        return value
    if value == "None":
        return None
    if value.startswith('"') and value.endswith('"') and len(value) >= 2:
        return value[1:-1]
    if value.startswith("{"):
        return tvm.ir.load_json(value)
    if value not in rvs:
        raise TraceMismatch(f"random variable {value!r} is not defined")
    return rvs[value]


def _attr(value: Any) -> Any:
    """An attribute as the Schedule method takes it (an IndexMap from its JSON graph)."""
    if isinstance(value, str) and value.startswith("{"):
        return tvm.ir.load_json(value)
    return value


def _buffer(index_type: int, index: int) -> tuple[str, int]:
    return ("read" if index_type == 0 else "write", index)


Call = Callable[[Schedule, list[Any], list[Any], Any], Any]

APPLY: dict[str, Call] = {
    "GetSBlock": lambda s, i, a, d: s.get_sblock(a[0], a[1]),
    "GetLoops": lambda s, i, a, d: s.get_loops(i[0]),
    "GetChildBlocks": lambda s, i, a, d: s.get_child_blocks(i[0]),
    "GetProducers": lambda s, i, a, d: s.get_producers(i[0]),
    "GetConsumers": lambda s, i, a, d: s.get_consumers(i[0]),
    "GetOutputBlocks": lambda s, i, a, d: s.get_output_blocks(i[0]),
    "SampleCategorical": lambda s, i, a, d: s.sample_categorical(a[0], a[1], decision=d),
    "SamplePerfectTile": lambda s, i, a, d: s.sample_perfect_tile(i[0], a[0], a[1], decision=d),
    "SamplePartitionedTile": lambda s, i, a, d: s.sample_partitioned_tile(i[0], a[0], a[1], a[2], decision=d),
    "SampleComputeLocation": lambda s, i, a, d: s.sample_compute_location(i[0], decision=d),
    "Split": lambda s, i, a, d: s.split(i[0], i[1:], preserve_unit_iters=bool(a[0]), disable_predication=bool(a[1])),
    "LoopPartition": lambda s, i, a, d: s.loop_partition(i[0], i[1:], preserve_unit_iters=bool(a[0])),
    "Fuse": lambda s, i, a, d: s.fuse(*i, preserve_unit_iters=bool(a[0])),
    "Merge": lambda s, i, a, d: s.merge(*i),
    "Reorder": lambda s, i, a, d: s.reorder(*i),
    "ReorderBlockIterVar": lambda s, i, a, d: s.reorder_block_iter_var(i[0], list(i[1])),
    "AddUnitLoop": lambda s, i, a, d: s.add_unit_loop(i[0]),
    "Parallel": lambda s, i, a, d: s.parallel(i[0]),
    "Vectorize": lambda s, i, a, d: s.vectorize(i[0]),
    "Unroll": lambda s, i, a, d: s.unroll(i[0]),
    "Bind": lambda s, i, a, d: s.bind(i[0], a[0]),
    "Annotate": lambda s, i, a, d: s.annotate(i[0], a[0], i[1]),
    "Unannotate": lambda s, i, a, d: s.unannotate(i[0], a[0]),
    "ComputeAt": lambda s, i, a, d: s.compute_at(i[0], i[1], bool(a[0]), int(a[1])),
    "ReverseComputeAt": lambda s, i, a, d: s.reverse_compute_at(i[0], i[1], bool(a[0]), int(a[1])),
    "ComputeInline": lambda s, i, a, d: s.compute_inline(i[0]),
    "ReverseComputeInline": lambda s, i, a, d: s.reverse_compute_inline(i[0]),
    "FuseReductionEpilogue": lambda s, i, a, d: s.fuse_reduction_epilogue(i[0], i[1]),
    "CacheRead": lambda s, i, a, d: s.cache_read(i[0], a[0], a[1], consumer_blocks=list(i[1]) or None),
    "CacheWrite": lambda s, i, a, d: s.cache_write(i[0], a[0], a[1], consumer_blocks=list(i[1]) or None),
    "CacheInplace": lambda s, i, a, d: s.cache_inplace(i[0], a[0], a[1]),
    "CacheIndex": lambda s, i, a, d: s.cache_index(i[0], a[0], a[1]),
    "ReIndex": lambda s, i, a, d: s.reindex(i[0], _buffer(a[1], a[0])),
    "ReindexCacheRead": lambda s, i, a, d: s.reindex_cache_read(i[0], a[0], a[1], i[1]),
    "ReindexCacheWrite": lambda s, i, a, d: s.reindex_cache_write(i[0], a[0], a[1], i[1]),
    "ReadAt": lambda s, i, a, d: s.read_at(i[0], i[1], a[0], a[1]),
    "WriteAt": lambda s, i, a, d: s.write_at(i[0], i[1], a[0], a[1]),
    "DecomposeReduction": lambda s, i, a, d: s.decompose_reduction(i[0], i[1]),
    "RFactor": lambda s, i, a, d: s.rfactor(i[0], a[0]),
    "Blockize": lambda s, i, a, d: s.blockize(i[0], preserve_unit_iters=bool(a[0])),
    "Tensorize": lambda s, i, a, d: s.tensorize(i[0], a[0], preserve_unit_iters=bool(a[1])),
    "TransformLayout": lambda s, i, a, d: s.transform_layout(
        i[0], _buffer(a[1], a[0]), i[1], pad_value=_attr(a[2]), assume_injective_transform=bool(a[3])),
    "TransformBlockLayout": lambda s, i, a, d: s.transform_block_layout(i[0], _attr(a[0])),
    "SetScope": lambda s, i, a, d: s.set_scope(i[0], a[0], a[1]),
    "StorageAlign": lambda s, i, a, d: s.storage_align(i[0], a[0], a[1], a[2], a[3]),
    "UnsafeSetDType": lambda s, i, a, d: s.unsafe_set_dtype(i[0], a[0], a[1]),
    "UnsafeHideBufferAccess": lambda s, i, a, d: s.unsafe_hide_buffer_access(i[0], i[1], list(i[2])),
    "AnnotateBufferAccess": lambda s, i, a, d: tvm.s_tir.schedule._ffi_api.ScheduleAnnotateBufferAccess(
        s, i[0], i[1], i[2], i[3]),
    "DecomposePadding": lambda s, i, a, d: s.decompose_padding(i[0], i[1]),
    "PadEinsum": lambda s, i, a, d: s.pad_einsum(i[0], list(a[0])),
    "RollingBuffer": lambda s, i, a, d: s.rolling_buffer(i[0], a[0]),
    "EnterPostproc": lambda s, i, a, d: s.enter_postproc(),
}
"""Each instruction kind as the Schedule method a user calls: ``(schedule, inputs, attrs, decision)``
with the inputs' random variables resolved, returning the outputs."""


def _outputs(result: Any) -> list[Any]:
    if result is None:
        return []
    if isinstance(result, (list, tuple)) or type(result).__name__ == "Array":
        return list(result)
    return [result]


def _bind(inst: Instruction, result: Any, rvs: dict[str, Any]) -> None:
    outputs = _outputs(result)
    if len(outputs) != len(inst.outputs):
        raise TraceMismatch(f"{inst.kind} gave {len(outputs)} outputs, the trace names {len(inst.outputs)}")
    for name, value in zip(inst.outputs, outputs, strict=True):
        if name != "_":
            rvs[name] = value


def verify(mod: Any) -> str | None:
    """None when every PrimFunc of ``mod`` passes TIR's well-formedness verifier, else its error."""
    for func in mod.functions.values():
        if isinstance(func, tvm.tirx.PrimFunc):
            try:
                tvm.s_tir.analysis.verify_well_formed(func, True)
            except Exception as exc:  # the verifier raises on the first violation
                return str(exc)
    return None


def out_of_bounds(mod: Any) -> str | None:
    """None when TVM's ``OOBChecker`` proves every constant-bounded access of ``mod`` in range, else
    its error."""
    try:
        tvm.s_tir.analysis.OOBChecker()(mod)
    except Exception as exc:  # the checker raises on the first access it proves out of range
        return str(exc).strip().splitlines()[-1]
    return None


def reason(exc: BaseException) -> str:
    """``Type: message`` of an error, without repeating a type its message already names."""
    text = error_text(exc)
    prefix = f"{type(exc).__name__}: "
    return text[len(prefix):] if text.startswith(prefix + type(exc).__name__) else text


def refusal(exc: BaseException) -> bool:
    """Whether ``exc`` is TVM refusing a primitive's arguments (see :data:`REFUSALS`, :data:`REFUSING_CHECKS`)."""
    return refused_message(error_text(exc))


def refused_message(message: str) -> bool:
    """Whether an error's ``Type: message`` is a refusal of a primitive's arguments."""
    error, _, text = message.partition(":")
    if error.strip() == "TypeError" and any(inner in text for inner in INTERNAL_TYPE_ERRORS):
        return False
    return error.strip() in REFUSALS or any(text.lstrip().startswith(check) for check in REFUSING_CHECKS)


@dataclasses.dataclass
class Applied:
    """A trace applied: the schedule, and the index of its first unsafe primitive (None: none)."""

    schedule: Any
    unsafe_at: int | None = None
    semantics_changed: str | None = None
    """Why the scheduled function may compute something else by the primitive's documented contract
    (``fuse_reduction_epilogue`` of a non-linear epilogue), or None."""
    interface_changed: str | None = None
    """Why the scheduled function takes other arguments than the function (``transform_layout`` of a
    parameter: the caller passes the data in the new layout), or None."""


def _fail(symptom: Symptom, name: str, index: int, message: str, exc: BaseException | None = None) -> StepFailure:
    return StepFailure(Observation(symptom, Stage.SCHEDULE, name, message[:4000], step_index=index,
                                   frames=tvm_frames(exc) if exc is not None else ()))


def _nonlinear_epilogue(sch: Any, block: Any) -> bool:
    """Whether a block's stored value takes a max or a min (a ReLU or a clip)."""
    found: list[Any] = []
    tvm_ffi.structural_walk(sch.get(block).body, [(tvm.tirx.Max, found.append), (tvm.tirx.Min, found.append)])
    return bool(found)


def _parameter_layout(sch: Any, func: Any, inst: Instruction, inputs: list[Any]) -> str | None:
    """The parameter whose layout ``transform_layout`` changes (None: an intermediate buffer)."""
    block = sch.get(inputs[0])
    regions = block.reads if inst.attrs[1] == 0 else block.writes
    index = int(inst.attrs[0])
    if not 0 <= index < len(regions):
        return None
    name = str(regions[index].source.name)
    return name if name in {str(p.name) for p in func.params} else None


def apply_trace(func: Any, instructions: Sequence[Instruction], *, verify_each: bool = True,
                debug_mask: str | int = "all", on_step: OnStep = quiet_step, seed: int = SEED) -> Applied:
    """``func`` scheduled by ``instructions`` one by one (raises :class:`StepFailure`, stage
    ``schedule``, the instruction's kind and index: see the module docstring)."""
    sch = Schedule(tvm.IRModule({"main": func}), seed=seed, debug_mask=debug_mask_for(instructions, debug_mask),
                   error_render_level="fast")
    applied = Applied(sch)
    in_bounds = verify_each and out_of_bounds(sch.mod) is None  # then the schedule must keep it so
    rvs: dict[str, Any] = {}
    for index, inst in enumerate(instructions):
        on_step(Stage.SCHEDULE, inst.kind, OPT)
        call = APPLY.get(inst.kind)
        if call is None:
            raise _fail(Symptom.INVALID, inst.kind, index, f"unknown instruction kind {inst.kind!r}")
        after_unsafe = applied.unsafe_at is not None
        given = sch.mod  # the IR this primitive is given (IR is immutable: the schedule makes a new module)
        try:
            inputs = [_value(v, rvs) for v in inst.inputs]
            if inst.kind == "TransformLayout" and applied.interface_changed is None:
                param = _parameter_layout(sch, func, inst, inputs)
                applied.interface_changed = f"transform_layout of parameter {param}" if param else None
            if inst.kind == "FuseReductionEpilogue" and _nonlinear_epilogue(sch, inputs[1]):
                applied.semantics_changed = ("fuse_reduction_epilogue of a non-linear epilogue applies it at every "
                                             "step of the reduction (documented in its docstring)")
            _bind(inst, call(sch, inputs, list(inst.attrs), inst.decision), rvs)
        except TraceMismatch as exc:
            raise _fail(Symptom.INVALID, inst.kind, index, f"the trace does not fit the IR: {exc}") from exc
        except Exception as exc:  # TVM raises many types
            if refusal(exc) or after_unsafe:
                why = "refused" if refusal(exc) else "failed after an unsafe primitive"
                raise _fail(Symptom.INVALID, inst.kind, index, f"{why}: {reason(exc)}") from exc
            raise _fail(symptom_of(exc), inst.kind, index, reason(exc), exc) from exc
        if is_unsafe(inst.kind, inst.attrs) and applied.unsafe_at is None:
            applied.unsafe_at = index
        if verify_each and inst.kind in TRANSFORMING and applied.unsafe_at is None:
            error = verify(sch.mod)
            if error is None and in_bounds and inst.kind in COPYING:
                found = out_of_bounds(sch.mod)
                # a copy is blamed only when the IR it was given had no such access (compute_inline may leave a
                # guarded read OOBChecker cannot prove in range: the copying primitive after it did not make it)
                made = found is not None and out_of_bounds(given) is None
                error = f"the schedule made an access out of bounds: {found}" if made else None
            if error is not None:
                raise _fail(Symptom.ILLFORMED, inst.kind, index, error)
    return applied


def make_postproc(name: str) -> Any:
    """MetaSchedule's postprocessor ``name`` (``tvm.s_tir.meta_schedule.postproc.<name>()``)."""
    from tvm.s_tir.meta_schedule import postproc

    return getattr(postproc, name)()


def apply_postprocs(applied: Applied, names: Sequence[str], first_index: int, *, verify_each: bool = True,
                    on_step: OnStep = quiet_step) -> None:
    """MetaSchedule's postprocessors ``names`` on the scheduled function, in order, as a tuning run
    applies them to a sampled schedule (raises :class:`StepFailure`; their steps are numbered from
    ``first_index``)."""
    if not names:
        return
    sch = applied.schedule
    sch.enter_postproc()
    for offset, name in enumerate(names):
        index = first_index + offset
        on_step(Stage.SCHEDULE, name, OPT)
        try:
            accepted = make_postproc(name).apply(sch)
        except Exception as exc:  # TVM raises many types
            symptom = Symptom.INVALID if applied.unsafe_at is not None else symptom_of(exc)
            raise _fail(symptom, name, index, reason(exc), exc) from exc
        if not accepted:
            raise _fail(Symptom.INVALID, name, index, f"the postprocessor {name} rejects the schedule")
        if verify_each and applied.unsafe_at is None:
            error = verify(sch.mod)
            if error is not None:
                raise _fail(Symptom.ILLFORMED, name, index, error)
