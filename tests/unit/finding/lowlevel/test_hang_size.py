"""Whether a hang is work the test case asks for: unroll requests and the size of the lowered IR."""

from __future__ import annotations

import dataclasses

from seedzer.finding.lowlevel.hang_size import HUGE_IR_STATEMENTS, lowered_statements, unrolling_asked
from seedzer.kernel.common import FUZZED, PIPELINE, Case
from seedzer.passes.contracts import UNROLL_DEFAULT_DEPTH, UNROLL_LIMIT, bounded, plan
from seedzer.seed import PassSpec, input_seed

GRID = """
@T.prim_func
def main(a: T.Buffer((64, 64), "float32"), b: T.Buffer((64, 64), "float32")):
    for i in {outer}(64):
        for j in {inner}(64):
            b[i, j] = a[i, j] + T.float32(1)
"""


def _case(outer: str, inner: str, passes: list[PassSpec] | None = None) -> Case:
    script = "# from tvm.script import tirx as T\n" + GRID.format(outer=outer, inner=inner)
    return Case(script, tuple(plan(passes or [])), input_seed(script))


def test_explicit_unrolling_is_asked_for_and_lowers_to_huge_ir() -> None:
    case = _case("T.unroll", "T.unroll")
    assert unrolling_asked(case) is not None
    assert lowered_statements(case, "opt") == HUGE_IR_STATEMENTS + 1  # counting stops past the limit
    assert lowered_statements(case, "reference", limit=10**6) >= 64 * 64


def test_plain_loops_ask_for_nothing_and_stay_small() -> None:
    case = _case("range", "range")
    assert unrolling_asked(case) is None
    assert lowered_statements(case, "minimal") < 100  # the packed-API checks and the loop nest


def test_a_fuzzed_extent_criterion_asks_for_unrolling_but_the_step_criterion_does_not() -> None:
    by_extent = _case("range", "range", [PassSpec("tirx.UnrollLoop", (("auto_max_extent", 64),))])
    by_step = _case("range", "range", [PassSpec("tirx.UnrollLoop", (("auto_max_step", 64),))])
    assert any(s.role == FUZZED for s in by_extent.steps)
    assert unrolling_asked(by_extent) is not None and unrolling_asked(by_step) is None
    # the same configuration on a pipeline step is TVM's own choice, not the harness's request
    pipeline = [dataclasses.replace(s, role=PIPELINE) for s in by_extent.steps]
    assert unrolling_asked(by_extent.with_steps(pipeline)) is None


def test_bounded_unrolling_counts_every_level_the_pass_unrolls() -> None:
    # UnrollLoop unrolls while its unrolled depth is <= auto_max_depth: depth + 1 levels
    for extent in (2, 4, 16, 64):
        depth = bounded({"auto_max_extent": extent})["auto_max_depth"]
        assert extent ** (depth + 1) <= UNROLL_LIMIT or depth == 0
        assert depth == UNROLL_DEFAULT_DEPTH or extent ** (depth + 2) > UNROLL_LIMIT
    assert bounded({"auto_max_step": 16}) == {"auto_max_step": 16}
