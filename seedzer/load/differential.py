"""Whole-model differential check: the Relax module built for llvm against an ONNX reference.

Building and running import TVM (worker side only). References are tried in order: onnxruntime
(with its graph optimizations off, a plain reference), then ``onnx.reference``, then outputs stored
in the model's reference ``.npz``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import onnx

from seedzer.load.compare import onnxruntime_outputs
from seedzer.load.onnx_import import InputSpec


@dataclass
class Reference:
    """Reference outputs and which engine produced them; ``errors`` lists the engines that failed."""

    outputs: list[np.ndarray] | None
    engine: str | None
    errors: dict[str, str] = field(default_factory=dict)


def _one_line(exc: BaseException) -> str:
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
    return f"{type(exc).__name__}: {lines[0] if lines else ''}"


def make_target(spec: str) -> Any:
    """A ``tvm.target.Target`` from a kind name (``llvm``) or a JSON dict (``{"kind": "llvm", ...}``)."""
    import tvm

    return tvm.target.Target(json.loads(spec) if spec.lstrip().startswith("{") else spec)


def build(mod: Any, target: str = "llvm") -> Any:
    """Compile a Relax module with ``tvm.compile`` (default pipelines) for ``target`` (see :func:`make_target`)."""
    import tvm

    return tvm.compile(mod, target=make_target(target))


def run_vm(executable: Any, specs: list[InputSpec], feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    """Run ``main`` of a built module on the CPU with inputs in graph order; outputs as numpy."""
    import tvm
    from tvm import relax

    vm = relax.VirtualMachine(executable, tvm.cpu())
    args = [tvm.runtime.tensor(np.asarray(feeds[s.name], order="C")) for s in specs]
    from seedzer.triage.loader_standalone import flatten  # the reproducers' own, so they agree

    return flatten(vm["main"](*args))


def onnx_reference_outputs(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    """Outputs of ``model`` under ``onnx.reference`` (pure Python; slow on big convolutions)."""
    from onnx.reference import ReferenceEvaluator

    return [np.asarray(v) for v in ReferenceEvaluator(model).run(None, feeds)]


def reference_outputs(
    model: onnx.ModelProto, feeds: dict[str, np.ndarray], stored: dict[str, np.ndarray] | None = None
) -> Reference:
    """The first reference that works: onnxruntime, ``onnx.reference``, then ``stored`` outputs."""
    errors: dict[str, str] = {}
    for engine, fn in (("onnxruntime", onnxruntime_outputs), ("onnx.reference", onnx_reference_outputs)):
        try:
            return Reference(fn(model, feeds), engine, errors)
        except Exception as exc:  # both engines raise many types
            errors[engine] = _one_line(exc)
    names = [o.name for o in model.graph.output]
    if stored and all(n in stored for n in names):
        return Reference([stored[n] for n in names], "stored", errors)
    return Reference(None, None, errors)
