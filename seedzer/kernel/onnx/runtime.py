"""A model on onnxruntime: the reference engine of the ONNX kernels, with no TVM.

A model onnxruntime refuses to run is no model to judge TVM by: :func:`refused` turns TVM's failures
on it into ``invalid`` ones (the load and graph kernels ask it for every failure they return).

Depends on numpy, onnx, onnxruntime and the shared kernel modules only (copied verbatim into repro.py
before the kernels that use it: the loader's reference and the model mutations' profiling), so
Seedzer's TVM-free parts (the model-mutation samplers) run models with the same function as the kernels.
"""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime

from seedzer.kernel.common import Observation, Symptom
from seedzer.kernel.messages import key_line

# --- kernel code (everything below is copied verbatim into repro.py) ---


def onnxruntime_outputs(model: onnx.ModelProto, feeds: dict[str, np.ndarray], quiet: bool = False) -> list[np.ndarray]:
    """Outputs of ``model`` under onnxruntime's CPU provider, graph optimizations off, one thread
    (``quiet``: not even onnxruntime's error log, for candidates expected to fail)."""
    opts = onnxruntime.SessionOptions()
    opts.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_DISABLE_ALL
    opts.intra_op_num_threads = 1
    opts.log_severity_level = 4 if quiet else 3
    sess = onnxruntime.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"])
    return [np.asarray(v) for v in sess.run(None, feeds)]


REFUSED = "onnxruntime cannot run the model"
"""How the reason of a failure on a model onnxruntime refuses starts."""
JUDGED_SYMPTOMS = (Symptom.EXCEPTION, Symptom.ILLFORMED, Symptom.MISMATCH)
"""Failures :func:`refused` asks onnxruntime about (a crash or a hang ends the process first)."""


def onnxruntime_refusal(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> str | None:
    """Why onnxruntime refuses to run ``model`` on ``feeds`` (its error, one line), or None when it runs it."""
    try:
        onnxruntime_outputs(model, feeds, quiet=True)
    except Exception as exc:  # onnxruntime raises its own types (Fail, InvalidArgument, RuntimeException...)
        return f"{type(exc).__name__}: {key_line(str(exc))}"[:1000]
    return None


def refused(failure: Observation, refusal: str | None) -> Observation:
    """``failure`` as ``invalid`` when onnxruntime refuses the model (``refusal``, from
    :func:`onnxruntime_refusal`): TVM failing on a model the reference engine will not run is no TVM bug."""
    if refusal is None or failure.symptom not in JUDGED_SYMPTOMS:
        return failure
    return Observation(Symptom.INVALID, failure.stage, failure.pass_name,
                       f"{REFUSED} ({refusal}); TVM's failure: {failure.message}"[:4000], step_index=failure.step_index)
