"""Making a load finding's plain reproducer: the pool model TVM's importer (or the build after it) fails
on, as the smallest model built in code that fails the same way and that ONNX's checker, onnxruntime and
``onnx.reference`` all accept (:mod:`seedzer.finding.minimal.onnx_search`; the reducer's model is tried
first, then the finding's own). A wrong result against onnxruntime: the reduced model, run by both.
Runs TVM: call it in a process forked from the zygote, as the triage does."""

from __future__ import annotations

from dataclasses import dataclass

import onnx

from seedzer.finding.minimal.harness import fails_as, run_minimal
from seedzer.finding.minimal.onnx_code import NotRepresentable, model_code
from seedzer.finding.minimal.onnx_forms import versus_onnxruntime
from seedzer.finding.minimal.onnx_search import ImporterJob, make_importer_minimal, model_specs, validity
from seedzer.finding.minimal.program import Made
from seedzer.finding.minimal.text import Docs
from seedzer.kernel.common import Observation, Stage, Symptom

BUILD_STEPS = ("legalize", "fuse", "build")
"""Loader steps after the import whose failure ``tvm.compile`` shows (the plain form builds the model)."""
RUN_TIMEOUT = 120.0


@dataclass(frozen=True)
class LoadMinimalJob:
    """The reduced model, the finding's own model, the failure, the inputs' seed, the docstring and the
    seconds the search may take."""

    reduced: bytes
    original: bytes
    expected: Observation
    seed: int
    docs: Docs
    seconds: float = 180.0


def make_load_minimal(job: LoadMinimalJob) -> Made | str:
    """The plain reproducer of ``job`` (see the module docstring), or why there is none."""
    expected = job.expected
    reduced = onnx.load_model_from_string(job.reduced)
    step = expected.pass_name or "import"
    if expected.symptom in (Symptom.EXCEPTION, Symptom.CRASH) and (step == "import" or step in BUILD_STEPS):
        starts = (reduced, onnx.load_model_from_string(job.original))
        return make_importer_minimal(ImporterJob(starts, expected, step != "import", job.seed, job.docs, job.seconds))
    if expected.symptom is Symptom.MISMATCH and expected.stage is Stage.COMPARE:
        judged, specs = validity(reduced, job.seed), model_specs(reduced)
        if judged is None or specs is None or not judged.valid:
            return f"the model is not valid by every ONNX judge ({judged})"
        try:
            program = versus_onnxruntime(job.docs, model_code(reduced, exact=True), specs, job.seed, (1e-2, 1e-3),
                                         "relax.frontend.onnx / tvm.compile")
        except NotRepresentable as exc:
            return f"the model has {exc}, which onnx.helper code cannot say briefly"
        if fails_as(expected, run_minimal(program.text, RUN_TIMEOUT), frozenset()):
            return Made(program, judged.to_json())
        return "TVM and onnxruntime agree on the model built in code"
    return f"no plain form for a {expected.symptom.value} at {expected.where()} yet (repro.py stays the reproducer)"
