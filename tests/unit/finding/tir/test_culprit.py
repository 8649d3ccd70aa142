"""Culprit bisection on a fake observer that fails by rule: the passes a failure needs, the variants
it tests (mismatch: the kept steps are the only insertions; ill-formed IR: verified from the first
step; slowdown: the pipeline's optional passes stay)."""

from __future__ import annotations

from seedzer.finding.tir.culprit import bisect, variant
from seedzer.kernel.common import OPT_VS_REFERENCE, Observation, Stage, Symptom
from seedzer.kernel.tir.case import FUZZED, PIPELINE, Case, Step


def _step(name: str, role: str = PIPELINE, optional: bool = False) -> Step:
    return Step(name, {}, {}, role, optional or role == FUZZED)


STEPS = (
    _step("Lower"),
    _step("fz.A", FUZZED),
    _step("Simplify", optional=True),
    _step("fz.B", FUZZED),
    _step("Unroll", optional=True),
    _step("fz.C", FUZZED),
    _step("Codegen"),
)
ERROR = Observation(Symptom.EXCEPTION, Stage.PASS, "Codegen", "Check failed: x")


def _case(expected: Observation) -> Case:
    return Case("", STEPS, 0, expected=expected)


def _names(case: Case) -> set[str]:
    return {s.name for s in case.steps}


def test_an_error_needing_one_fuzzed_and_one_pipeline_pass_names_both_and_where_it_surfaced() -> None:
    seen: list[Case] = []

    def observe(case: Case) -> Observation:
        seen.append(case)
        return ERROR if {"fz.B", "Unroll"} <= _names(case) else Observation.ok()

    found = bisect(_case(ERROR), observe, frozenset())
    assert found.complete and found.names() == ["fz.B", "Unroll", "Codegen"]
    assert all({"Lower", "Codegen"} <= _names(c) for c in seen)  # the mandatory lowering always stays


def test_a_failure_of_the_pipeline_alone_has_no_optional_culprit() -> None:
    found = bisect(_case(ERROR), lambda case: ERROR, frozenset())
    assert found.names() == ["Codegen"] and found.tests >= 1


def test_a_mismatch_variant_makes_the_kept_steps_its_only_insertions() -> None:
    expected = Observation(Symptom.MISMATCH, Stage.COMPARE, None, "differ", comparison="reference vs minimal")
    case = variant(_case(expected), [2, 3])
    assert [(s.name, s.role) for s in case.steps] == [
        ("Lower", PIPELINE), ("Simplify", FUZZED), ("fz.B", FUZZED), ("Codegen", PIPELINE)]
    assert case.checks.compare and not case.checks.pipeline and not case.checks.illformed

    def observe(c: Case) -> Observation:
        fuzzed = {s.name for s in c.steps if s.role == FUZZED}
        return (Observation(Symptom.MISMATCH, Stage.COMPARE, None, "differ", comparison=OPT_VS_REFERENCE)
                if "fz.C" in fuzzed else Observation.ok())

    assert bisect(_case(expected), observe, frozenset()).names() == ["fz.C"]


def test_an_illformed_variant_is_verified_from_its_first_step() -> None:
    expected = Observation(Symptom.ILLFORMED, Stage.PASS, "Unroll", "Invalid use of undefined variable x")
    case = variant(_case(expected), [])
    assert case.checks.illformed and case.checks.pipeline_illformed
    assert [s.name for s in case.steps] == ["Lower", "Codegen"]


def test_a_slowdown_bisects_the_fuzzed_passes_with_the_pipeline_kept_whole() -> None:
    expected = Observation(Symptom.PERF, Stage.RUN, None, "slower")
    seen: list[Case] = []

    def observe(case: Case) -> Observation:
        seen.append(case)
        return expected if "fz.A" in _names(case) else Observation.ok()

    assert bisect(_case(expected), observe, frozenset()).names() == ["fz.A"]
    assert all({"Simplify", "Unroll"} <= _names(c) for c in seen)


def test_the_test_budget_stops_bisection_and_says_so() -> None:
    found = bisect(_case(ERROR), lambda case: ERROR if "fz.C" in _names(case) else Observation.ok(),
                   frozenset(), max_tests=1)
    assert not found.complete and found.tests == 1
