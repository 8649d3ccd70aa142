"""The outcome of a test case (:mod:`seedzer.campaign.outcome`): each fate carries what acting on it needs,
and a bug's fate is what filing classified it as (a new candidate or a repeat)."""

from __future__ import annotations

from pathlib import Path

from seedzer.campaign.outcome import Fate, Keep, Outcome, Turned
from seedzer.kernel.common import Observation, Stage, Symptom
from seedzer.store.corpus import CorpusEntry
from tests.unit.campaign.parts import Parts, case_info

ERROR = Observation(Symptom.EXCEPTION, Stage.PASS, "FakePass", "InternalError: Check failed: (x == y) is false")


def test_each_fate_carries_only_what_acting_on_it_needs(tmp_path: Path) -> None:
    tc = case_info(1, "s1", "a\nb")
    keep = Keep(CorpusEntry("k", "a\nb", "[]", "m.onnx", level="tir"), 1, ("FakeAppend",), 0.5, ("line:b",), ())
    turned = Turned(Observation(Symptom.INVALID, Stage.MUTATE, None, "unusable"), tc, 0)
    made = [Outcome.nothing(), Outcome.not_interesting(), Outcome.invalid(), Outcome.kept(keep),
            Outcome.filtered(turned)]
    assert [o.fate for o in made] == [Fate.NOTHING, Fate.NOT_INTERESTING, Fate.INVALID, Fate.KEPT, Fate.FILTERED]
    assert [(o.keep, o.candidate, o.turned) for o in made[:3]] == [(None, None, None)] * 3
    assert made[3].keep is keep and made[3].candidate is None and made[3].turned is None
    assert made[4].turned is turned and made[4].keep is None and made[4].candidate is None


def test_a_bug_is_a_new_candidate_once_then_a_repeat_even_before_it_is_written(tmp_path: Path) -> None:
    parts = Parts(tmp_path / "camp")
    first = Outcome.bug(parts.filing.candidate(ERROR, case_info(1, "s1", "ERROR"), 0, []))
    again = Outcome.bug(parts.filing.candidate(ERROR, case_info(2, "s1", "ERROR"), 1, []))
    assert (first.fate, again.fate) == (Fate.NEW_CANDIDATE, Fate.REPEAT)  # two answers in one poll
    assert first.candidate is not None and again.candidate is not None
    assert first.candidate.signature == again.candidate.signature and not parts.db.findings()  # nothing written yet
    parts.filing.file(first.candidate)
    parts.filing.file(again.candidate)
    (row,) = parts.db.findings()
    assert row.signature == first.candidate.signature and row.count == 2 and parts.gate.submitted == [row.signature]
