"""Whether a hang is work the test case asks for: unroll requests and the size of the lowered IR."""

from __future__ import annotations

import dataclasses

from seedzer.finding.tir.hang_size import (
    HUGE_IR_NODES,
    HUGE_IR_STATEMENTS,
    IRSize,
    lowered_size,
    program_steps,
    unrolling_asked,
)
from seedzer.kernel.common import REFERENCE
from seedzer.kernel.tir.case import FUZZED, PIPELINE, Case, reference_steps
from seedzer.passes.tir.contracts import UNROLL_DEFAULT_DEPTH, UNROLL_LIMIT, bounded, plan
from seedzer.seed import PassSpec, input_seed

GRID = """
@T.prim_func
def main(a: T.Buffer((64, 64), "float32"), b: T.Buffer((64, 64), "float32")):
    for i in {outer}(64):
        for j in {inner}(64):
            b[i, j] = a[i, j] + T.float32(1)
"""


def _case(outer: str, inner: str, passes: list[PassSpec] | None = None, grid: str = GRID) -> Case:
    script = "# from tvm.script import tirx as T\n" + grid.format(outer=outer, inner=inner)
    return Case(script, tuple(plan(passes or [])), input_seed(script))


def test_explicit_unrolling_is_asked_for_and_lowers_to_huge_ir() -> None:
    case = _case("T.unroll", "T.unroll")
    assert unrolling_asked(case) is not None
    size = lowered_size(case, "opt")
    assert size.statements == HUGE_IR_STATEMENTS + 1 and size.huge  # counting stops past the limit
    assert size.describe() == f"over {HUGE_IR_STATEMENTS:,} statements"
    assert lowered_size(case, "reference", statements=10**6, nodes=10**7).statements >= 64 * 64


def test_plain_loops_ask_for_nothing_and_stay_small() -> None:
    case = _case("range", "range")
    assert unrolling_asked(case) is None
    size = lowered_size(case, "minimal")
    assert size.statements < 100 and size.nodes < 1000 and not size.huge  # the packed-API checks and the loop nest


TERMS = 100
BIG_EXPRESSION = """
@T.prim_func
def main(a: T.Buffer((24, 24), "float32"), b: T.Buffer((24, 24), "float32")):
    for i in {outer}(24):
        for j in {inner}(24):
            b[i, j] = """ + " + ".join(f"a[i, j] * T.float32({k})" for k in range(TERMS)) + "\n"


def test_few_statements_with_big_expressions_are_huge_by_their_nodes() -> None:
    # the audited resize kernel: few statements of ~20 KB of expression each, its outer loops unrolled
    case = _case("T.unroll", "T.unroll", grid=BIG_EXPRESSION)
    size = lowered_size(case, "reference")
    assert size.statements < HUGE_IR_STATEMENTS and size.nodes == HUGE_IR_NODES + 1 and size.huge
    assert size.describe() == f"over {HUGE_IR_NODES:,} IR nodes (statements and expressions)"
    rolled = lowered_size(_case("range", "range", grid=BIG_EXPRESSION), "reference")
    assert 4 * TERMS < rolled.nodes < HUGE_IR_NODES // 100 and not rolled.huge  # every node counted, once here


def test_the_ir_entering_a_step_is_measured_before_it() -> None:
    case = _case("T.unroll", "T.unroll")
    pipeline = reference_steps(case.steps)
    unroll = next(s.name for s in pipeline if s.name.endswith("UnrollLoop"))
    cut = program_steps(case, REFERENCE, unroll)
    assert cut == pipeline[:len(cut)] and pipeline[len(cut)].name == unroll
    assert program_steps(case, REFERENCE) == pipeline and program_steps(case, REFERENCE, "no.Such") == pipeline
    before = lowered_size(case, REFERENCE, unroll)
    assert not before.huge and before.statements < 50  # T.unroll loops are still loops before UnrollLoop
    assert IRSize(3, 20).describe() == "3 statements and 20 IR nodes"


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
