"""Resource bounds of a model, checked before TVM or onnxruntime touch it (TVM-free).

:func:`bounds_problem` reads only a parsed ``ModelProto`` (never its external data, never a tensor's
values): the largest tensor it declares (graph inputs, outputs and ``value_info`` with static
dimensions, and initializers by their ``dims``; symbolic or unknown dimensions do not count), and
the bytes of its inputs plus initializers, against :class:`Limits`. :func:`opset_problem` refuses a
default-domain opset newer than the installed onnx or onnxruntime knows. Each problem is one line
with its figures. The memory limit (:attr:`Limits.max_testcase_memory`) is applied by the
processes that run a model or a test case (:mod:`seedzer.execute.memory`).

onnx and onnxruntime are imported inside the functions: this module's constants are read by
processes that import neither (the configuration, the campaign).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

DEFAULT_MAX_TENSOR_BYTES = 256 << 20
"""Largest declared tensor (256 MiB): far above what generated pools and model-zoo CNNs declare (why
this value: docs/measurements.md, 'Resource limits')."""
DEFAULT_MAX_MODEL_BYTES = 1 << 30
"""Inputs plus initializers of a model (1 GiB): room for the model zoo's largest, while TVM and
onnxruntime each hold several copies of what a model declares (why this value: docs/measurements.md,
'Resource limits')."""
DEFAULT_MAX_TESTCASE_MEMORY = 8 << 30
"""Address space (RLIMIT_AS) of a load attempt or fuzz worker (8 GiB): several times a worker's peak,
as headroom for more threads (stacks, malloc arenas) on larger machines, while a 4 GB input copied
twice fails to allocate (why this value: docs/measurements.md, 'Resource limits')."""


@dataclass(frozen=True)
class Limits:
    """Bounds of a model and of the memory of the process that runs it (bytes; 0 = unbounded)."""

    max_tensor_bytes: int = DEFAULT_MAX_TENSOR_BYTES
    max_model_bytes: int = DEFAULT_MAX_MODEL_BYTES
    max_testcase_memory: int = DEFAULT_MAX_TESTCASE_MEMORY


def human_bytes(n: float) -> str:
    """``4.0 GB``-style size (decimal units, as the issue reports them)."""
    for unit in ("B", "KB", "MB", "GB", "TB", "PB"):
        if abs(n) < 1000 or unit == "PB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000.0
    return f"{n:.1f} PB"  # pragma: no cover - the loop returns


def _itemsize(elem_type: int) -> tuple[str, int]:
    from onnx import helper

    try:
        import numpy as np

        dtype = np.dtype(helper.tensor_dtype_to_np_dtype(elem_type))
        return dtype.name, dtype.itemsize
    except (KeyError, TypeError, ValueError):
        return f"type{elem_type}", 1


def _static_dims(value: Any) -> list[int] | None:
    """Static dimensions of a ValueInfoProto tensor, or None when any is symbolic/unknown or it has none."""
    if not value.type.HasField("tensor_type") or not value.type.tensor_type.HasField("shape"):
        return None
    dims = []
    for d in value.type.tensor_type.shape.dim:
        if not d.HasField("dim_value"):
            return None
        dims.append(int(d.dim_value))
    return dims


def _size(dims: Iterable[int]) -> int:
    n = 1
    for d in dims:
        n *= max(int(d), 0)
    return n


@dataclass(frozen=True)
class Declared:
    """One declared tensor: where (``input``, ``initializer``, ...), name, dims, dtype, bytes."""

    role: str
    name: str
    dims: tuple[int, ...]
    dtype: str
    nbytes: int

    def describe(self) -> str:
        shape = "x".join(str(d) for d in self.dims) or "scalar"
        return f"{self.role} {self.name!r} declares {shape} {self.dtype} = {human_bytes(self.nbytes)}"


def declared_tensors(model: Any) -> list[Declared]:
    """Every tensor ``model`` declares with a static shape (graph inputs, initializers, outputs,
    value_info); nothing is allocated and external data is not read."""
    out: list[Declared] = []
    graph = model.graph
    inits = {t.name for t in graph.initializer}
    for t in graph.initializer:
        dtype, size = _itemsize(t.data_type)
        n = _size(t.dims)
        out.append(Declared("initializer", t.name, tuple(int(d) for d in t.dims), dtype, n * size))
    for role, values in (("input", graph.input), ("output", graph.output), ("value", graph.value_info)):
        for v in values:
            if role == "input" and v.name in inits:
                continue
            dims = _static_dims(v)
            if dims is None:
                continue
            dtype, size = _itemsize(v.type.tensor_type.elem_type)
            out.append(Declared(role, v.name, tuple(dims), dtype, _size(dims) * size))
    return out


def bounds_problem(model: Any, limits: Limits | None = None) -> str | None:
    """Why ``model`` is over ``limits`` (one line with its figures), or None."""
    limits = limits or Limits()
    tensors = declared_tensors(model)
    if limits.max_tensor_bytes > 0 and tensors:
        largest = max(tensors, key=lambda t: t.nbytes)
        if largest.nbytes > limits.max_tensor_bytes:
            return f"{largest.describe()}, over limits.max_tensor_bytes {human_bytes(limits.max_tensor_bytes)}"
    if limits.max_model_bytes > 0:
        fed = [t for t in tensors if t.role in ("input", "initializer")]
        total = sum(t.nbytes for t in fed)
        if total > limits.max_model_bytes:
            return (f"inputs and initializers total {human_bytes(total)} ({len(fed)} tensors), over "
                    f"limits.max_model_bytes {human_bytes(limits.max_model_bytes)}")
    return None


def opset_of(model: Any) -> int:
    """The default-domain opset version of ``model`` (0 when absent)."""
    for entry in model.opset_import:
        if entry.domain in ("", "ai.onnx"):
            return int(entry.version)
    return 0


def opset_problem(model: Any) -> str | None:
    """Why ``model``'s default-domain opset is unknown to the installed onnx or onnxruntime, or None."""
    import onnx

    version = opset_of(model)
    known = onnx.defs.onnx_opset_version()
    if version > known:
        return f"opset {version} is newer than the installed onnx {onnx.__version__} knows (up to {known})"
    from seedzer.kernel.onnx.runtime import onnxruntime_max_opset

    ort_max = onnxruntime_max_opset()
    if ort_max is not None and version > ort_max:
        import onnxruntime

        return (f"opset {version} is newer than the installed onnxruntime {onnxruntime.__version__} "
                f"supports (up to {ort_max})")
    return None


def model_problem(model: Any, limits: Limits | None = None) -> str | None:
    """The first of :func:`opset_problem` and :func:`bounds_problem` (one line), or None."""
    return opset_problem(model) or bounds_problem(model, limits)
