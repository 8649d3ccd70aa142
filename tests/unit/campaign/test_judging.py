"""The oracles' verdict on one execution, counted (:mod:`seedzer.campaign.judging`)."""

from __future__ import annotations

from seedzer.campaign.counts import ExecCounts
from seedzer.campaign.judging import Judge
from seedzer.campaign.stats import CampaignStats
from seedzer.kernel.common import Observation, Stage, Symptom
from seedzer.oracles import make_oracles


def test_every_verdict_is_counted_and_an_invalid_one_among_the_invalid() -> None:
    stats = CampaignStats()
    counts = ExecCounts(stats)
    judge = Judge(make_oracles(["exception", "crash"]), counts, stats)
    error = Observation(Symptom.EXCEPTION, Stage.PASS, "FakePass", "InternalError: Check failed: x")
    precondition = Observation(Symptom.EXCEPTION, Stage.PASS, "FakePass",
                               "InternalError: FakePass must be called after LowerOpaqueBlock")
    hang = Observation(Symptom.HANG, Stage.RUN, None, "no result after 30s")  # its oracle is off
    assert judge.judged(error, "tir") == error
    assert judge.judged(precondition, "tir").symptom is Symptom.INVALID
    assert judge.judged(hang, "graph").symptom is Symptom.INVALID
    assert stats.execs == 3 and stats.invalid == 2
    assert counts.by_symptom == {("exception", "pass"): 1, ("invalid", "pass"): 1, ("invalid", "run"): 1}
    assert counts.by_level == {("tir", "exception"): 1, ("tir", "invalid"): 1, ("graph", "invalid"): 1}
