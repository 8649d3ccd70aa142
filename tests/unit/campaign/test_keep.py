"""The campaign's keep rule: which results join the corpus, and what parents learn from them."""

from __future__ import annotations

from seedzer.campaign.keep import KeepRule
from seedzer.execute.records import TestCaseInfo
from seedzer.kernel.common import Observation, Stage, Symptom
from seedzer.seed import PassSpec, passes_from_json, passes_to_json
from seedzer.store.corpus import CorpusEntry, entry_id

PASSES = passes_to_json([PassSpec("tirx.Simplify"), PassSpec("tirx.LowerIntrin"), PassSpec("tirx.RemoveNoOp")])
ERROR = Observation(Symptom.EXCEPTION, Stage.PASS, "tirx.Simplify", "InternalError: Check failed")


def _parent() -> CorpusEntry:
    return CorpusEntry("p" * 12, "seed", "[]", "m.onnx", None, "add", failures=3, level="tir")


def _mutant() -> TestCaseInfo:
    return TestCaseInfo(7, "fuzz", "p" * 12, "tir", "mutant", PASSES, ["FakeAppend"], announced=True)


def test_a_clean_mutant_with_new_coverage_is_kept_without_its_unchanged_passes() -> None:
    parent = _parent()
    entry = KeepRule().apply(_mutant(), 2, Observation.ok(), [1], parent, worker=3)
    assert entry is not None
    kept = passes_from_json(entry.passes)
    assert [p.name for p in kept] == ["tirx.Simplify", "tirx.RemoveNoOp"]
    assert entry.seed_id == entry_id("tir", "mutant", kept) and entry.script == "mutant"
    assert (entry.origin, entry.parent, entry.op, entry.executed, entry.worker) == ("m.onnx", "p" * 12, "add", True, 3)
    assert parent.failures == 0


def test_a_mutant_without_new_coverage_or_not_clean_counts_against_its_parent() -> None:
    parent = _parent()
    rule = KeepRule()
    assert rule.apply(_mutant(), 0, Observation.ok(), [], parent, 0) is None
    assert rule.apply(_mutant(), 5, ERROR, [], parent, 0) is None  # a finding, never a parent
    invalid = Observation(Symptom.INVALID, Stage.MUTATE, None, "unusable")
    assert rule.apply(_mutant(), 5, invalid, [], parent, 0) is None
    assert parent.failures == 6


def test_a_test_case_run_as_given_is_never_kept_again_and_marks_its_entry_executed() -> None:
    parent = _parent()
    tc = TestCaseInfo(1, "exec", parent.seed_id, "tir", "seed", "[]")
    assert KeepRule().apply(tc, 9, Observation.ok(), [], parent, worker=2) is None
    assert (parent.executed, parent.worker, parent.failures) == (True, 2, 3)


def test_a_mutant_of_an_unknown_parent_is_kept_without_provenance() -> None:
    entry = KeepRule().apply(_mutant(), 1, Observation.ok(), [], None, worker=0)
    assert entry is not None and (entry.origin, entry.op) == ("", "")
