"""The enabled oracles' verdict on one execution, as the campaign counts it."""

from __future__ import annotations

from collections.abc import Sequence

from seedzer.campaign.counts import ExecCounts
from seedzer.campaign.stats import CampaignStats
from seedzer.kernel.common import Observation, Symptom
from seedzer.oracles import judge
from seedzer.oracles.registry import Oracle


class Judge:
    """Judges executions with the campaign's oracles (:func:`seedzer.oracles.judge`) and counts each."""

    def __init__(self, oracles: Sequence[Oracle], counts: ExecCounts, stats: CampaignStats) -> None:
        self.oracles = list(oracles)
        self.counts = counts
        self.stats = stats

    def judged(self, observation: Observation, level: str) -> Observation:
        """The verdict on one execution of ``level`` that showed ``observation``, counted by its
        symptom, stage and level (an invalid one among the invalid executions too)."""
        obs = judge(self.oracles, observation)
        self.counts.execution(obs.symptom.value, obs.stage.value if obs.stage else "", level)
        if obs.symptom is Symptom.INVALID:
            self.stats.invalid += 1
        return obs
