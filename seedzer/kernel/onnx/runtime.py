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
from onnx import TensorProto, helper

from seedzer.kernel.common import Observation, Symptom
from seedzer.kernel.messages import key_line

# --- kernel code (everything below is copied verbatim into repro.py) ---


def onnxruntime_outputs(model: onnx.ModelProto, feeds: dict[str, np.ndarray], quiet: bool = False) -> list[np.ndarray]:
    """Outputs of ``model`` under onnxruntime's CPU provider, graph optimizations off, one thread
    (``quiet``: not even onnxruntime's error log, for candidates expected to fail); feeds the model
    has no input for are left out."""
    opts = onnxruntime.SessionOptions()
    opts.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_DISABLE_ALL
    opts.intra_op_num_threads = 1
    opts.log_severity_level = 4 if quiet else 3
    sess = onnxruntime.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"])
    names = {i.name for i in sess.get_inputs()}
    return [np.asarray(v) for v in sess.run(None, {k: v for k, v in feeds.items() if k in names})]


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


_MAX_OPSET: list[int | None] = []


def onnxruntime_max_opset() -> int | None:
    """The newest default-domain opset the installed onnxruntime accepts (None if it accepts none).

    onnxruntime publishes no such number; a one-node model is offered at each opset from onnx's
    newest down (a few milliseconds each, once per process)."""
    if not _MAX_OPSET:
        _MAX_OPSET.append(_probe_max_opset())
    return _MAX_OPSET[0]


def _probe_max_opset() -> int | None:
    options = onnxruntime.SessionOptions()
    options.log_severity_level = 4
    for version in range(onnx.defs.onnx_opset_version(), 0, -1):
        graph = helper.make_graph([helper.make_node("Identity", ["x"], ["y"])], "probe",
                                  [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
                                  [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])])
        probe = helper.make_model(graph, opset_imports=[helper.make_opsetid("", version)])
        probe.ir_version = 8
        try:
            onnxruntime.InferenceSession(probe.SerializeToString(), options, providers=["CPUExecutionProvider"])
        except Exception:  # onnxruntime refuses an opset it does not know with a generic error
            continue
        return version
    return None
