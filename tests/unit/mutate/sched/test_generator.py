"""The schedule generator: each way makes plans whose traces apply (MetaSchedule's design space,
its mutators, dlight, the trace operations with drawn primitives), named by the mutations that made
them (drives TVM)."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from seedzer.kernel.common import Symptom
from seedzer.kernel.sched.case import LLVM_POSTPROCS, SchedCase, SchedPlan
from seedzer.kernel.sched.observe import SchedBuilder, SchedMemo, observe
from seedzer.kernel.sched.trace import parse_trace, trace_problem
from seedzer.mutate.sched.generator import MUTATIONS, SchedGenerator
from seedzer.seed import input_seed

SEEDS = Path(__file__).resolve().parents[3] / "fixtures" / "seeds"


@pytest.fixture(scope="module")
def matmul() -> tuple[str, Any]:
    from seedzer.kernel.tir.lowering import parse_func

    script = (SEEDS / "matmul.py").read_text()
    return script, parse_func(script)


def _symptom(script: str, plan: SchedPlan, memo: SchedMemo) -> Symptom:
    return observe(SchedCase(script, plan.trace, input_seed(script), plan.postprocs), SchedBuilder(memo=memo)).symptom


def test_a_fresh_plan_is_metaschedules_design_space_with_the_llvm_postprocessors(matmul: tuple[str, Any]) -> None:
    script, func = matmul
    made = SchedGenerator().fresh(func, random.Random(0))
    assert made.mutations[0] == "ms.space" and "ms.rule.MultiLevelTiling" in made.mutations
    assert made.plan.postprocs == LLVM_POSTPROCS
    kinds = [i.kind for i in parse_trace(made.plan.trace)]
    assert "SamplePerfectTile" in kinds and "Split" in kinds
    assert _symptom(script, made.plan, SchedMemo()) is Symptom.OK  # a schedule a tuning run could pick


@pytest.mark.parametrize("way", ["decisions", "trace.insert", "trace.replace", "trace.delete", "trace.crossover",
                                 "postprocs", "ms.space"])
def test_each_way_makes_named_plans_that_mostly_apply(matmul: tuple[str, Any], way: str) -> None:
    script, func = matmul
    rng = random.Random(way)
    generator = SchedGenerator(weights={way: 1.0})
    memo = SchedMemo()
    plans = [SchedGenerator().fresh(func, rng).plan]
    symptoms = []
    for _ in range(12):
        made = generator.mutate(func, rng.choice(plans), rng, plans)
        if made is None:
            continue
        assert trace_problem(parse_trace(made.plan.trace)) is None
        assert set(made.mutations) <= MUTATIONS and made.mutations
        symptom = _symptom(script, made.plan, memo)
        symptoms.append(symptom)
        if symptom is Symptom.OK:
            plans.append(made.plan)
    assert symptoms, generator.stats.as_dict()
    assert symptoms.count(Symptom.OK) >= len(symptoms) // 3, (symptoms, generator.stats.as_dict())


def test_a_generator_without_metaschedule_still_draws_primitives(matmul: tuple[str, Any]) -> None:
    _script, func = matmul
    generator = SchedGenerator(weights={"trace.insert": 1.0, "ms.space": 1.0})
    generator.disabled["ms.space"] = "tvm.s_tir.meta_schedule is unavailable"
    assert generator.fresh(func, random.Random(1)).plan.trace == [[], []]
    made = generator.mutate(func, SchedPlan([[], []]), random.Random(1))
    assert made is not None and made.mutations[0] == "trace.insert"
    assert generator.stats.tried["ms.space"] == 0
