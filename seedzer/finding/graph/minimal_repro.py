"""Making a graph finding's plain reproducer (runs TVM, onnx and onnxruntime: call it in a process forked
from the zygote, as the triage does).

- **A failing Relax pass** (an error, a crash or ill-formed IR in a step): the module the failing pass
  receives (the reduced model imported, its model mutations and Seedzer's own ``mutate.*`` rewrites applied
  before printing), with the failing pass alone; and the module right after the last ``mutate.*`` step with
  the Relax passes from there to the failing one. Each printed (:mod:`seedzer.finding.graph.minimal_module`),
  with the target only when the passes need it, then shrunk (:mod:`seedzer.finding.graph.module_shrink`)
  while it fails the same way; the shorter program wins.
- **A wrong result** against TVM's default pipeline: the imported module (constants exact) built with and
  without the culprit passes on the kernel's inputs; against onnxruntime (a spec-edge model): the model
  built in code, run by onnxruntime and by TVM.
- **A model TVM's importer fails on** (a spec-edge model), or **whose ``tvm.compile`` fails** with no
  Relax pass of the case's (model mutations only): :mod:`seedzer.finding.minimal.onnx_search`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import onnx

from seedzer.finding.graph.minimal_module import module_text
from seedzer.finding.graph.minimal_text import pass_failure, wrong_result
from seedzer.finding.graph.module_shrink import shrink_module
from seedzer.finding.minimal.harness import fails_as, run_minimal
from seedzer.finding.minimal.onnx_code import NotRepresentable, model_code
from seedzer.finding.minimal.onnx_forms import versus_onnxruntime
from seedzer.finding.minimal.onnx_search import ImporterJob, make_importer_minimal, validity
from seedzer.finding.minimal.program import Made, MinimalProgram
from seedzer.finding.minimal.text import Docs, error_mark
from seedzer.kernel.common import MODEL_VS_ONNXRUNTIME, Observation, Stage, Symptom
from seedzer.kernel.graph.case import MUTATION_PREFIX, GraphCase, GraphPass
from seedzer.kernel.graph.feeds import case_inputs, fed_inputs, input_specs
from seedzer.kernel.graph.mutant import apply_model_mutations
from seedzer.kernel.graph.observe import apply_pass, tolerances
from seedzer.kernel.messages import ir_names
from seedzer.kernel.onnx.model import import_model, model_bytes

RUN_TIMEOUT = 120.0
"""Seconds one candidate may run."""
DEFAULT_TARGET = "llvm"
"""``tvm.compile``'s target as a maintainer writes it (LLVM at its default opt-level, 3)."""


def build_targets(case: GraphCase) -> tuple[str, ...]:
    """The targets a reproducer is tried with, in order: a maintainer's default first, then the case's
    own (a campaign builds at ``levels.graph.llvm_opt_level``, 0 by default) when it is another."""
    return tuple(dict.fromkeys((DEFAULT_TARGET, str(case.target))))


@dataclass(frozen=True)
class GraphMinimalJob:
    """The reduced case (its model embedded, expecting the finding's failure), the finding's own model
    (a start for a valid importer model), the docstring and the seconds the search may take."""

    case: GraphCase
    original: bytes | None
    docs: Docs
    seconds: float = 180.0


def _models(job: GraphMinimalJob) -> tuple[onnx.ModelProto, Any]:
    case = job.case
    feeds = case_inputs(case)
    model = onnx.load_model_from_string(model_bytes(case))
    if case.model_mutations:
        model = apply_model_mutations(model, case.model_mutations, feeds)
    return model, fed_inputs(case, model, feeds)


def _before(mod: Any, steps: tuple[GraphPass, ...], target: Any) -> list[Any]:
    """The module before each step (index k: before ``steps[k]``)."""
    out = [mod]
    for step in steps:
        mod = apply_pass(mod, step, target)
        out.append(mod)
    return out


def _search(job: GraphMinimalJob, expected: Observation, mod: Any, render: Callable[[Any], MinimalProgram | None],
            deadline: float, how: str) -> MinimalProgram | None:
    def holds(candidate: Any) -> bool:
        program = render(candidate)
        return program is not None and fails_as(expected, run_minimal(program.text, RUN_TIMEOUT),
                                                ir_names(program.text))

    if not holds(mod):
        return None

    def size(candidate: Any) -> tuple[int, int]:
        program = render(candidate)
        return (program.lines, len(program.text)) if program is not None else (1 << 30, 0)

    before = size(mod)[0]
    smaller = shrink_module(mod, holds, size, lambda: time.monotonic() > deadline)
    program = render(smaller)
    assert program is not None
    note = f"shrunk from {before} to {program.lines} lines" if program.lines < before else \
        f"shrinking kept it at {program.lines} lines"
    return dataclasses.replace(program, notes=(how, note))


def _failing_step(case: GraphCase, expected: Observation) -> int | None:
    """The index of the step the failure happened in (its recorded index, else the last step of its name)."""
    if expected.step_index is not None and 0 <= expected.step_index < len(case.passes):
        return expected.step_index
    named = [k for k, s in enumerate(case.passes) if s.name == expected.pass_name]
    return named[-1] if named else None


