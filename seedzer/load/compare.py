"""NaN/Inf-aware comparison of model outputs with per-dtype tolerances, and the reference engine.

:func:`compare_outputs`, :func:`random_inputs` and :func:`onnxruntime_outputs` are self-contained
(they use only ``numpy``, ``onnxruntime`` and their arguments) because the reproducer generator
copies their source into ``repro.py``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

TOLERANCES: dict[str, tuple[float, float]] = {
    "float16": (1e-2, 1e-2),
    "bfloat16": (2e-2, 2e-2),
    "float32": (1e-2, 1e-3),
    "float64": (1e-5, 1e-7),
}
"""``dtype name -> (rtol, atol)`` for floating outputs (NNSmith's 1e-2/1e-3 for float32).

Every other dtype (integers, bool) must match exactly."""

INPUT_SEED = 20240601
"""Default seed of the random inputs when a model has no reference ``.npz``."""


def random_inputs(specs: list[tuple[str, str, list[int]]], seed: int) -> dict[str, Any]:
    """Deterministic inputs for ``(name, dtype, shape)`` specs from ``seed``.

    Floats are uniform in [-2, 2); signed integers in [-3, 3]; unsigned in [0, 3]; bools fair coins.
    Small integers keep index-like inputs (Gather, Slice) in range for small tensors.
    """
    import numpy as np

    rng = np.random.default_rng(seed)
    feeds: dict[str, Any] = {}
    for name, dtype, shape in specs:
        kind = np.dtype(dtype).kind
        value: Any
        if kind == "b":
            value = rng.random(shape) < 0.5
        elif kind == "u":
            value = rng.integers(0, 4, size=shape)
        elif kind == "i":
            value = rng.integers(-3, 4, size=shape)
        else:
            value = rng.uniform(-2.0, 2.0, size=shape)
        feeds[name] = np.asarray(value).astype(dtype)
    return feeds


def compare_outputs(expected: list[Any], actual: list[Any], tolerances: dict[str, tuple[float, float]]) -> list[str]:
    """Describe every disagreement between reference and actual outputs; empty when they agree.

    Shapes and dtypes must agree; NaN positions must agree; infinities must agree in position and
    sign; finite floats must satisfy ``|a - e| <= atol + rtol * |e|`` with the dtype's tolerance
    (a missing dtype means exact equality).
    """
    import numpy as np

    problems: list[str] = []
    if len(expected) != len(actual):
        return [f"output count: expected {len(expected)}, got {len(actual)}"]
    for idx, (exp_raw, act_raw) in enumerate(zip(expected, actual, strict=True)):
        exp, act = np.asarray(exp_raw), np.asarray(act_raw)
        where = f"output {idx}"
        if exp.shape != act.shape:
            problems.append(f"{where}: shape expected {exp.shape}, got {act.shape}")
            continue
        if exp.dtype != act.dtype:
            problems.append(f"{where}: dtype expected {exp.dtype}, got {act.dtype}")
            continue
        if exp.dtype.kind not in "fc":
            bad = exp != act
            if bad.any():
                first = tuple(int(i) for i in np.argwhere(bad)[0])
                problems.append(
                    f"{where}: {int(bad.sum())}/{exp.size} elements differ, first at {first}: "
                    f"expected {exp[first]!r}, got {act[first]!r}"
                )
            continue
        e64, a64 = exp.astype(np.float64), act.astype(np.float64)
        nan_e, nan_a = np.isnan(e64), np.isnan(a64)
        if (nan_e != nan_a).any():
            n = int((nan_e != nan_a).sum())
            problems.append(f"{where}: NaN positions differ at {n}/{exp.size} elements")
            continue
        inf_e, inf_a = np.isinf(e64), np.isinf(a64)
        if (inf_e != inf_a).any() or (np.sign(e64[inf_e]) != np.sign(a64[inf_e])).any():
            n = int((inf_e != inf_a).sum()) or int((np.sign(e64[inf_e]) != np.sign(a64[inf_e])).sum())
            problems.append(f"{where}: infinities differ (position or sign) at {n}/{exp.size} elements")
            continue
        rtol, atol = tolerances.get(str(exp.dtype), (0.0, 0.0))
        finite = ~(nan_e | inf_e)
        err = np.abs(np.where(finite, a64, 0.0) - np.where(finite, e64, 0.0))
        bad = err > atol + rtol * np.abs(np.where(finite, e64, 0.0))
        if bad.any():
            first = tuple(int(i) for i in np.unravel_index(int(np.argmax(np.where(bad, err, -1.0))), exp.shape))
            problems.append(
                f"{where}: {int(bad.sum())}/{exp.size} elements out of tolerance (rtol={rtol}, atol={atol}); "
                f"max abs error {float(err.max()):.6g} at {first}: expected {float(e64[first]):.6g}, "
                f"got {float(a64[first]):.6g}"
            )
    return problems


def max_abs_error(expected: list[Any], actual: list[Any]) -> float | None:
    """Largest finite absolute difference over outputs of equal shape (None when none compare)."""
    worst: float | None = None
    for e, a in zip(expected, actual, strict=False):
        ea, aa = np.asarray(e), np.asarray(a)
        if ea.shape != aa.shape or ea.size == 0 or ea.dtype.kind not in "fciub" or aa.dtype.kind not in "fciub":
            continue
        e64, a64 = ea.astype(np.float64), aa.astype(np.float64)
        both = np.isfinite(e64) & np.isfinite(a64)
        diff = np.abs(a64[both] - e64[both])
        if diff.size:
            worst = max(worst or 0.0, float(diff.max()))
    return worst


def onnxruntime_outputs(model: Any, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    """Outputs of ``model`` under onnxruntime's CPU provider, graph optimizations disabled."""
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    opts.intra_op_num_threads = 1
    opts.log_severity_level = 3
    sess = ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"])
    return [np.asarray(v) for v in sess.run(None, feeds)]
