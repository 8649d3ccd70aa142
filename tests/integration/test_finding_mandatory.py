"""Mandatory-pass failures with real TVM (issue 43): a mutant whose minimal lowering fails is the
candidate it is when its checks ask for it (the fuzz workers' cases), and the gate files it against the
code at fault when the program is well-formed and adds no undefined behaviour to its seed."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

pytest.importorskip("tvm")

from seedzer.finding.tir.culprit import variant
from seedzer.finding.tir.gate import GateJob, run_gate
from seedzer.kernel.common import Symptom
from seedzer.kernel.tir.case import Case, Checks
from seedzer.kernel.tir.observe import observe
from seedzer.passes.tir.contracts import pipeline_steps

BUGS = Path(__file__).parents[1] / "fixtures" / "bugs"
LET_DIV = (BUGS / "lowerintrin_let_div" / "ir.py").read_text()
"""A float let inside a block: InjectPermutedLayout (mandatory) fails in arith's IntSetAnalyzer."""
SEED = LET_DIV.replace('            x: T.let[T.float32] = a[vi]\n'
                       '            y: T.let[T.float32] = T.Cast("float32", vi) / x\n'
                       '            c[vi] = y', "            c[vi] = a[vi]")


def _minimal_case(judge_minimal: bool) -> Case:
    """TVM's pipeline with every optional pass left out or minimal: what the minimal lowering runs."""
    case = Case(LET_DIV, tuple(pipeline_steps()), 1, checks=Checks(judge_minimal=judge_minimal, intended_pragmas=True))
    return variant(case, [])


def test_a_failing_minimal_lowering_is_invalid_unless_the_case_asks_to_judge_it() -> None:
    assert SEED != LET_DIV
    old = observe(_minimal_case(False))
    assert old.symptom is Symptom.INVALID and old.message.startswith("the minimal lowering fails")
    new = observe(_minimal_case(True))
    assert new.symptom is Symptom.EXCEPTION and new.pass_name == "s_tir.InjectPermutedLayout"
    assert "IntImm supports only int or uint or bool type" in new.message


def test_the_gate_files_a_mandatory_pass_failure_of_a_well_formed_program_against_the_code_at_fault() -> None:
    case = _minimal_case(True)
    failure = observe(case)
    verdict = run_gate(GateJob("mandatory", dataclasses.replace(case, expected=failure),
                               [("the original seed", SEED)]))
    assert verdict.verdict == "bug", verdict.reason
    assert verdict.culprit == ["arith.IntSetAnalyzer"]
    assert verdict.at_fault is not None and verdict.at_fault.shared
    assert any("minimal lowering fails the same way on this well-formed program" in n for n in verdict.notes)


ASSERTS = '''# from tvm.script import tirx as T
@T.prim_func(s_tir=True)
def main(a: T.Buffer((8,), "float32"), c: T.Buffer((8,), "float32")):
    for i in range(8):
        with T.sblock("c"):
            vi = T.axis.spatial(8, i)
            T.Assert(vi < 4, "seedzer assertion")
            c[vi] = a[vi]
'''
"""A program whose own assertion fails at run time in every build (a mutant made it false)."""


def test_a_program_whose_own_assertion_fails_at_run_time_is_invalid_even_when_judged() -> None:
    case = variant(Case(ASSERTS, tuple(pipeline_steps()), 1, checks=Checks(judge_minimal=True)), [])
    got = observe(case)
    assert got.symptom is Symptom.INVALID and got.message.startswith("the minimal lowering fails"), got.headline()
