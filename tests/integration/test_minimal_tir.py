"""A TIR finding's plain reproducer on real TVM: a pass failure (VectorizeLoop on a unit vectorized loop
that keeps an annotation: tests/fixtures/bugs/vectorize_unit_annotated) and a wrong result of TVM's default
pipeline (vectorize_alloc), each made, then run in a clean interpreter (exit 1, no Seedzer)."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("tvm")

from seedzer.finding.minimal.program import PASS_FAILURE, WRONG_RESULT, Made
from seedzer.finding.minimal.text import Docs
from seedzer.finding.tir.minimal_repro import TirMinimalJob, make_tir_minimal
from seedzer.kernel.common import Symptom
from seedzer.kernel.tir.case import Case
from seedzer.kernel.tir.observe import observe
from seedzer.passes.tir.contracts import pipeline_steps

BUGS = Path(__file__).resolve().parents[1] / "fixtures" / "bugs"


def _case(name: str) -> Case:
    case = Case((BUGS / name / "ir.py").read_text(), tuple(pipeline_steps()), input_seed=7)
    return dataclasses.replace(case, expected=observe(case))


def _runs(text: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    (tmp_path / "minimal.py").write_text(text)
    return subprocess.run([sys.executable, "-I", "minimal.py"], cwd=tmp_path, capture_output=True, text=True,
                          timeout=300, check=False)


def test_a_pass_failure_is_the_module_the_pass_receives_with_that_pass_alone(tmp_path: Path) -> None:
    case = _case("vectorize_unit_annotated")
    assert case.expected is not None and case.expected.symptom is Symptom.EXCEPTION
    made = make_tir_minimal(TirMinimalJob(case, ("tirx.VectorizeLoop",), Docs("t", (), "0.27.0.post1"), 60))
    assert isinstance(made, Made), made
    program = made.program
    assert program.form == PASS_FAILURE
    assert program.passes == ("tvm.tirx.transform.VectorizeLoop(enable_vectorize=True)",)
    assert "seedzer" not in program.text and program.lines <= 60
    run = _runs(program.text, tmp_path)
    assert run.returncode == 1 and "reproduced: the bug is present" in run.stdout, run.stdout + run.stderr


def test_a_wrong_result_is_two_builds_of_the_program_on_seeded_inputs(tmp_path: Path) -> None:
    case = _case("vectorize_alloc")
    assert case.expected is not None and case.expected.symptom is Symptom.MISMATCH
    made = make_tir_minimal(TirMinimalJob(case, ("tirx.VectorizeLoop",), Docs("t", (), "0.27.0.post1"), 60))
    assert isinstance(made, Made), made
    assert made.program.form == WRONG_RESULT and "tirx.disable_vectorize" in made.program.text
    run = _runs(made.program.text, tmp_path)
    assert run.returncode == 1 and "Mismatched elements" in run.stdout, run.stdout + run.stderr


def test_a_wrong_result_on_a_tvm_without_the_pass_it_turns_off_cannot_run_there(tmp_path: Path) -> None:
    """disabled_pass ignores names it does not know: both builds would agree, a false 'fixed' (campA's
    s_tir.StmtSimplify root on 0.26.0, which has no such pass); the program exits 3 instead."""
    from seedzer.finding.tir.minimal_text import Param, wrong_result

    script = ('@T.prim_func\ndef main(a: T.Buffer((4,), "float32"), b: T.Buffer((4,), "float32")):\n'
              '    for i in range(4):\n        b[i] = a[i] + T.float32(1)\n')
    docs, params = Docs("t", (), "0.27.0.post1"), [Param((4,), "float32")] * 2
    there = _runs(wrong_result(docs, script, params, 7, ["s_tir.StmtSimplify"], "llvm", (1e-4, 1e-5)).text, tmp_path)
    assert there.returncode == 0 and "not reproduced" in there.stdout, there.stdout + there.stderr
    gone = _runs(wrong_result(docs, script, params, 7, ["s_tir.NoSuchPass"], "llvm", (1e-4, 1e-5)).text, tmp_path)
    assert gone.returncode == 3 and "cannot run here" in gone.stdout, gone.stdout + gone.stderr
