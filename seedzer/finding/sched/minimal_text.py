"""The text of a schedule finding's plain reproducer (``minimal.py``): the PrimFunc in TVMScript, the trace as
the ``tvm.s_tir.Schedule`` calls a user writes (one line per instruction, :func:`schedule_call`, the same
calls the kernel makes: :data:`seedzer.kernel.sched.apply.APPLY`), then the failing step and its check:
the error a primitive or a postprocessor raises, a death by a signal, the verifier's (or the bounds
checker's) complaint, ``tvm.compile``'s error, or the scheduled build against the unscheduled one on the
kernel's inputs (a wrong result). TVM-free: the search that decides what goes in is
:mod:`seedzer.finding.sched.minimal_repro`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from seedzer.finding.minimal import text as parts
from seedzer.finding.minimal.primfunc import Param, function_lines, imports, input_lines
from seedzer.finding.minimal.program import PASS_FAILURE, WRONG_RESULT, MinimalProgram
from seedzer.finding.minimal.text import Docs
from seedzer.kernel.sched.trace import Instruction, debug_mask_for

SCHED_NEEDS = ("apache-tvm", "numpy")
"""What a schedule plain reproducer needs from PyPI."""
BUFFER = {0: "read", 1: "write"}
"""A buffer index type as the Schedule API spells it."""


def value(item: Any) -> str:
    """A trace input or attribute as Python: a random variable's name, ``None``, a string, an IndexMap (read
    from TVM's JSON graph), a number, a list."""
    if isinstance(item, (list, tuple)):
        return "[" + ", ".join(value(v) for v in item) + "]"
    if isinstance(item, str):
        if item == "None":
            return "None"
        if item.startswith('"') and item.endswith('"') and len(item) >= 2:
            return repr(item[1:-1])
        if item.startswith("{"):
            return f"tvm.ir.load_json({item!r})"
        return item
    return repr(item)


def text(item: Any) -> str:
    """An attribute that is a plain string (a block's name, a scope, an annotation key) as Python."""
    return value(item) if not isinstance(item, str) or item.startswith("{") else repr(item)


Printer = Callable[[list[Any], list[Any], Any], str]
"""Prints a call from an instruction's inputs, attributes and decision."""


def _loops(inputs: list[Any]) -> str:
    return ", ".join(value(v) for v in inputs)


