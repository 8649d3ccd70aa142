"""A schedule plan as items: the round trip with TVM's trace JSON, how an edited sequence is kept as a
trace, and the one line a hand-edited plan gets (TVM-free)."""

from __future__ import annotations

from seedzer.kernel.sched.case import LLVM_POSTPROCS, SchedPlan
from seedzer.kernel.sched.trace import Instruction, parse_trace
from seedzer.passes.sched.items import (
    item_of,
    items_plan,
    items_problem,
    plan_items,
    postproc_item,
    repaired,
    sequence_problem,
    settled,
)
from seedzer.seed import PassSpec, passes_to_json

JSON = [[["GetSBlock", [], ["C", "main"], ["b0"]], ["GetLoops", ["b0"], [], ["l1", "l2"]],
         ["SampleCategorical", [], [[0, 16, 64], [0.5, 0.25, 0.25]], ["v3"]],
         ["Annotate", ["l1", "v3"], ["pragma_auto_unroll_max_step"], []],
         ["Split", ["l2", "None", 4], [True, False], ["l4", "l5"]]], [[2, 1]]]


def test_a_plan_round_trips_through_its_items() -> None:
    plan = SchedPlan(JSON, LLVM_POSTPROCS[:2])
    items = plan_items(plan)
    assert [i.name for i in items][-2:] == [f"postproc.{p}" for p in LLVM_POSTPROCS[:2]]
    assert items_plan(items) == plan
    assert items_problem(items) is None


def test_an_instruction_that_lost_its_input_goes_with_what_uses_its_results() -> None:
    insts = parse_trace(JSON)
    out = repaired([insts[0], *insts[2:]])  # GetLoops gone: the annotate and the split lose their loops
    assert [i.kind for i in out] == []  # and the getter and sampler nothing uses go too
    kept = repaired([insts[0], insts[1], insts[4]])
    assert [i.kind for i in kept] == ["GetSBlock", "GetLoops", "Split"]
    assert kept[2].inputs == ("l2", "None", 4) and kept[2].outputs == ("l3", "l4")


def test_a_name_defined_again_is_the_newer_one_from_there_on() -> None:
    a = Instruction("GetSBlock", (), ("C", "main"), ("b0",))
    b = Instruction("GetSBlock", (), ("D", "main"), ("b0",))
    out = repaired([a, b, Instruction("ComputeInline", ("b0",))])
    assert [i.kind for i in out] == ["GetSBlock", "ComputeInline"] and out[0].attrs == ("D", "main")


def test_postprocessors_are_kept_last_once_in_metaschedules_order() -> None:
    items = [postproc_item(LLVM_POSTPROCS[2]), *plan_items(SchedPlan(JSON)), postproc_item(LLVM_POSTPROCS[0]),
             postproc_item(LLVM_POSTPROCS[2]), postproc_item("NoSuch")]
    assert [i.name for i in settled(items)][-2:] == [f"postproc.{LLVM_POSTPROCS[0]}", f"postproc.{LLVM_POSTPROCS[2]}"]


def test_a_hand_edited_plan_is_one_line_naming_its_fault() -> None:
    items = plan_items(SchedPlan(JSON))
    unknown = [*items[:3], PassSpec("Splitt", items[4].args)]
    assert "unknown instruction kind 'Splitt'" in (items_problem(unknown) or "")
    missing = [*items[:1], items[4]]
    assert "'l2' is not defined" in (items_problem(missing) or "")
    out_of_range = [item_of(parse_trace([JSON[0][2:3], [[0, 7]]])[0])]
    assert "not the index of one of its 3 candidates" in (items_problem(out_of_range) or "")
    assert "unknown postprocessor 'Nope'" in (items_problem([*items, PassSpec("postproc.Nope")]) or "")
    assert "after the postprocessors" in (items_problem([postproc_item(LLVM_POSTPROCS[0]), *items]) or "")
    assert "not a sequence" in (sequence_problem("{") or "")
    assert sequence_problem(passes_to_json(items)) is None
    for problem in (items_problem(unknown), items_problem(missing), sequence_problem("{")):
        assert problem is not None and "\n" not in problem
