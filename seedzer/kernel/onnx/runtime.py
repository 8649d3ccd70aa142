"""A model on onnxruntime: the reference engine of the ONNX kernels, with no TVM.

Depends on numpy, onnx and onnxruntime only (copied verbatim into repro.py before the kernels that
use it: the loader's reference and the model mutations' profiling), so Seedzer's TVM-free parts (the
model-mutation samplers) run models with the same function as the kernels.
"""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime

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