def _pass_failure(job: GraphMinimalJob, expected: Observation, index: int) -> Made | str:
    case = job.case
    model, _ = _models(job)
    steps = case.passes
    modules = _before(import_model(model, input_specs(case, model)), steps[:index], case.target)
    last_mutation = max((k for k, s in enumerate(steps[:index]) if s.name.startswith(MUTATION_PREFIX)), default=-1)
    cuts = [index] + ([last_mutation + 1] if last_mutation + 1 < index else [])
    deadline = time.monotonic() + job.seconds
    found: list[MinimalProgram] = []
    for n, k in enumerate(cuts):
        relax_steps = steps[k:index + 1]
        share = time.monotonic() + (deadline - time.monotonic()) / (len(cuts) - n)
        for target in (None, *build_targets(case)):
            def render(mod: Any, target: str | None = target, relax_steps: Any = relax_steps) -> MinimalProgram | None:
                text = module_text(mod)
                if text is None:
                    return None
                mark = error_mark(expected.message, ir_names("\n".join(text.module)))
                return pass_failure(job.docs, text, relax_steps, target, expected.symptom.value, mark)
            how = (f"the module {steps[index].name} receives" if k == index else
                   f"the module after the last Seedzer rewrite, with the {index - k + 1} Relax passes from there")
            program = _search(job, expected, modules[k], render, share, how)
            if program is not None:
                found.append(program)
                break
    if not found:
        return _model_with_passes(job, model, expected, steps[:index + 1])
    return Made(min(found, key=lambda p: p.lines))


def _model_with_passes(job: GraphMinimalJob, model: onnx.ModelProto, expected: Observation,
                       steps: tuple[GraphPass, ...]) -> Made | str:
    """When no printed module fails the same way: the (mutated) ``model`` built in code, imported, and
    the Relax passes up to the failing one (Seedzer's own rewrites among them: no plain form)."""
    if any(s.name.startswith(MUTATION_PREFIX) for s in steps):
        return "no printed module fails the same way as plain TVM code"
    made = make_importer_minimal(ImporterJob((model,), expected, False, job.case.input_seed, job.docs,
                                             job.seconds, steps))
    return made if isinstance(made, Made) else f"no printed module fails the same way as plain TVM code; {made}"


def _wrong_result(job: GraphMinimalJob, expected: Observation) -> Made | str:
    case = job.case
    model, _ = _models(job)
    rtol, atol = tolerances(case)["float32"]
    if expected.comparison == MODEL_VS_ONNXRUNTIME:
        judged = validity(model, case.input_seed)
        if judged is None or not judged.valid:
            return f"the model is not valid by every ONNX judge ({judged})"
        try:
            last = case.passes[-1].name if case.passes else "tvm.compile"
            program = versus_onnxruntime(job.docs, model_code(model, exact=True), case.specs, case.input_seed,
                                         (rtol, atol), f"relax.frontend.onnx / {last}")
        except NotRepresentable as exc:
            return f"the model has {exc}, which onnx.helper code cannot say briefly"
        if fails_as(expected, run_minimal(program.text, RUN_TIMEOUT), frozenset()):
            return Made(program, judged.to_json())
        return "TVM and onnxruntime agree on the model built in code"
    relax_steps = tuple(s for s in case.passes if not s.name.startswith(MUTATION_PREFIX))
    mutations = tuple(s for s in case.passes if s.name.startswith(MUTATION_PREFIX))
    if not relax_steps:
        return "no Relax pass to build without"
    mod = _before(import_model(model, input_specs(case, model)), mutations, case.target)[-1]
    for target in build_targets(case):
        for exact in (False, True):
            text = module_text(mod, exact=exact)
            if text is None:
                return "the imported module's TVMScript does not parse back"
            program = wrong_result(job.docs, text, relax_steps, target, case.specs, case.input_seed, (rtol, atol))
            if fails_as(expected, run_minimal(program.text, RUN_TIMEOUT), frozenset()):
                how = "constants exact" if exact else "big constants drawn from a fixed seed"
                where = "" if target == DEFAULT_TARGET else f", built for {target} (not at tvm.compile's default)"
                return Made(dataclasses.replace(program, notes=(f"the imported model's module, {how}{where}",)))
    return "the module's outputs with and without the passes agree as plain TVM code"


def _importer(job: GraphMinimalJob, expected: Observation) -> Made | str:
    model, _ = _models(job)
    starts = [model]
    if job.original is not None:
        original = dataclasses.replace(job.case, model=None).with_model(job.original)
        with contextlib.suppress(Exception):  # the reduced case's mutations may not fit the finding's own model
            starts.append(_models(dataclasses.replace(job, case=original))[0])
    return make_importer_minimal(ImporterJob(tuple(starts), expected, expected.stage is Stage.BUILD,
                                             job.case.input_seed, job.docs, job.seconds))


def make_graph_minimal(job: GraphMinimalJob) -> Made | str:
    """The plain reproducer of ``job`` (see the module docstring), or why there is none."""
    expected = job.case.expected
    if expected is None:
        return "the case expects no failure"
    if expected.stage is Stage.LOAD and expected.pass_name == "import" and expected.symptom in (
            Symptom.EXCEPTION, Symptom.CRASH):
        return _importer(job, expected)
    if expected.stage is Stage.BUILD and expected.symptom in (Symptom.EXCEPTION, Symptom.CRASH) and \
            all(s.name.startswith(MUTATION_PREFIX) for s in job.case.passes):  # tvm.compile of the model alone
        return _importer(job, expected)
    index = _failing_step(job.case, expected)
    if expected.symptom in (Symptom.EXCEPTION, Symptom.ILLFORMED, Symptom.CRASH) and expected.stage is Stage.PASS \
            and index is not None:
        return _pass_failure(job, expected, index)
    if expected.symptom is Symptom.MISMATCH:
        return _wrong_result(job, expected)
    return f"no plain form for a {expected.symptom.value} at {expected.where()} yet (repro.py stays the reproducer)"
