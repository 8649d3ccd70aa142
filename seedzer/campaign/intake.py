"""Taking in a worker's result: judged, counted, its coverage merged, its parent updated, its fate decided.

The keep rule (:mod:`seedzer.campaign.keep`) decides whether a clean mutant joins the corpus; a bug
observation becomes a candidate classified by its raw signature (:meth:`Filing.candidate`); an invalid
one is turned away (counted and sampled). The allocation learns what every test case cost and earned
(:mod:`seedzer.campaign.allocator`). What must be written is left to the caller
(:class:`~seedzer.campaign.outcome.Outcome`).
"""

from __future__ import annotations

from seedzer.campaign.allocator import Allocator
from seedzer.campaign.counts import ExecCounts
from seedzer.campaign.feedback import Feedback
from seedzer.campaign.feeding import Feeder
from seedzer.campaign.filing import Filing
from seedzer.campaign.judging import Judge
from seedzer.campaign.keep import KeepRule
from seedzer.campaign.outcome import Keep, Outcome, Turned
from seedzer.campaign.scheduler import record_cost
from seedzer.campaign.stats import CampaignStats
from seedzer.execute.records import ExecResult, TestCaseInfo
from seedzer.kernel.common import Symptom
from seedzer.store.corpus import Corpus


class Intake:
    """Turns worker results into outcomes (see the module docstring)."""

    def __init__(self, feedback: Feedback, judge: Judge, counts: ExecCounts, corpus: Corpus, feeder: Feeder,
                 filing: Filing, stats: CampaignStats, allocator: Allocator, keep: KeepRule | None = None) -> None:
        self.feedback = feedback
        self.judge = judge
        self.counts = counts
        self.corpus = corpus
        self.feeder = feeder
        self.filing = filing
        self.stats = stats
        self.allocator = allocator
        self.keep = keep or KeepRule()

    def result(self, tc: TestCaseInfo, result: ExecResult, worker: int) -> Outcome:
        """Take in what running ``tc`` on ``worker`` gave."""
        self.stats.add_timings(result.timings)
        reached = self.feedback.merge(tc.level, result)
        gain = reached.features
        self.stats.coverage = self.feedback.total()
        obs = self.judge.judged(result.observation, tc.level)
        self.counts.mutants(tc.mutators, obs.symptom.value)  # what each kind of mutation yields
        parent = self.corpus.by_id.get(tc.parent or "")
        seconds = result.timings.get("worker_busy", 0.0)
        if parent is not None:
            record_cost(parent, seconds)
            if tc.task == "exec":  # a seed's (or a resumed entry's) own run: what it covers and triggers
                parent.triggered = tuple(result.passes_triggered)
                self.feeder.scheduler(parent).learn(parent, result.features)
        entry = self.keep.apply(tc, gain, obs, result.unchanged, parent, worker)
        candidate = self.filing.candidate(obs, tc, worker, result.unchanged) if obs.symptom.is_bug else None
        self.allocator.ran(tc, seconds, gain, reached.first_triggers,
                           repeat=candidate is not None and candidate.repeat)
        if obs.symptom is Symptom.INVALID:
            return Outcome.filtered(Turned(obs, tc, worker, result.observation))
        if candidate is not None:
            return Outcome.bug(candidate)
        if entry is None:
            return Outcome.not_interesting()
        return Outcome.kept(Keep(entry, gain, tuple(tc.mutators), seconds, tuple(result.features),
                                 tuple(result.passes_triggered)))