CALLS: dict[str, Printer] = {
    "GetSBlock": lambda i, a, d: f"sch.get_sblock({text(a[0])}, func_name={text(a[1])})",
    "GetLoops": lambda i, a, d: f"sch.get_loops({value(i[0])})",
    "GetChildBlocks": lambda i, a, d: f"sch.get_child_blocks({value(i[0])})",
    "GetProducers": lambda i, a, d: f"sch.get_producers({value(i[0])})",
    "GetConsumers": lambda i, a, d: f"sch.get_consumers({value(i[0])})",
    "GetOutputBlocks": lambda i, a, d: f"sch.get_output_blocks({value(i[0])})",
    "SampleCategorical": lambda i, a, d: f"sch.sample_categorical({value(a[0])}, {value(a[1])}, decision={value(d)})",
    "SamplePerfectTile": lambda i, a, d: f"sch.sample_perfect_tile({value(i[0])}, {a[0]}, {a[1]}, decision={value(d)})",
    "SamplePartitionedTile": lambda i, a, d: (f"sch.sample_partitioned_tile({value(i[0])}, {a[0]}, {a[1]}, {a[2]}, "
                                              f"decision={value(d)})"),
    "SampleComputeLocation": lambda i, a, d: f"sch.sample_compute_location({value(i[0])}, decision={value(d)})",
    "Split": lambda i, a, d: (f"sch.split({value(i[0])}, {value(i[1:])}, preserve_unit_iters={bool(a[0])}, "
                              f"disable_predication={bool(a[1])})"),
    "LoopPartition": lambda i, a, d: (f"sch.loop_partition({value(i[0])}, {value(i[1:])}, "
                                      f"preserve_unit_iters={bool(a[0])})"),
    "Fuse": lambda i, a, d: f"sch.fuse({_loops(i)}, preserve_unit_iters={bool(a[0])})",
    "Merge": lambda i, a, d: f"sch.merge({_loops(i)})",
    "Reorder": lambda i, a, d: f"sch.reorder({_loops(i)})",
    "ReorderBlockIterVar": lambda i, a, d: f"sch.reorder_block_iter_var({value(i[0])}, {value(i[1])})",
    "AddUnitLoop": lambda i, a, d: f"sch.add_unit_loop({value(i[0])})",
    "Parallel": lambda i, a, d: f"sch.parallel({value(i[0])})",
    "Vectorize": lambda i, a, d: f"sch.vectorize({value(i[0])})",
    "Unroll": lambda i, a, d: f"sch.unroll({value(i[0])})",
    "Bind": lambda i, a, d: f"sch.bind({value(i[0])}, {text(a[0])})",
    "Annotate": lambda i, a, d: f"sch.annotate({value(i[0])}, {text(a[0])}, {value(i[1])})",
    "Unannotate": lambda i, a, d: f"sch.unannotate({value(i[0])}, {text(a[0])})",
    "ComputeAt": lambda i, a, d: f"sch.compute_at({value(i[0])}, {value(i[1])}, {bool(a[0])}, {int(a[1])})",
    "ReverseComputeAt": lambda i, a, d: (f"sch.reverse_compute_at({value(i[0])}, {value(i[1])}, {bool(a[0])}, "
                                         f"{int(a[1])})"),
    "ComputeInline": lambda i, a, d: f"sch.compute_inline({value(i[0])})",
    "ReverseComputeInline": lambda i, a, d: f"sch.reverse_compute_inline({value(i[0])})",
    "FuseReductionEpilogue": lambda i, a, d: f"sch.fuse_reduction_epilogue({value(i[0])}, {value(i[1])})",
    "CacheRead": lambda i, a, d: (f"sch.cache_read({value(i[0])}, {a[0]}, {text(a[1])}, "
                                  f"consumer_blocks={value(i[1]) if i[1] else None})"),
    "CacheWrite": lambda i, a, d: (f"sch.cache_write({value(i[0])}, {a[0]}, {text(a[1])}, "
                                   f"consumer_blocks={value(i[1]) if i[1] else None})"),
    "CacheInplace": lambda i, a, d: f"sch.cache_inplace({value(i[0])}, {a[0]}, {text(a[1])})",
    "CacheIndex": lambda i, a, d: f"sch.cache_index({value(i[0])}, {text(a[0])}, {a[1]})",
    "ReIndex": lambda i, a, d: f"sch.reindex({value(i[0])}, ({BUFFER[a[1]]!r}, {a[0]}))",
    "ReindexCacheRead": lambda i, a, d: f"sch.reindex_cache_read({value(i[0])}, {a[0]}, {text(a[1])}, {value(i[1])})",
    "ReindexCacheWrite": lambda i, a, d: f"sch.reindex_cache_write({value(i[0])}, {a[0]}, {text(a[1])}, {value(i[1])})",
    "ReadAt": lambda i, a, d: f"sch.read_at({value(i[0])}, {value(i[1])}, {a[0]}, {text(a[1])})",
    "WriteAt": lambda i, a, d: f"sch.write_at({value(i[0])}, {value(i[1])}, {a[0]}, {text(a[1])})",
    "DecomposeReduction": lambda i, a, d: f"sch.decompose_reduction({value(i[0])}, {value(i[1])})",
    "RFactor": lambda i, a, d: f"sch.rfactor({value(i[0])}, {a[0]})",
    "Blockize": lambda i, a, d: f"sch.blockize({value(i[0])}, preserve_unit_iters={bool(a[0])})",
    "Tensorize": lambda i, a, d: f"sch.tensorize({value(i[0])}, {text(a[0])}, preserve_unit_iters={bool(a[1])})",
    "TransformLayout": lambda i, a, d: (f"sch.transform_layout({value(i[0])}, ({BUFFER[a[1]]!r}, {a[0]}), "
                                        f"{value(i[1])}, "
                                        f"pad_value={text(a[2]) if a[2] is not None else None}, "
                                        f"assume_injective_transform={bool(a[3])})"),
    "TransformBlockLayout": lambda i, a, d: f"sch.transform_block_layout({value(i[0])}, {text(a[0])})",
    "SetScope": lambda i, a, d: f"sch.set_scope({value(i[0])}, {a[0]}, {text(a[1])})",
    "StorageAlign": lambda i, a, d: f"sch.storage_align({value(i[0])}, {a[0]}, {a[1]}, {a[2]}, {a[3]})",
    "UnsafeSetDType": lambda i, a, d: f"sch.unsafe_set_dtype({value(i[0])}, {a[0]}, {text(a[1])})",
    "UnsafeHideBufferAccess": lambda i, a, d: (f"sch.unsafe_hide_buffer_access({value(i[0])}, {value(i[1])}, "
                                               f"{value(i[2])})"),
    "AnnotateBufferAccess": lambda i, a, d: (f"tvm.s_tir.schedule._ffi_api.ScheduleAnnotateBufferAccess(sch, "
                                             f"{_loops(i)})"),
    "DecomposePadding": lambda i, a, d: f"sch.decompose_padding({value(i[0])}, {value(i[1])})",
    "PadEinsum": lambda i, a, d: f"sch.pad_einsum({value(i[0])}, {value(a[0])})",
    "RollingBuffer": lambda i, a, d: f"sch.rolling_buffer({value(i[0])}, {a[0]})",
    "EnterPostproc": lambda i, a, d: "sch.enter_postproc()",
}
"""Each instruction kind as the Schedule call a user writes (the arguments the kernel's ``APPLY`` passes)."""
LISTS = frozenset({"GetLoops", "GetChildBlocks", "GetProducers", "GetConsumers", "GetOutputBlocks", "Split",
                   "LoopPartition", "SamplePerfectTile", "SamplePartitionedTile", "CacheInplace", "CacheIndex"})
"""Calls that return a list (their outputs are unpacked)."""


