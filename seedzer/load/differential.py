"""Build and run a Relax module with the loader kernel's own steps, for callers outside the loader
(e.g. :mod:`seedzer.coverage.workload`). Imports TVM when called."""

from __future__ import annotations

from typing import Any

import numpy as np

from seedzer.load.onnx_import import InputSpec


def build(mod: Any, target: Any = "llvm") -> Any:
    """``tvm.compile`` of a Relax module (:func:`seedzer.kernel.onnx.model.build`)."""
    from seedzer.kernel.onnx.model import build as kernel_build

    return kernel_build(mod, target)


def run_vm(executable: Any, specs: list[InputSpec], feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    """Run ``main`` in the Relax VM, inputs in graph order (:func:`seedzer.kernel.onnx.model.run`)."""
    from seedzer.kernel.onnx.model import run

    return run(executable, [s.as_tuple() for s in specs], feeds)
