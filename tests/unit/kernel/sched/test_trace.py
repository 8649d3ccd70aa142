"""A trace as data: TVM's trace JSON read and written back unchanged, malformed sequences named, random
variables renumbered as TVM numbers them (TVM-free)."""

from __future__ import annotations

import json

import pytest

from seedzer.kernel.sched.trace import (
    KINDS,
    SAMPLERS,
    TRANSFORMING,
    Instruction,
    TraceError,
    canonical,
    check_trace,
    parse_trace,
    trace_json,
    trace_problem,
    transforming,
)

# What TVM 0.27's Trace.as_json() gives for a split, parallel and decompose_reduction of a matmul
# (IntImm values made plain), its decision included.
TVM_JSON = [[["GetSBlock", [], ["C", "main"], ["b0"]], ["GetLoops", ["b0"], [], ["l1", "l2", "l3"]],
             ["SamplePerfectTile", ["l1"], [2, 16], ["v4", "v5"]],
             ["Split", ["l1", "v4", "v5"], [True, False], ["l6", "l7"]], ["Parallel", ["l6"], [], []],
             ["DecomposeReduction", ["b0", "l3"], [], ["b8"]]], [[2, [4, 4]]]]


def test_tvm_trace_json_is_read_and_written_back_unchanged() -> None:
    items = parse_trace(json.dumps(TVM_JSON))
    assert [i.kind for i in items] == ["GetSBlock", "GetLoops", "SamplePerfectTile", "Split", "Parallel",
                                       "DecomposeReduction"]
    assert items[2].decision == [4, 4]
    assert trace_json(items) == TVM_JSON
    assert transforming(items) == ["Split", "Parallel", "DecomposeReduction"]
    assert trace_problem(items) is None


def test_quoted_strings_lists_and_none_inputs_survive_a_round_trip() -> None:
    raw = [[["GetSBlock", [], ["conv", "main"], ["b0"]],
            ["Annotate", ["b0", [1, '"a"']], ["k2"], []],
            ["Split", ["b0", "None", 2], [True, False], ["l1", "l2"]],
            ["UnsafeHideBufferAccess", ["b0", '"read"', [1]], [], []]], []]
    items = parse_trace(raw)
    assert items[1].used() == ["b0"]  # a quoted string is not a random variable
    assert items[2].used() == ["b0"]  # neither is "None"
    assert trace_json(items) == raw


@pytest.mark.parametrize(("raw", "problem"), [
    ([[["Splitt", [], [], []]], []], "unknown instruction kind 'Splitt'"),
    ([[["GetSBlock", [], ["C", "main"], ["b0"]], ["GetLoops", ["b9"], [], ["l1"]]], []], "'b9' is not defined"),
    ([[["GetSBlock", [], ["C", "main"], ["b0"]], ["GetSBlock", [], ["D", "main"], ["b0"]]], []], "defined twice"),
    ([[["GetSBlock", [], ["C", "main"], ["b0"]]], [[0, 3]]], "has a decision but samples nothing"),
])
def test_a_malformed_sequence_is_named_with_its_instruction(raw: list, problem: str) -> None:
    found = trace_problem(parse_trace(raw))
    assert found is not None and problem in found
    with pytest.raises(TraceError, match=problem.split("'")[0] or problem):
        check_trace(parse_trace(raw))


@pytest.mark.parametrize("raw", ["not json", [1, 2, 3], [[["Split", "l1", [], []]], []], [[], [[5, 1]]],
                                 [[["Split", [], [], [3]]], []]])
def test_json_that_is_not_a_trace_raises_a_trace_error(raw: object) -> None:
    with pytest.raises(TraceError):
        parse_trace(raw)


def test_canonical_numbers_random_variables_as_tvm_does() -> None:
    items = [Instruction("GetSBlock", (), ("C", "main"), ("b_x",)),
             Instruction("GetLoops", ("b_x",), (), ("l_a", "l_b")),
             Instruction("Split", ("l_b", "None", 4), (True, False), ("l_c", "l_d")),
             Instruction("Parallel", ("l_c",))]
    renamed = canonical(items)
    assert [i.outputs for i in renamed] == [("b0",), ("l1", "l2"), ("l3", "l4"), ()]
    assert renamed[2].inputs == ("l2", "None", 4) and renamed[3].inputs == ("l3",)


def test_the_kind_classes_partition_the_kinds() -> None:
    assert SAMPLERS <= KINDS and TRANSFORMING <= KINDS and not SAMPLERS & TRANSFORMING
    assert "EnterPostproc" in KINDS and "EnterPostproc" not in TRANSFORMING
