"""The gate's tester on real TVM: each test runs in a forked child, and the minimal lowering of a
script is built once per gate and then taken from what an earlier child sent back."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("tvm")

from seedzer.finding.tir.check import Tester
from seedzer.kernel.common import Symptom
from seedzer.kernel.tir.case import Case
from seedzer.kernel.tir.observe import observe
from seedzer.passes.tir.contracts import plan
from seedzer.seed import PassSpec, input_seed

SEEDS = Path(__file__).parent.parent / "fixtures" / "seeds"


def _case(name: str, *passes: str) -> Case:
    script = (SEEDS / name).read_text()
    return Case(script, tuple(plan([PassSpec(p) for p in passes])), input_seed(script))


def test_a_scripts_minimal_build_is_made_once_and_every_test_sees_what_a_plain_run_sees() -> None:
    tester = Tester()
    cases = [_case("softmax.py", "tirx.StmtSimplify"), _case("softmax.py", "tirx.RemoveNoOp"),
             _case("relu.py", "tirx.StmtSimplify")]
    for case in cases:
        assert tester.observe(case, timeout=120.0) == observe(case)
    assert tester.minimal_builds == 2  # one per script: softmax's second test took the first one's
    assert tester.tests == 3


def test_a_known_minimal_build_that_fails_still_makes_the_case_invalid() -> None:
    tester = Tester()
    relu = (SEEDS / "relu.py").read_text()
    call_extern = 'T.call_extern("float32", "seedzer_no_such_symbol", x0[v_i0, v_i1, v_i2, v_i3])'
    broken = relu.replace("T.max(x0[v_i0, v_i1, v_i2, v_i3], T.float32(0.0))", call_extern)
    assert broken != relu
    for fuzzed in ("tirx.StmtSimplify", "tirx.RemoveNoOp"):
        got = tester.observe(Case(broken, tuple(plan([PassSpec(fuzzed)])), input_seed(broken)), timeout=120.0)
        assert got.symptom is Symptom.INVALID and "minimal lowering fails" in got.message
    assert tester.minimal_builds == 1
