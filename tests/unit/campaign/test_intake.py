"""Taking in a worker's result (:mod:`seedzer.campaign.intake`): judged, counted and merged at once, its
parent updated, and its fate decided without writing anything (the loop writes once it fed the workers)."""

from __future__ import annotations

from pathlib import Path

from seedzer.campaign.outcome import Fate
from seedzer.campaign.triggers import triggered_feature
from seedzer.kernel.common import Observation, Stage, Symptom
from tests.unit.campaign.parts import Parts, case_info, result

ERROR = Observation(Symptom.EXCEPTION, Stage.PASS, "FakePass", "InternalError: Check failed: (x == y) is false")
PRECONDITION = Observation(Symptom.EXCEPTION, Stage.PASS, "FakePass",
                           "InternalError: FakePass must be called after LowerOpaqueBlock")


def test_a_clean_mutant_with_new_coverage_is_kept_with_what_it_taught(tmp_path: Path) -> None:
    parts = Parts(tmp_path / "camp")
    seed = parts.seed("a")
    seed.failures = 4
    outcome = parts.intake.result(case_info(1, "s1", "a\nb"), result(Observation.ok(), ["a", "b"], ("tirx.Simplify",)),
                                  worker=1)
    assert outcome.fate is Fate.KEPT and outcome.keep is not None
    keep = outcome.keep
    assert keep.gain == 3 and keep.mutations == ("FakeAppend",) and keep.seconds == 0.5  # a, b and the trigger
    assert keep.triggered == ("tirx.Simplify",) and triggered_feature("tir", "tirx.Simplify") in keep.features
    assert keep.entry.parent == "s1" and keep.entry.worker == 1 and keep.entry.executed
    assert seed.failures == 0 and seed.cost == 0.5  # the parent learns at once
    assert len(parts.corpus) == 1 and parts.stats.coverage == 3  # merged, not written
    assert parts.counts.by_symptom == {("ok", ""): 1} and parts.counts.by_level == {("tir", "ok"): 1}
    assert parts.counts.by_mutation == {("FakeAppend", "ok"): 1} and parts.stats.execs == 1


def test_nothing_new_and_a_seeds_own_run_are_not_interesting(tmp_path: Path) -> None:
    parts = Parts(tmp_path / "camp")
    seed = parts.seed("a")
    ran = parts.intake.result(case_info(1, "s1", "a", task="exec", mutators=()), result(Observation.ok(), ["a"]), 0)
    assert ran.fate is Fate.NOT_INTERESTING and seed.executed and seed.worker == 0
    again = parts.intake.result(case_info(2, "s1", "a\na"), result(Observation.ok(), ["a"]), 0)
    assert again.fate is Fate.NOT_INTERESTING and seed.failures == 1  # one more unproductive mutation
    assert (again.keep, again.candidate, again.turned) == (None, None, None)


def test_a_bug_is_a_candidate_new_then_repeated_and_never_kept(tmp_path: Path) -> None:
    parts = Parts(tmp_path / "camp")
    parts.seed("a")
    first = parts.intake.result(case_info(1, "s1", "a\nERROR"), result(ERROR, ["a", "ERROR"]), 0)
    again = parts.intake.result(case_info(2, "s1", "a\nERROR"), result(ERROR, ["a", "ERROR"]), 1)
    assert (first.fate, again.fate) == (Fate.NEW_CANDIDATE, Fate.REPEAT)
    assert first.keep is None and first.candidate is not None and first.candidate.observed.provenance.worker == 0
    assert not parts.db.findings() and parts.counts.by_symptom == {("exception", "pass"): 2}


def test_an_invalid_result_is_turned_away_as_the_worker_observed_it(tmp_path: Path) -> None:
    parts = Parts(tmp_path / "camp")
    parts.seed("a")
    invalid = Observation(Symptom.INVALID, Stage.MUTATE, None, "unusable test case")
    plain = parts.intake.result(case_info(1, "s1", "a\nINVALID"), result(invalid, ["a", "INVALID"]), 0)
    assert plain.fate is Fate.FILTERED and plain.turned is not None and plain.turned.observation == invalid
    ruled = parts.intake.result(case_info(2, "s1", "a\nPRECONDITION"), result(PRECONDITION, ["a", "PRECONDITION"]), 0)
    assert ruled.fate is Fate.FILTERED and ruled.turned is not None
    assert ruled.turned.observation.symptom is Symptom.INVALID and ruled.turned.raw == PRECONDITION  # the oracle's
    assert parts.stats.invalid == 2 and parts.db.filter_samples() == []  # counted now, sampled when acted on
