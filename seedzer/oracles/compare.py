"""NaN/Inf-aware comparison of output buffers."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np


def compare_arrays(
    expected: Sequence[np.ndarray], actual: Sequence[np.ndarray], rtol: float, atol: float
) -> dict[str, Any] | None:
    """Return None when the buffers agree, else a small description of the first disagreement.

    NaN positions must agree, infinities must agree in sign and position, finite values must be
    close (floats) or equal (integers and booleans).
    """
    if len(expected) != len(actual):
        return {"reason": "buffer count", "expected": len(expected), "actual": len(actual)}
    for i, (e, a) in enumerate(zip(expected, actual, strict=True)):
        if e.shape != a.shape or e.dtype != a.dtype:
            return {"buffer": i, "reason": "shape/dtype", "expected": f"{e.shape} {e.dtype}",
                    "actual": f"{a.shape} {a.dtype}"}
        if np.issubdtype(e.dtype, np.floating) or np.issubdtype(e.dtype, np.complexfloating):
            e_nan, a_nan = np.isnan(e), np.isnan(a)
            if not np.array_equal(e_nan, a_nan):
                return {"buffer": i, "reason": "nan positions", "count": int((e_nan != a_nan).sum())}
            e_inf, a_inf = np.isinf(e), np.isinf(a)
            if not np.array_equal(e_inf, a_inf) or not np.array_equal(e[e_inf], a[a_inf]):
                return {"buffer": i, "reason": "inf positions", "count": int((e_inf != a_inf).sum())}
            finite = ~(e_nan | e_inf)
            ef, af = e[finite].astype(np.float64), a[finite].astype(np.float64)
            bad = ~np.isclose(af, ef, rtol=rtol, atol=atol)
            if bad.any():
                err = np.abs(af - ef)
                return {"buffer": i, "reason": "values", "count": int(bad.sum()),
                        "max_abs_err": float(err.max()), "size": int(e.size)}
        elif not np.array_equal(e, a):
            return {"buffer": i, "reason": "values", "count": int((e != a).sum()), "size": int(e.size)}
    return None
