"""A graph case's input values: random, or *special* (the values the ONNX specification defines and
generators never feed), and the index inputs an insertion adds.

A case's ``input_mode`` is ``random`` (the loader's inputs: finite, small, integers in [-3, 3]) or
``special``: the random inputs with about half of their elements replaced by NaN, +-Inf, -0.0,
denormals, the dtype's largest, smallest and tiniest values (floats), or by 0, +-1 and the dtype's
extremes (integers, unless the model does integer arithmetic, whose overflow is undefined);
booleans stay random. An index input an insertion adds (:func:`bounded_inputs`) keeps to its valid
range ``[low, high]``; in special mode half of its elements are its ends (and -1 and 0 where they are
in range), never out of range: an index out of range is an error by the specification, and TVM's run
on one is not judged at all (:mod:`seedzer.kernel.graph.observe`), so it would only spend the case.

Depends on numpy and :mod:`seedzer.kernel.graph.case` only (copied verbatim into repro.py).
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from typing import Any

import numpy as np

from seedzer.kernel.graph.case import SPECIAL_INPUTS

# --- kernel code (everything below is copied verbatim into repro.py) ---
SPECIAL_SHARE = 0.5
"""The share of a special input's elements replaced by special values."""
INTEGER_ARITHMETIC = frozenset({"Add", "Sub", "Mul", "Neg", "Abs", "Sum", "Mean", "ReduceSum", "ReduceProd",
                                "ReduceSumSquare", "ReduceL1", "ReduceL2", "CumSum", "Pow", "Div", "Mod", "MatMul",
                                "Gemm", "Einsum", "MatMulInteger", "Conv", "BitShift"})
"""Operators whose integer overflow is undefined: a model with one gets no integer extremes."""


def float_specials(dtype: Any) -> np.ndarray:
    """The special values of a floating dtype: NaN, +-Inf, +-0, +-denormal, +-max, +-tiny, +-1."""
    info = np.finfo(dtype)
    denormal = getattr(info, "smallest_subnormal", info.tiny / 2)
    values = [np.nan, np.inf, -np.inf, -0.0, 0.0, denormal, -denormal, info.max, info.min, info.tiny, -info.tiny,
              1.0, -1.0]
    return np.array(values, dtype=dtype)


def integer_specials(dtype: Any, extremes: bool) -> np.ndarray:
    """The special values of an integer dtype: 0, +-1 (non-negative ones for unsigned) and, with
    ``extremes``, its smallest and largest."""
    info = np.iinfo(dtype)
    values = [v for v in (0, 1, -1, 2, -2) if info.min <= v <= info.max]
    if extremes:
        values += [int(info.min), int(info.max)]
    return np.array(values, dtype=dtype)


def special_values(feeds: dict[str, np.ndarray], seed: int, extremes: bool = True) -> dict[str, np.ndarray]:
    """``feeds`` with about :data:`SPECIAL_SHARE` of each float or integer input's elements replaced by
    its dtype's special values (a copy; booleans unchanged; ``extremes`` for integers)."""
    rng = np.random.default_rng(seed)
    out: dict[str, np.ndarray] = {}
    for name in sorted(feeds):
        value = np.array(feeds[name], copy=True)
        kind = value.dtype.kind
        if kind in "fiu" and value.size:
            pool = float_specials(value.dtype) if kind == "f" else integer_specials(value.dtype, extremes)
            mask = rng.random(value.shape) < SPECIAL_SHARE
            picks = pool[rng.integers(0, len(pool), size=value.shape)]
            value = np.where(mask, picks, value).astype(value.dtype)
        out[name] = value
    return {name: out[name] for name in feeds}


def bounded_inputs(specs: Sequence[dict[str, Any]], seed: int, mode: str) -> dict[str, np.ndarray]:
    """Values of the index inputs an insertion adds (``{"name", "dtype", "shape", "low", "high"}``):
    integers in ``[low, high]``, in special mode half of them at its edges; each input's from ``seed`` and
    its name alone."""
    feeds: dict[str, np.ndarray] = {}
    for spec in specs:
        rng = np.random.default_rng([seed, zlib.crc32(str(spec["name"]).encode())])
        dtype, shape = np.dtype(spec["dtype"]), tuple(int(d) for d in spec["shape"])
        low, high = int(spec["low"]), int(spec["high"])
        value = rng.integers(low, high + 1, size=shape)
        if mode == SPECIAL_INPUTS:
            edges = np.array(sorted({v for v in (low, high, -1, 0) if low <= v <= high}), dtype=dtype)
            mask = rng.random(shape) < SPECIAL_SHARE
            value = np.where(mask, edges[rng.integers(0, len(edges), size=shape)], value)
        feeds[str(spec["name"])] = np.asarray(value).astype(dtype)
    return feeds


def integer_arithmetic(op_types: Sequence[str]) -> bool:
    """Whether a model of ``op_types`` may do integer arithmetic that overflows (no extremes then)."""
    return bool(INTEGER_ARITHMETIC & set(op_types))
