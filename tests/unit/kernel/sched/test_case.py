"""The schedule level's case and plan: JSON round trips, and a hand-edited plan named without TVM."""

from __future__ import annotations

import json

import pytest

from seedzer.kernel.common import Observation, Stage, Symptom
from seedzer.kernel.sched.case import LLVM_POSTPROCS, SchedCase, SchedChecks, SchedPlan, plan_problem
from seedzer.kernel.sched.trace import Instruction
from seedzer.kernel.tir.case import Step

TRACE = [[["GetSBlock", [], ["C", "main"], ["b0"]], ["GetLoops", ["b0"], [], ["l1", "l2", "l3"]],
          ["Parallel", ["l1"], [], []]], []]


def test_a_case_survives_json_with_its_trace_postprocessors_steps_and_expectation() -> None:
    case = SchedCase("script", TRACE, 7, LLVM_POSTPROCS, (Step("tirx.Simplify", role="fuzzed"),),
                     checks=SchedChecks(debug_mask=0),
                     expected=Observation(Symptom.EXCEPTION, Stage.SCHEDULE, "Split", "boom", step_index=3))
    back = SchedCase.from_json(json.loads(json.dumps(case.to_json())))
    assert back == case
    assert [i.kind for i in back.instructions()] == ["GetSBlock", "GetLoops", "Parallel"]


def test_a_case_from_an_older_record_without_optional_fields_reads() -> None:
    back = SchedCase.from_json({"script": "s", "trace": TRACE, "input_seed": 1, "unknown_later_field": 3})
    assert back.postprocs == () and back.steps == () and back.checks == SchedChecks()


def test_a_plan_round_trips_and_is_made_of_instructions() -> None:
    plan = SchedPlan.of([Instruction("GetSBlock", (), ("C", "main"), ("b0",))], LLVM_POSTPROCS)
    assert SchedPlan.from_json(json.loads(json.dumps(plan.to_json()))) == plan
    assert plan_problem(plan.to_json()) is None


@pytest.mark.parametrize(("data", "why"), [
    ({"trace": [[["Sploot", ["l1"], [], []]], []]}, "unknown instruction kind 'Sploot'"),
    ({"trace": [[["GetSBlock", [], ["C", "main"], ["b0"]], ["Parallel", ["l7"], [], []]], []]},
     "random variable 'l7' is not defined"),
    ({"trace": TRACE, "postprocs": ["RewriteEverything"]}, "unknown postprocessor 'RewriteEverything'"),
    ({"trace": "[[], []"}, "not JSON"),
    ([1, 2], "a schedule plan is"),
])
def test_a_hand_edited_plan_is_refused_with_one_line_naming_the_culprit(data: object, why: str) -> None:
    problem = plan_problem(data)
    assert problem is not None and why in problem and "\n" not in problem


def test_the_kernel_chain_defines_no_name_twice() -> None:
    import re
    from collections import defaultdict

    from seedzer.finding.repro import SHARED_KERNELS, kernel_source
    from seedzer.kernel.sched import CHAIN

    defined: dict[str, list[str]] = defaultdict(list)
    for module in (*SHARED_KERNELS, *CHAIN.split("+")):
        _head, code = kernel_source(module)
        for found in re.findall(r"^(?:def|class)\s+(\w+)|^(\w+)\s*(?::[^=\n]*)?=", code, re.MULTILINE):
            defined[found[0] or found[1]].append(module)
    assert not {n: ms for n, ms in defined.items() if len(ms) > 1}
