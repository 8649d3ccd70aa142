"""Making the plain reproducer of a model TVM's importer (or the build right after it) fails on: the
smallest model, built in code, that fails the same way and that ONNX's checker, onnxruntime and
``onnx.reference`` all accept (a model one of them refuses is no evidence a maintainer accepts, even when
a smaller one shows the failure: the search keeps looking for a valid one).

The predicate runs ``from_onnx`` (and ``tvm.compile``) in a forked child, so a crash is an answer, and
asks the three judges (:mod:`seedzer.finding.minimal.onnx_validity`) on the kernel's random inputs. The
search starts from each given model in turn (the reducer's output first, then the finding's own model)
and reduces with the ONNX reducer's passes (:class:`~seedzer.finding.onnx_reduce.OnnxReducer`); the
first start where the predicate holds wins. Runs TVM (call it in a process forked from the zygote).
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass

import onnx

from seedzer.execute.forked import call_forked
from seedzer.finding.minimal.harness import fails_as, identity, run_minimal
from seedzer.finding.minimal.onnx_code import NotRepresentable, model_code, rebuilt
from seedzer.finding.minimal.onnx_forms import Spec, importer_failure
from seedzer.finding.minimal.onnx_validity import OnnxValidity, model_validity
from seedzer.finding.minimal.program import Made, MinimalProgram
from seedzer.finding.minimal.text import Docs, error_mark
from seedzer.finding.onnx_reduce import OnnxReducer
from seedzer.kernel.common import Observation, Symptom
from seedzer.kernel.graph.case import GraphPass
from seedzer.kernel.onnx.model import random_inputs

RUN_TIMEOUT = 120.0
"""Seconds one import (and build) may take."""


@dataclass(frozen=True)
class ImporterJob:
    """The search's input: models to start from (best first), the failure to keep, whether the build
    after the import is part of it, the inputs' seed, the docstring and the seconds it may take."""

    starts: tuple[onnx.ModelProto, ...]
    expected: Observation
    build: bool
    seed: int
    docs: Docs
    seconds: float = 180.0
    passes: tuple[GraphPass, ...] = ()
    """Relax passes run after the import (under an LLVM target), before the build: a pass failure's."""


def model_specs(model: onnx.ModelProto) -> list[Spec] | None:
    """The model's graph inputs with concrete shapes (None: one has no usable tensor type)."""
    from seedzer.load.onnx_import import InvalidModel, input_specs

    try:
        return [s.as_tuple() for s in input_specs(model, "candidate")[0]]
    except InvalidModel:
        return None


def _import_error(data: bytes, specs: list[Spec], build: bool, passes: tuple[GraphPass, ...] = ()) -> str | None:
    """In a forked child: the error ``from_onnx`` (then the passes, then the build) raises on the model,
    None if none."""
    import tvm

    from seedzer.kernel.graph.observe import apply_pass
    from seedzer.kernel.onnx.model import import_model

    try:
        mod = import_model(onnx.load_model_from_string(data), specs)
        for step in passes:
            mod = apply_pass(mod, step, "llvm")
        if build:
            tvm.compile(mod, target="llvm")
    except Exception as exc:  # the failure under test, or another
        return f"{type(exc).__name__}: {exc}"
    return None


def _fails(model: onnx.ModelProto, job: ImporterJob) -> bool:
    specs = model_specs(model)
    if specs is None:
        return False
    got = call_forked(_import_error, model.SerializeToString(), specs, job.build, job.passes, timeout=RUN_TIMEOUT)
    if job.expected.symptom is Symptom.CRASH:
        return got.signal is not None and (job.expected.signal is None or got.signal == job.expected.signal)
    if not got.ok or got.value is None:
        return False
    return identity(str(got.value)) == identity(job.expected.message)


def validity(model: onnx.ModelProto, seed: int) -> OnnxValidity | None:
    """The three judges' answers on ``model`` with the kernel's inputs (None: inputs cannot be made)."""
    specs = model_specs(model)
    return None if specs is None else model_validity(model, random_inputs(specs, seed))


def _holds(model: onnx.ModelProto, job: ImporterJob) -> bool:
    judged = validity(model, job.seed)
    return judged is not None and judged.valid and _fails(model, job)


def _component(model: onnx.ModelProto, message: str) -> str:
    ops = [n.op_type for n in model.graph.node]
    named = [op for op in dict.fromkeys(ops) if op in message]
    return f"relax.frontend.onnx ({(named or ops[-1:] or ['?'])[-1]})"


def _render(model: onnx.ModelProto, job: ImporterJob, exact: bool, specs: list[Spec] | None) -> MinimalProgram:
    crash = job.expected.symptom is Symptom.CRASH
    component = job.passes[-1].name if job.passes else _component(model, job.expected.message)
    return importer_failure(job.docs, model_code(model, exact), specs, error_mark(job.expected.message), job.build,
                            crash, component, job.passes)


def make_importer_minimal(job: ImporterJob) -> Made | str:
    """The plain reproducer of ``job`` with its model's validity, or why there is none."""
    deadline = time.monotonic() + job.seconds
    best = None
    for start in job.starts:
        if _holds(start, job):
            left = max(10.0, deadline - time.monotonic())
            best = OnnxReducer(lambda m: _holds(m, job), left).reduce(start).model
            break
    if best is None:
        return "no model that ONNX's checker, onnxruntime and onnx.reference all accept fails the same way"
    judged = validity(best, job.seed)
    assert judged is not None
    for exact in (False, True):
        try:
            if not exact and not _fails(rebuilt(best), job):
                continue
        except NotRepresentable as exc:
            return f"the model has {exc}, which onnx.helper code cannot say briefly"
        for given in (None, model_specs(best) or []):
            program = _render(best, job, exact, given)
            if fails_as(job.expected, run_minimal(program.text, RUN_TIMEOUT), frozenset()):
                note = f"{len(best.graph.node)} node(s); valid by ONNX's checker, onnxruntime and onnx.reference"
                return Made(dataclasses.replace(program, notes=(note,)), judged.to_json())
    return "the model built in code does not fail the same way as plain TVM code"


