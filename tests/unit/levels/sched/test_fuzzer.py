"""The schedule level in a worker: the primitives a case called and those that accepted their arguments,
the plans remembered per PrimFunc, and a TVM without MetaSchedule saying so in one line while the level
runs on the Schedule API (drives TVM)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from seedzer.kernel.common import Observation, Stage, Symptom
from seedzer.kernel.sched.case import SchedPlan
from seedzer.levels.sched.fuzzer import PlanMemory, disabled_lines, exercised

ROOT = Path(__file__).resolve().parents[4]


def test_a_refused_primitive_is_called_but_not_accepted() -> None:
    steps = ["GetSBlock", "GetLoops", "Split", "Vectorize", "Parallel"]
    refused = Observation(Symptom.INVALID, Stage.SCHEDULE, "Vectorize", "refused: ScheduleError", step_index=3)
    assert exercised(steps, 5, refused) == (["Split", "Vectorize"], ["Split"])
    ok = Observation(Symptom.OK, Stage.COMPARE, None, "")
    assert exercised([*steps[:3], "RewriteLayout"], 3, ok) == (["Split", "postproc.RewriteLayout"],
                                                               ["Split", "postproc.RewriteLayout"])


def test_plans_are_remembered_per_function_newest_last_and_bounded() -> None:
    memory = PlanMemory(plans=2, functions=1)
    plans = [SchedPlan([[["GetSBlock", [], [f"b{i}", "main"], ["b0"]]], []]) for i in range(3)]
    memory.remember("f", SchedPlan([[], []]))  # an empty plan is no partner
    for plan in plans:
        memory.remember("f", plan)
    assert memory.others("f", plans[2]) == [plans[1]]
    memory.remember("g", plans[0])
    assert memory.others("f", plans[0]) == []  # one function remembered: f was forgotten


def test_metaschedule_missing_is_one_line_and_the_schedule_api_still_runs() -> None:
    assert disabled_lines({"ms.space": "why", "decisions": "why", "postprocs": "why", "dlight": "other"}) == [
        "sched: decisions, ms.space, postprocs off in this worker (the Schedule API's ways still run): why",
        "sched: dlight off in this worker (the Schedule API's ways still run): other"]
    program = (
        "import sys, random\n"
        "import tvm.s_tir\n"
        "sys.modules['tvm.s_tir.meta_schedule.tune_context'] = None\n"  # as if this TVM's MetaSchedule were broken
        "from seedzer.kernel.tir.lowering import parse_func\n"
        "from seedzer.kernel.sched.case import SchedPlan\n"
        "from seedzer.levels.sched.fuzzer import disabled_lines\n"
        "from seedzer.mutate.sched.generator import SchedGenerator\n"
        "g = SchedGenerator()\n"
        "print(*disabled_lines(g.disabled), sep='\\n')\n"
        f"func = parse_func(open({str(ROOT / 'tests/fixtures/seeds/matmul.py')!r}).read())\n"
        "made = [g.mutate(func, SchedPlan([[], []]), random.Random(i)) for i in range(6)]\n"
        "print('made', sorted({m.mutations[0] for m in made if m}))\n")
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=300,
                          cwd=ROOT, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}, check=False)
    lines = done.stdout.splitlines()
    assert done.returncode == 0, done.stderr[-2000:]
    assert len([line for line in lines if "meta_schedule" in line]) == 1, lines
    assert "decisions, ms.space, postprocs off" in lines[0]
    made = lines[-1]
    assert made.startswith("made ['trace.") and "ms.space" not in made, made
