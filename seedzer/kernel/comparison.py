"""Kernel: the one comparison of output buffers, NaN- and infinity-aware, with per-dtype tolerances.

Every check of outputs (optimized against reference, reference against minimal, a model against
onnxruntime, a reproducer's verdict) calls :func:`compare` and reports its :class:`Difference`.
Depends on the standard library and numpy only; copied verbatim into every ``repro.py`` first
(see :mod:`seedzer.kernel`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import numpy as np

# --- kernel code (everything below is copied verbatim into repro.py) ---
SPECIAL_REASONS = frozenset({"nan positions", "inf positions"})
"""The reasons of a difference in where NaNs or infinities are (:func:`compare`'s; the others: values, shape/dtype)."""


@dataclasses.dataclass(frozen=True)
class Difference:
    """The first disagreement between an expected and an actual list of output buffers.

    ``nonfinite_reference`` is True when every differing element has a NaN or an infinity in the
    expected (reference) output: between two TVM builds such a difference says nothing about the
    compiler (TVM keeps no signed zeros, so a legal rewrite may flip an infinity too).
    ``flipped_infinities``: an element is an infinity of the opposite sign on the two sides, which a
    comparison with the specification's engines (IEEE semantics) does not excuse. ``operator`` names
    the operator at fault where the kernel located it (a special-values case: the root it is filed under).
    """

    output: int
    reason: str
    count: int = 0
    size: int = 0
    max_abs_err: float | None = None
    at: tuple[int, ...] | None = None
    expected: float | None = None
    actual: float | None = None
    rtol: float = 0.0
    atol: float = 0.0
    nonfinite_reference: bool = False
    operator: str | None = None
    flipped_infinities: bool = False
    name: str | None = None
    """The output's name in the model, where the caller knows it (an index shifts with the outputs a
    model mutation adds; a name does not)."""
    also: tuple[str, ...] = ()
    """The other outputs that differ too (their indices, with their names where known): every output is
    compared, the first difference is the one described."""
    operator_reason: str | None = None
    """How the located ``operator``'s own output differs, when not as the output does (a Max giving -FLT_MAX for
    -inf, ``inf positions``, whose product with 0 downstream loses a NaN, ``nan positions``)."""

    @property
    def at_operator(self) -> str:
        """How the difference shows where it was made: the located operator's own reason, else the output's."""
        return self.operator_reason or self.reason

    def located(self, operator: str, reason: str) -> Difference:
        """This difference made by ``operator``, whose own output differs by ``reason`` (kept only when it is not
        this difference's own)."""
        return dataclasses.replace(self, operator=operator, operator_reason=reason if reason != self.reason else None)

    def describe(self) -> str:
        """One line, e.g. ``output 1 'y': 3/16 elements differ (values, rtol=1e-4, atol=1e-5); ...``."""
        named = f" {self.name!r}" if self.name else ""
        text = f"output {self.output}{named}: {self.count}/{self.size} elements differ ({self.reason}"
        text += f", rtol={self.rtol:g}, atol={self.atol:g})" if self.reason == "values" else ")"
        if self.max_abs_err is not None:
            text += f"; max abs error {self.max_abs_err:.6g}"
        if self.at is not None and self.expected is not None:
            text += f" at {self.at}: expected {self.expected:.6g}, got {self.actual:.6g}"
        if self.also:
            text += f"; also differing: output {', '.join(self.also)}"
        return text

    def to_json(self) -> dict[str, Any]:
        """JSON-friendly form."""
        data = dataclasses.asdict(self)
        data["at"] = list(self.at) if self.at is not None else None
        data["also"] = list(self.also)
        for name, unset in (("operator", None), ("flipped_infinities", False), ("name", None), ("also", []),
                            ("operator_reason", None)):
            if data[name] == unset:  # as before these were recorded
                del data[name]
        return data

    @staticmethod
    def from_json(data: dict[str, Any]) -> Difference:
        """Inverse of :meth:`to_json`."""
        data = dict(data)
        data["at"] = tuple(data["at"]) if data.get("at") is not None else None
        data["also"] = tuple(str(a) for a in data.get("also") or ())
        return Difference(**data)


def named(diff: Any, names: Sequence[str]) -> Any:
    """``diff`` (a :class:`Difference`, or anything else, returned as it is) with its output's name from
    ``names`` (the model's outputs, in order)."""
    if not isinstance(diff, Difference) or diff.name:
        return diff
    also = tuple(f"{a} {names[int(a)]!r}" if a.isdigit() and int(a) < len(names) else a for a in diff.also)
    return dataclasses.replace(diff, name=names[diff.output] if 0 <= diff.output < len(names) else None, also=also)


def uniform_tolerances(rtol: float, atol: float) -> dict[str, tuple[float, float]]:
    """The same ``(rtol, atol)`` for every floating dtype (integers and booleans stay exact)."""
    return {dt: (rtol, atol) for dt in ("float16", "bfloat16", "float32", "float64")}


def _first_index(mask: Any, shape: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(int(i) for i in np.unravel_index(int(np.argmax(mask)), shape)) if shape else ()


def _float_masks(e64: Any, a64: Any, rtol: float, atol: float) -> tuple[Any, Any, Any, Any]:
    """Elementwise, for two float64 buffers of one shape: where NaN positions differ, where infinity
    positions or signs differ, where finite values differ beyond ``atol + rtol * |e|``, and the
    absolute error of the finite ones (0 elsewhere)."""
    e_nan, a_nan, e_inf, a_inf = np.isnan(e64), np.isnan(a64), np.isinf(e64), np.isinf(a64)
    nan_bad = e_nan != a_nan
    inf_bad = (e_inf != a_inf) | (e_inf & a_inf & (np.sign(e64) != np.sign(a64)))
    finite = ~(e_nan | e_inf | a_nan | a_inf)
    err = np.where(finite, np.abs(a64 - np.where(finite, e64, 0.0)), 0.0)
    val_bad = finite & (err > atol + rtol * np.abs(np.where(finite, e64, 0.0)))
    return nan_bad, inf_bad, val_bad, err


def differing(expected: Any, actual: Any, rtol: float, atol: float) -> Any:
    """Elementwise, for two float buffers of one shape: where they differ as :func:`compare` judges
    (NaN positions, infinity positions and signs, finite values beyond ``atol + rtol * |e|``)."""
    nan_bad, inf_bad, val_bad, _ = _float_masks(np.asarray(expected).astype(np.float64),
                                                np.asarray(actual).astype(np.float64), rtol, atol)
    return nan_bad | inf_bad | val_bad


def _difference(i: int, e: Any, a: Any, rtol: float, atol: float) -> Difference | None:
    """The difference between one expected and one actual buffer, or None when they agree."""
    if e.shape != a.shape or e.dtype != a.dtype:
        return Difference(i, f"shape/dtype: expected {e.shape} {e.dtype}, got {a.shape} {a.dtype}", 1, 1)
    size = int(e.size)
    if e.dtype.kind not in "fc":
        bad = e != a
        if not bad.any():
            return None
        at = _first_index(bad, e.shape)
        return Difference(i, "values", int(bad.sum()), size, None, at, float(e[at]), float(a[at]))
    e64, a64 = e.astype(np.float64), a.astype(np.float64)
    nan_bad, inf_bad, val_bad, err = _float_masks(e64, a64, rtol, atol)
    bad = nan_bad | inf_bad | val_bad
    if not bad.any():
        return None
    reason = "nan positions" if nan_bad.any() else "inf positions" if inf_bad.any() else "values"
    nonfinite_ref = bool(np.all((np.isnan(e64) | np.isinf(e64))[bad]))
    flipped = bool((np.isinf(e64) & np.isinf(a64) & (np.sign(e64) != np.sign(a64))).any())
    at = _first_index(val_bad if val_bad.any() else bad, e.shape)
    worst = float(err.max()) if val_bad.any() else None
    return Difference(i, reason, int(bad.sum()), size, worst, at, float(e64[at]), float(a64[at]), rtol, atol,
                      nonfinite_ref, flipped_infinities=flipped)


def compare(expected: Sequence[Any], actual: Sequence[Any],
            tolerances: dict[str, tuple[float, float]]) -> Difference | None:
    """The one comparison of outputs: None when they agree, else the first meaningful difference.

    Shapes and dtypes must agree; NaN positions must agree; infinities must agree in position and
    sign; finite floats must satisfy ``|a - e| <= atol + rtol * |e|`` with the dtype's tolerances
    (a dtype missing from ``tolerances``, integers and booleans: exact). Every output is compared; the
    first difference is reported, the other differing outputs listed with it (``also``). A difference
    whose every differing element has a non-finite expected value is reported only when no other output
    differs where the expected value is finite.
    """
    if len(expected) != len(actual):
        return Difference(-1, f"output count: expected {len(expected)}, got {len(actual)}", 1, 1)
    found = []
    for i, (e_raw, a_raw) in enumerate(zip(expected, actual, strict=True)):
        e, a = np.asarray(e_raw), np.asarray(a_raw)
        rtol, atol = tolerances.get(str(e.dtype), (0.0, 0.0))
        diff = _difference(i, e, a, rtol, atol)
        if diff is not None:
            found.append(diff)
    if not found:
        return None
    first = next((d for d in found if not d.nonfinite_reference), found[0])
    return dataclasses.replace(first, also=tuple(str(d.output) for d in found if d is not first))


def signed_zero_difference(expected: Sequence[Any], actual: Sequence[Any],
                           witness: Sequence[Any] | None = None) -> Difference | None:
    """The first output where both sides hold a zero but of opposite signs (``-0.0`` against ``0.0``),
    counting only zeros whose sign ``witness`` (a second expected side) confirms when given; None when
    there is none. Outputs of other shapes or dtypes, and integers, are left to :func:`compare`."""
    for i, (e_raw, a_raw) in enumerate(zip(expected, actual, strict=False)):
        e, a = np.asarray(e_raw), np.asarray(a_raw)
        if e.shape != a.shape or e.dtype != a.dtype or e.dtype.kind != "f":
            continue
        bad = (e == 0) & (a == 0) & (np.signbit(e) != np.signbit(a))
        if witness is not None and i < len(witness) and np.asarray(witness[i]).shape == e.shape:
            w = np.asarray(witness[i])
            bad &= (w == 0) & (np.signbit(w) == np.signbit(e))
        if bad.any():
            at = _first_index(bad, e.shape)
            return Difference(i, "signed zeros", int(bad.sum()), int(e.size), None, at, float(e[at]), float(a[at]))
    return None
