"""The schedule level's object: its seeds are the loaded PrimFuncs with an empty plan, and an entry read
back on ``--resume`` is refused in one line when its hand-edited plan is no trace of its PrimFunc."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from seedzer.kernel.sched.case import SchedPlan
from seedzer.levels.sched.level import LEVEL
from seedzer.passes.sched.items import plan_items
from seedzer.seed import passes_to_json

SCRIPT = (Path(__file__).resolve().parents[3] / "fixtures" / "seeds" / "matmul.py").read_text()
TRACE = [["GetSBlock", [], ["matmul", "main"], ["b0"]], ["GetLoops", ["b0"], [], ["l1", "l2", "l3"]],
         ["SamplePerfectTile", ["l1"], [2, 64], ["v4", "v5"]], ["Split", ["l1", "v4", "v5"], [True, False],
                                                                 ["l6", "l7"]]]
DECISIONS = [[2, [2, 2]]]


def stored(trace: list, decisions: list) -> str:
    return passes_to_json(plan_items(SchedPlan([trace, decisions], ("RewriteParallelVectorizeUnroll",))))


def test_a_plan_made_by_the_generator_reads_back() -> None:
    assert LEVEL.check_entry(SCRIPT, stored(TRACE, DECISIONS), []) is None
    assert LEVEL.check_entry(SCRIPT, "[]", []) is None  # a seed: no plan yet


@pytest.mark.parametrize(("edit", "needle"), [
    (lambda t, d: ([["Splt", *t[3][1:]] if i == 3 else x for i, x in enumerate(t)], d),
     "unknown instruction kind 'Splt'"),
    (lambda t, d: ([["Split", ["l9", "v4", "v5"], *t[3][2:]] if i == 3 else x for i, x in enumerate(t)], d),
     "random variable 'l9' is not defined"),
    (lambda t, d: (t, [[2, [7]]]), "instruction 2 (SamplePerfectTile)"),
    (lambda t, d: ([["GetSBlock", [], ["no_such_block", "main"], ["b0"]], *t[1:]], d), "no block 'no_such_block'"),
])
def test_a_hand_edited_plan_is_refused_in_one_line(edit: object, needle: str) -> None:
    trace, decisions = edit(json.loads(json.dumps(TRACE)), json.loads(json.dumps(DECISIONS)))  # type: ignore[operator]
    why = LEVEL.check_entry(SCRIPT, stored(trace, decisions), [])
    assert why is not None and needle in why.reason and "\n" not in why.reason
    assert why.in_sequence  # the plan file is at fault, not the loader's PrimFunc beside it


def test_a_plan_that_is_not_json_is_refused() -> None:
    why = LEVEL.check_entry(SCRIPT, "[{not json", [])
    assert why is not None and why.reason.startswith("its schedule plan: ") and why.in_sequence


def test_the_api_is_the_installed_schedules_transforming_primitives() -> None:
    """Read in a child of the zygote (this process imports no TVM): getters and samplers are not primitives."""
    api = LEVEL.api()
    assert api is not None and api.level == "sched" and api.label == "schedule primitives"
    assert {"Split", "ComputeAt", "Vectorize", "RFactor"} <= set(api.operations)
    assert not {"GetLoops", "GetSBlock", "SamplePerfectTile"} & set(api.operations)
    assert "ms.rule.MultiLevelTiling" in api.generators and "ms.MutateTileSize" in api.generators
