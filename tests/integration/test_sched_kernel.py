"""The schedule level's core on PrimFuncs as the loader makes them: a conv and a matmul model loaded
by the real loader, MetaSchedule's design spaces and the generator's mutants run by the kernel, and
the kernel chain as a standalone ``repro.py`` in a clean interpreter (real TVM, onnxruntime)."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest

from seedzer.execute.forked import call_forked
from seedzer.execute.isolated_load import OnnxLoader
from seedzer.finding.repro import render
from seedzer.kernel.common import Stage, Symptom
from seedzer.kernel.sched import CHAIN
from seedzer.kernel.sched.case import SchedCase
from seedzer.kernel.sched.observe import SchedBuilder, SchedMemo, observe
from seedzer.load.loader import LoadOptions
from seedzer.seed import input_seed
from tests.integration.conftest import conv_model, matmul_model, write_pool

pytestmark = pytest.mark.integration
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "sched"


@pytest.fixture(scope="module")
def scripts(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    pool = write_pool(tmp_path_factory.mktemp("pool"), {"conv.onnx": conv_model(), "matmul.onnx": matmul_model()})
    loader = OnnxLoader(LoadOptions(differential=False, timeout=300))
    found = [s.seed.script for name in ("conv.onnx", "matmul.onnx") for s in loader.load(pool / name).seeds]
    assert any("conv2d" in s for s in found) and any("matmul" in s for s in found)
    return found


def _run_chain(scripts: list[str], seed: int) -> dict[str, int]:
    """Generator and kernel on every script: MetaSchedule's plan, then a chain of mutants."""
    from seedzer.kernel.tir.lowering import parse_func
    from seedzer.mutate.sched.generator import SchedGenerator

    rng = random.Random(seed)
    generator, memo = SchedGenerator(), SchedMemo()
    symptoms: dict[str, int] = {}
    for script in scripts:
        func = parse_func(script)
        plans = [generator.fresh(func, rng).plan]
        for _ in range(4):
            made = generator.mutate(func, rng.choice(plans), rng, plans)
            if made is None:
                continue
            case = SchedCase(script, made.plan.trace, input_seed(script), made.plan.postprocs)
            observed = observe(case, SchedBuilder(memo=memo))
            symptoms[str(observed.symptom)] = symptoms.get(str(observed.symptom), 0) + 1
            if observed.symptom is Symptom.OK:
                plans.append(made.plan)
    return symptoms


def test_design_spaces_and_mutants_of_loader_functions_run_and_mostly_pass(scripts: list[str]) -> None:
    from seedzer.kernel.tir.lowering import parse_func
    from seedzer.mutate.sched.generator import SchedGenerator

    generator = SchedGenerator()
    for script in scripts:  # every design space MetaSchedule makes is a schedule a tuning run could pick
        made = generator.fresh(parse_func(script), random.Random(0))
        observed = observe(SchedCase(script, made.plan.trace, input_seed(script), made.plan.postprocs))
        assert observed.symptom is Symptom.OK, observed.headline()
    done = call_forked(_run_chain, scripts, 3, timeout=900)  # a drawn primitive may crash TVM: in a child
    if done.ok:
        assert done.value.get("ok", 0) >= sum(done.value.values()) // 3, done.value


def _repro(tmp_path: Path, case: SchedCase) -> subprocess.CompletedProcess[str]:
    path = tmp_path / "repro.py"
    path.write_text(render(CHAIN, "numpy", case.to_json(), title="sched case", big={"script": "SCRIPT"}))
    return subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=600)


def test_the_kernel_chain_is_a_standalone_reproducer(tmp_path: Path, scripts: list[str]) -> None:
    matmul = next(s for s in scripts if 'T.sblock("matmul")' in s)
    block = "matmul"
    index = [["GetSBlock", [], [block, "main"], ["b0"]], ["CacheIndex", ["b0"], ["global", 0], ["b1"]]]
    expected = observe(SchedCase(matmul, [index, []], input_seed(matmul)))  # a real TVM bug, as the worker sees it
    assert (expected.symptom, expected.stage, expected.pass_name) == (Symptom.EXCEPTION, Stage.SCHEDULE, "CacheIndex")
    present = _repro(tmp_path, SchedCase(matmul, [index, []], input_seed(matmul), expected=expected))
    assert present.returncode == 1, present.stdout + present.stderr  # the bug is present
    assert "reproduced" in present.stdout
    clean = [["GetSBlock", [], [block, "main"], ["b0"]], ["GetLoops", ["b0"], [], ["l1", "l2", "l3"]],
             ["Parallel", ["l1"], [], []]]
    gone = _repro(tmp_path, SchedCase(matmul, [clean, []], input_seed(matmul), expected=expected))
    assert gone.returncode == 0, gone.stdout + gone.stderr


@pytest.mark.parametrize("name", sorted(p.name for p in FIXTURES.glob("bug_*.json")))
def test_each_schedule_bug_fixture_still_fails_its_way(name: str) -> None:
    from seedzer.kernel.messages import ir_names, same_failure

    data = json.loads((FIXTURES / name).read_text())
    case = SchedCase.from_json(data["case"])
    assert case.expected is not None
    done = call_forked(observe, case, timeout=300)
    if case.expected.symptom is Symptom.CRASH:
        assert done.signal == case.expected.signal, done.describe()
        return
    assert done.ok, done.describe()
    assert same_failure(case.expected, done.value, ir_names(case.script)), done.value.headline()
