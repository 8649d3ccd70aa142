"""The model a graph finding fails on: its seed with its model mutations applied, and what else the
failure needs (imports onnx and the graph kernel: call it in a process forked from the zygote, as the
gate and the triage do).

A graph case carries the seed (a pool model) and the records of its model mutations, and the kernel
rebuilds the mutant every time it runs; a maintainer needs the model itself. :func:`failing_model` builds
it (the opset it declares is the one the mutations raised it to) and its
:class:`~seedzer.finding.meta.ModelRecord`: the seed named by file, origin and hash, the opset against
the seed's, the mutations applied, and what the model does not hold: the Relax steps after import
(Seedzer's own IR rewrites among them are no change of the model), the inputs, the comparison.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import onnx

from seedzer.finding.graph.folder import MODEL_FILE, SEED_FILE, FailingCase, finding_case, model_of, stored
from seedzer.finding.meta import FindingMeta, ModelRecord
from seedzer.kernel.common import MODEL_VS_ONNXRUNTIME, OPT_VS_REFERENCE, SPECIAL_VALUES, Stage, Symptom
from seedzer.kernel.graph.case import MUTANT_VS_SEED, MUTATION_PREFIX, SPECIAL_INPUTS, GraphCase
from seedzer.kernel.graph.feeds import case_inputs
from seedzer.kernel.graph.mutant import apply_model_mutations
from seedzer.kernel.onnx.model import model_bytes
from seedzer.store.atomic import write_atomic

COMPARED_WITH = {
    MUTANT_VS_SEED: "the outputs are compared with TVM's default pipeline on seed.onnx (the model mutations keep "
                    "the seed's outputs)",
    OPT_VS_REFERENCE: "the outputs are compared with TVM's default pipeline on the same model",
    MODEL_VS_ONNXRUNTIME: "the outputs are compared with onnxruntime on the model (onnx.reference breaks a tie)",
    SPECIAL_VALUES: "the outputs are compared with onnxruntime and onnx.reference, which agree",
}
"""What a wrong result's outputs are compared with, by the comparison of its mismatch."""


def opsets(model: onnx.ModelProto) -> dict[str, int]:
    """The opset each domain of ``model`` imports (``""`` for the default one)."""
    return {("" if o.domain == "ai.onnx" else o.domain): int(o.version) for o in model.opset_import}


def also_needed(case: GraphCase) -> tuple[str, ...]:
    """What the failure of ``case`` needs besides its model, one sentence each."""
    out = []
    if case.passes:
        steps = ", ".join(p.label() for p in case.passes)
        own = [p.name for p in case.passes if p.name.startswith(MUTATION_PREFIX)]
        note = (f" ({', '.join(dict.fromkeys(own))}: Seedzer's own rewrites of the imported Relax module, no change "
                "of the model; repro.py and minimal.py apply them)") if own else ""
        out.append(f"after tvm.relax.frontend.onnx.from_onnx, the Relax steps {steps} (passes.json){note}")
    else:
        out.append("tvm.relax.frontend.onnx.from_onnx, then tvm.compile (TVM's default pipeline) alone")
    expected = case.expected
    ran = expected is None or expected.stage in (Stage.RUN, Stage.COMPARE)  # else no input value matters
    if ran and case.input_mode == SPECIAL_INPUTS:
        out.append(f"special input values (NaN, infinities, signed zeros, extremes) drawn from input seed "
                   f"{case.input_seed} (repro.py makes them)")
    elif ran:
        out.append(f"random inputs from input seed {case.input_seed} (repro.py makes them)")
    if expected is not None and expected.symptom is Symptom.MISMATCH and expected.comparison in COMPARED_WITH:
        out.append(COMPARED_WITH[expected.comparison])
    return tuple(out)


def failing_model(case: GraphCase, origin: str = "") -> FailingCase | None:
    """``case`` (its seed embedded; returned as ``case.json`` holds it) with the model it fails on and that
    model's record; None when its model mutations no longer apply to its seed."""
    seed_data = model_bytes(case)
    seed = onnx.load_model_from_string(seed_data)
    model, data = seed, seed_data
    if case.model_mutations:
        try:
            model = apply_model_mutations(seed, case.model_mutations, case_inputs(case))
        except Exception:  # a record that does not fit its seed, an engine PIOC profiles with
            return None
        data = model.SerializeToString()
    record = ModelRecord(MODEL_FILE, SEED_FILE, origin, hashlib.sha256(seed_data).hexdigest(),
                         hashlib.sha256(data).hexdigest(), opsets(model), opsets(seed),
                         tuple(m.label() for m in case.model_mutations), also_needed(case))
    return FailingCase(stored(case), data, record)


def write_failing_model(folder: str) -> ModelRecord | None:
    """Write ``model.onnx`` into the graph finding ``folder``: the model its case fails on (its seed with its
    model mutations; a finding counted against a known root without a gate run has only the seed); its
    record for ``meta.json``, or None when the mutations no longer apply to the seed (nothing written)."""
    where = Path(folder)
    case = finding_case(where)
    meta = FindingMeta.load(where)
    made = failing_model(case.with_model(model_of(case, where)), meta.origin or "")
    if made is None:
        return None
    write_atomic(where / MODEL_FILE, made.model)
    return made.record
