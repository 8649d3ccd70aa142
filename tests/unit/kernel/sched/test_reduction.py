"""The reassociation bound: what a schedule that reorders a float reduction may move its result by."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from seedzer.kernel.sched.reduction import Reduction, float_reductions, gamma, reassociation_bound

SEEDS = Path(__file__).resolve().parents[3] / "fixtures" / "seeds"


def test_gamma_is_the_bound_of_k_roundings() -> None:
    u = 2.0 ** -24
    assert gamma(0, u) == 0.0
    assert gamma(10, u) == pytest.approx(10 * u / (1 - 10 * u))
    assert math.isinf(gamma(1 << 24, u))


def test_a_sum_widens_atol_by_twice_gamma_times_its_terms_bound() -> None:
    rtol, atol = reassociation_bound([Reduction("s", "float32", 64, "sum")], magnitude=3.0)
    assert rtol == 0.0
    assert atol == pytest.approx(2 * gamma(63, 2.0 ** -24) * 64 * 3.0)
    assert 4e-4 < atol / 3.0 < 6e-4  # the module docstring's figure for n = 64


def test_a_product_widens_rtol_and_max_and_min_widen_nothing() -> None:
    rtol, atol = reassociation_bound([Reduction("p", "float32", 8, "product"), Reduction("m", "float32", 99, "exact")],
                                     magnitude=1.0)
    assert rtol == pytest.approx(2 * gamma(7, 2.0 ** -24)) and atol == 0.0


def test_the_bound_covers_every_order_of_a_real_float32_sum() -> None:
    rng = np.random.default_rng(0)
    terms = rng.uniform(-1, 1, size=512).astype(np.float32)
    sums = [np.float32(0)]
    for order in (terms, terms[::-1], np.sort(terms), terms.reshape(16, 32).T.reshape(-1)):
        acc = np.float32(0)
        for x in order:
            acc = np.float32(acc + x)
        sums.append(acc)
    spread = max(sums[1:]) - min(sums[1:])
    _, atol = reassociation_bound([Reduction("s", "float32", 512, "sum")], magnitude=1.0)
    assert 0 < spread <= atol


def test_the_float_reductions_of_loader_functions_are_found_with_their_combiner() -> None:
    from seedzer.kernel.tir.lowering import parse_func

    matmul = float_reductions(parse_func((SEEDS / "matmul.py").read_text()))
    assert matmul == [Reduction("matmul", "float32", 5, "sum")]
    softmax = {r.combiner for r in float_reductions(parse_func((SEEDS / "softmax.py").read_text()))}
    assert softmax == {"sum", "exact"}  # the max of the maximum element, the sum of the exponentials
    assert float_reductions(parse_func((SEEDS / "relu.py").read_text())) == []
