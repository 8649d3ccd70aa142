"""How far a schedule may move a float reduction's result: the error bound of reassociation.

A schedule that splits a reduction into partial sums (``rfactor``), reorders its reduction loops,
vectorizes or parallelizes it, or otherwise changes the order in which its terms are combined
(:data:`~seedzer.kernel.sched.trace.REASSOCIATING`) computes the same real number with different
rounding. For a sum of ``n`` terms in floating point with unit roundoff ``u``, any order of
evaluation satisfies ``|computed - exact| <= gamma(n - 1) * sum(|x_i|)`` with
``gamma(k) = k*u / (1 - k*u)`` (Higham, *Accuracy and Stability of Numerical Algorithms*, §4.2), so
two orders differ by at most twice that. The terms are not known, so ``sum(|x_i|)`` is bounded by
``n * M`` with ``M`` the largest magnitude among the case's float inputs and the unscheduled
build's outputs (at least 1): the inputs are uniform in [-1, 1), so ``M`` covers the terms of a
reduction over inputs and over elementwise functions of them that stay within the outputs' range.
A product of ``n`` factors moves by a relative ``2 * gamma(n - 1)``; ``max`` and ``min`` round
nothing and keep the exact comparison. Integers are always compared exactly.

The bound is a worst case: a schedule that drops a term, reads the wrong element or races moves a
result by the size of a term, far beyond it for the short reductions of the pool's functions
(``n`` = 64 in float32 widens ``atol`` by ``2 * gamma(63) * 64 * M``, about ``4.8e-4 * M``).
Depends on tvm and the standard library only (copied verbatim into repro.py).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import tvm
import tvm_ffi

# --- kernel code (everything below is copied verbatim into repro.py) ---
UNIT_ROUNDOFF = {"float16": 2.0 ** -11, "bfloat16": 2.0 ** -8, "float32": 2.0 ** -24, "float64": 2.0 ** -53}
"""Unit roundoff ``u`` of each float dtype (half the distance from 1 to the next number)."""
COMBINERS = {"Add": "sum", "Sub": "sum", "Mul": "product", "Max": "exact", "Min": "exact"}
"""How a reduction combines its terms, by the type of its update's value (others count as sums)."""


@dataclasses.dataclass(frozen=True)
class Reduction:
    """One float reduction block of a function: its name, dtype, length and combiner."""

    block: str
    dtype: str
    length: int
    combiner: str


def gamma(k: int, u: float) -> float:
    """``k*u / (1 - k*u)``: the relative error bound of ``k`` roundings (infinite once ``k*u >= 1``)."""
    return float("inf") if k * u >= 1 else k * u / (1 - k * u)


def float_reductions(func: Any) -> list[Reduction]:
    """Every float reduction block of ``func`` (a block with an init and a reduction iterator)."""
    blocks: list[Any] = []
    tvm_ffi.structural_walk(func.body, (tvm.s_tir.SBlock, blocks.append))
    out = []
    for block in blocks:
        reduce = [iv for iv in block.iter_vars if int(iv.iter_type) == 2]
        if block.init is None or not reduce or not block.writes:
            continue
        dtype = str(block.writes[0].source.dtype)
        if dtype not in UNIT_ROUNDOFF:
            continue
        length = 1
        for iv in reduce:
            extent = iv.dom.extent
            length *= int(extent.value) if isinstance(extent, tvm.tirx.IntImm) else 1 << 20
        value = getattr(block.body, "value", None)
        out.append(Reduction(block.name_hint, dtype, length, COMBINERS.get(type(value).__name__, "sum")))
    return out


def reassociation_bound(reductions: Sequence[Reduction], magnitude: float) -> tuple[float, float]:
    """``(extra rtol, extra atol)`` a reordering of ``reductions`` may move a result by (see the module
    docstring); ``magnitude`` bounds the terms' absolute values."""
    rtol = atol = 0.0
    for red in reductions:
        bound = 2 * gamma(max(red.length - 1, 0), UNIT_ROUNDOFF[red.dtype])
        if red.combiner == "sum":
            atol = max(atol, bound * red.length * max(magnitude, 1.0))
        elif red.combiner == "product":
            rtol = max(rtol, bound)
    return rtol, atol