def schedule_call(inst: Instruction) -> str:
    """One instruction as a line of Python: its outputs assigned from its Schedule call."""
    call = CALLS[inst.kind](list(inst.inputs), list(inst.attrs), inst.decision)
    named = [o for o in inst.outputs]
    if not named:
        return call
    if inst.kind in LISTS:
        return f"{', '.join(named)}{',' if len(named) == 1 else ''} = {call}"
    return f"{named[0]} = {call}"


def schedule_lines(instructions: Sequence[Instruction], postprocs: Sequence[str], debug: bool = True) -> list[str]:
    """The schedule made, the trace as calls, then the postprocessors (as a tuning run applies them)."""
    mask = f", debug_mask={debug_mask_for(instructions, 'all')!r}" if debug else ""
    out = [f'sch = tvm.s_tir.Schedule(tvm.IRModule({{"main": main}}){mask})']
    out += [schedule_call(i) for i in instructions]
    if postprocs:
        out += ["from tvm.s_tir.meta_schedule import postproc", "sch.enter_postproc()"]
        out += [f"assert postproc.{p}().apply(sch), {p + ' rejects the schedule'!r}" for p in postprocs]
    return out


def _program(docs: Docs, script: str, setup: Sequence[str], check: Sequence[str], numpy: bool = False,
             extra: Sequence[str] = ()) -> str:
    return parts.program([parts.docstring(docs, SCHED_NEEDS), parts.preamble(imports(script, numpy=numpy)),
                          function_lines(script), list(setup), list(extra), list(check)])


def step_failure(docs: Docs, script: str, instructions: Sequence[Instruction], postprocs: Sequence[str],
                 symptom: str, mark: str, check_call: str, primitive: str) -> MinimalProgram:
    """A failure of the schedule itself: the calls before the failing one, then the failing call (the last
    instruction or postprocessor; for ill-formed IR, ``check_call``: TIR's verifier or the bounds checker)
    in the check (``symptom`` crash: a death by a signal; else the error whose text holds ``mark``)."""
    lines = schedule_lines(instructions, postprocs)
    setup, failing = lines[:-1], [lines[-1]]
    if check_call:
        setup, failing = lines, [check_call]
    check = parts.crash_check(failing, "the schedule ran to the end") if symptom == "crash" else \
        parts.error_check(failing, mark, "the schedule ran without the error")
    body = _program(docs, script, setup, check)
    what = "dies by a signal" if symptom == "crash" else f"raises an error containing {mark!r}"
    return MinimalProgram(body, SCHED_NEEDS, PASS_FAILURE, primitive, tuple(schedule_call(i) for i in instructions),
                          f"the schedule {what}", len(function_lines(script)))


def build_failure(docs: Docs, script: str, instructions: Sequence[Instruction], postprocs: Sequence[str],
                  target: str, symptom: str, mark: str, culprit: str) -> MinimalProgram:
    """A failure of ``tvm.compile`` on the scheduled module (for ``target``, as code): the schedule, then the
    build in the check (a death by a signal, or the error whose text holds ``mark``)."""
    setup = schedule_lines(instructions, postprocs)
    build = [f"tvm.compile(sch.mod, target={target})"]
    check = parts.crash_check(build, "tvm.compile built the module") if symptom == "crash" else \
        parts.error_check(build, mark, "tvm.compile built the module without the error")
    body = _program(docs, script, setup, check)
    what = "dies by a signal" if symptom == "crash" else f"raises an error containing {mark!r}"
    return MinimalProgram(body, SCHED_NEEDS, PASS_FAILURE, culprit,
                          (*(schedule_call(i) for i in instructions), f"tvm.compile(target={target})"),
                          f"tvm.compile of the scheduled module {what}", len(function_lines(script)))


def wrong_result(docs: Docs, script: str, instructions: Sequence[Instruction], postprocs: Sequence[str],
                 params: Sequence[Param], seed: int, target: str, tolerances: tuple[float, float],
                 culprit: str) -> MinimalProgram:
    """A wrong result: the function built unscheduled and scheduled by ``tvm.compile`` (for ``target``, as
    code), run on the same inputs, compared within ``tolerances`` (the kernel's, widened for a float
    reduction the schedule may reorder)."""
    setup = schedule_lines(instructions, postprocs)
    run = ["def run(mod):  # built by tvm.compile, run on a copy of the inputs",
           f"    lib = tvm.compile(mod, target={target})",
           "    args = [tvm.runtime.tensor(a.copy()) for a in inputs]",
           '    lib["main"](*args)',
           "    return [a.numpy() for a in args]"]
    calls = ['expected = run(tvm.IRModule({"main": main}))  # unscheduled', "actual = run(sch.mod)  # scheduled"]
    check = parts.outputs_check("expected", "actual", tolerances[0], tolerances[1], "both builds agree")
    body = _program(docs, script, setup, check, numpy=True, extra=[*run, *input_lines(params, seed), *calls])
    return MinimalProgram(body, SCHED_NEEDS, WRONG_RESULT, culprit, tuple(schedule_call(i) for i in instructions),
                          "the scheduled and the unscheduled builds' outputs agree", len(function_lines(script)))

