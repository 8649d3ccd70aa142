"""IR shrinking on fixture PrimFuncs: candidates are well-formed and smaller; shrink keeps the test."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("tvm")

from seedzer.finding.shrink_ir import candidates, shrink, size_key
from seedzer.tir.wellformed import check_well_formed
from seedzer.tvmio import parse_primfunc, script_of

SEEDS = Path(__file__).resolve().parents[2] / "fixtures" / "seeds"


def test_candidates_are_well_formed_and_cover_every_family() -> None:
    func = parse_primfunc((SEEDS / "softmax.py").read_text())
    got = list(candidates(func))
    labels = " ".join(label for label, _ in got)
    for family in ("drop statement", "by a child", "loop extent", "constant"):
        assert family in labels
    assert all(check_well_formed(c) is None for _, c in got)


def test_shrink_keeps_the_property_and_gets_smaller() -> None:
    script = script_of(parse_primfunc((SEEDS / "softmax.py").read_text()))
    out = shrink(script, lambda text: "T.exp(" in text, aggressive=True)
    assert "T.exp(" in out
    assert size_key(out) < size_key(script)
    assert check_well_formed(parse_primfunc(out)) is None


def test_shrink_with_a_test_that_never_holds_returns_the_input() -> None:
    script = script_of(parse_primfunc((SEEDS / "relu.py").read_text()))
    assert shrink(script, lambda text: False) == script
