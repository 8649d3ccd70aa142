"""The UB-free slice over toy programs: statements joined by ';', a greedy drop-one-statement shrink."""

from __future__ import annotations

from collections.abc import Callable

from seedzer.finding.tir.ub_slice import ub_free_slice
from seedzer.kernel.tir.case import Case


def drop_one(script: str, test: Callable[[str], bool], out_of_time: Callable[[], bool]) -> str | None:
    parts = script.split(";")
    for i in range(len(parts)):
        if out_of_time():
            return None
        smaller = ";".join(parts[:i] + parts[i + 1:])
        if test(smaller):
            return smaller
    return None


def fails_with(statement: str) -> Callable[[Case], bool]:
    return lambda case: statement in case.script.split(";")


def undefined(script: str) -> str | None:
    return "division by a value that may be zero" if "ub" in script.split(";") else None


def test_ub_off_the_failures_path_is_sliced_away() -> None:
    found = ub_free_slice(Case("a;ub;bad;c", (), 0), fails_with("bad"), undefined, drop_one)
    assert found.script is not None and "ub" not in found.script.split(";") and "bad" in found.script
    assert found.steps >= 1 and found.tests >= 1


def test_ub_the_failure_needs_stays_dismissed() -> None:
    def needs_ub(case: Case) -> bool:
        return {"ub", "bad"} <= set(case.script.split(";"))

    found = ub_free_slice(Case("a;ub;bad", (), 0), needs_ub, undefined, drop_one)
    assert found.script is None and "no smaller program fails the same way" in found.why


def test_a_program_without_ub_is_its_own_slice() -> None:
    found = ub_free_slice(Case("a;bad", (), 0), fails_with("bad"), undefined, drop_one)
    assert found == found.__class__("a;bad", 0, 0)


def test_the_budget_ends_a_slicing() -> None:
    found = ub_free_slice(Case("a;b;c;ub;bad", (), 0), lambda case: False, undefined, drop_one, max_tests=2)
    assert found.script is None and found.tests == 2 and "budget" in found.why
