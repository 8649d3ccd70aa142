"""Reference outputs: onnxruntime first, ``onnx.reference.ReferenceEvaluator`` where it fails.

A model neither can run is rejected; :class:`ReferenceFailure` carries a short, countable reason
such as ``onnxruntime: NOT_IMPLEMENTED`` (the details go to the log, not the counter).
"""

from __future__ import annotations

import io
import re
import warnings
from typing import Any

import numpy as np

_ORT_CODE = re.compile(r"\[ONNXRuntimeError\]\s*:\s*\d+\s*:\s*([A-Z_]+)")


class ReferenceFailure(Exception):
    """Neither onnxruntime nor the ONNX reference evaluator could run a model."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(f"{reason}: {detail}")
        self.reason = reason
        self.detail = detail


def ort_reason(exc: BaseException) -> str:
    """A countable reason for an onnxruntime failure (its status code, or the exception type)."""
    match = _ORT_CODE.search(str(exc))
    return f"onnxruntime: {match.group(1) if match else type(exc).__name__}"


def run_onnxruntime(model_bytes: bytes, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Run a serialized model on CPU with onnxruntime, one thread, graph optimizations off."""
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    so.log_severity_level = 3
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess = ort.InferenceSession(model_bytes, sess_options=so, providers=["CPUExecutionProvider"])
    names = [o.name for o in sess.get_outputs()]
    outs = sess.run(names, inputs)
    return {n: np.asarray(v) for n, v in zip(names, outs, strict=True)}


def run_reference_evaluator(model_bytes: bytes, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Run a serialized model with ``onnx.reference.ReferenceEvaluator`` (slow, pure Python)."""
    import onnx
    from onnx.reference import ReferenceEvaluator

    model = onnx.load_model_from_string(model_bytes)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ev = ReferenceEvaluator(model)
        outs = ev.run(None, inputs)
    names = [o.name for o in model.graph.output]
    return {n: np.asarray(v) for n, v in zip(names, outs, strict=True)}


def reference_outputs(model_bytes: bytes, inputs: dict[str, np.ndarray]) -> tuple[dict[str, np.ndarray], str]:
    """Outputs and the provider that computed them; raise :class:`ReferenceFailure` if none can."""
    try:
        return run_onnxruntime(model_bytes, inputs), "onnxruntime"
    except Exception as exc:  # any onnxruntime failure falls back to the reference evaluator
        ort_exc = exc
    try:
        return run_reference_evaluator(model_bytes, inputs), "onnx.reference"
    except Exception as exc:  # both failed: the model is rejected with onnxruntime's reason
        detail = f"{str(ort_exc).splitlines()[0][:200]} / reference: {type(exc).__name__}: {exc}"
        raise ReferenceFailure(ort_reason(ort_exc), detail[:400]) from None


def npz_bytes(inputs: dict[str, np.ndarray], outputs: dict[str, np.ndarray], provider: str) -> bytes:
    """An .npz holding ``input:<name>`` and ``output:<name>`` arrays and the provider name."""
    arrays: dict[str, Any] = {f"input:{k}": v for k, v in inputs.items()}
    arrays.update({f"output:{k}": v for k, v in outputs.items()})
    arrays["provider"] = np.array(provider)
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    return buf.getvalue()


def load_reference(path: Any) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray], str]:
    """Read an .npz written by :func:`npz_bytes`: (inputs, outputs, provider)."""
    with np.load(path, allow_pickle=False) as data:
        inputs = {k[len("input:") :]: data[k] for k in data.files if k.startswith("input:")}
        outputs = {k[len("output:") :]: data[k] for k in data.files if k.startswith("output:")}
        provider = str(data["provider"]) if "provider" in data.files else "unknown"
    return inputs, outputs, provider


def all_finite(arrays: dict[str, np.ndarray]) -> bool:
    """True when no floating-point array holds NaN or Inf."""
    return all(bool(np.isfinite(a).all()) for a in arrays.values() if np.issubdtype(a.dtype, np.floating))
