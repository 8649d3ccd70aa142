"""A worker's death, as the campaign takes it in (moved out of :mod:`seedzer.campaign.loop`)."""

from __future__ import annotations

from collections import deque
from typing import Protocol

from seedzer.campaign.filing import Filing
from seedzer.campaign.filtered import slow_observation
from seedzer.campaign.monitor import Monitor
from seedzer.campaign.quarantine import Quarantine
from seedzer.campaign.scheduler import record_cost
from seedzer.campaign.stats import CampaignStats
from seedzer.execute.executor import Executor
from seedzer.execute.records import Death, WorkerEvent
from seedzer.kernel.common import Observation, Symptom
from seedzer.store.corpus import Corpus, CorpusEntry
from seedzer.store.db import CampaignDB


class DeathHost(Protocol):
    """What taking in a death needs of the campaign (:class:`seedzer.campaign.loop.Campaign`)."""

    corpus: Corpus
    db: CampaignDB
    stats: CampaignStats
    filing: Filing
    monitor: Monitor
    quarantine: Quarantine
    pending: deque[CorpusEntry]
    _executor: Executor | None

    def _count(self, symptom: str, stage: str, level: str) -> None:
        """Count one execution."""
        ...

    def _judged(self, observation: Observation, level: str) -> Observation:
        """The oracles' verdict on one execution."""
        ...


def on_death(campaign: DeathHost, ev: WorkerEvent, death: Death) -> None:
    """Take in the death of a worker: its cost, its event, a slow or killed test case filtered, a
    quarantined seed, its dropped seeds back in line, and a death that is a bug filed."""
    tc = ev.tc
    parent = campaign.corpus.by_id.get(tc.parent or "") if tc is not None else None
    if parent is not None and death.seconds is not None:  # what choosing it cost: the time it ran
        record_cost(parent, death.seconds)
    detail = {"worker": ev.worker, "kind": death.kind, "stage": death.stage.value, "pass": death.pass_name,
              "message": death.message, "signal": death.signal, "exitcode": death.exitcode,
              "rss_mb": death.rss_mb, "available_mb": death.available_mb, "during_setup": death.during_setup,
              "testcase": tc.tc_id if tc else None}
    campaign.db.add_event("worker_killed" if death.kind == "killed" else "worker_restart", detail)
    if death.kind == "slow" and tc is not None:  # an execution (counted, shown in status and the report)
        campaign.stats.slow += 1
        campaign._count("slow", death.stage.value, tc.level)
        campaign.filing.filtered(slow_observation(death.stage, death.pass_name, death.message), tc, ev.worker)
    elif death.kind == "killed":
        if tc is not None and tc.announced:  # the OOM killer's, most likely: re-run alone at the full limits
            campaign.filing.filtered(Observation(Symptom.INVALID, death.stage, death.pass_name,
                                             f"out of memory: its worker was killed by SIGKILL ({death.message})"),
                                 tc, ev.worker)
        memory = (f"; available memory {death.available_mb:.0f} MiB, worker peak {death.rss_mb:.0f} MiB"
                  if death.available_mb is not None and death.rss_mb is not None else "")
        campaign.monitor.message(f"worker {ev.worker} was killed by SIGKILL (the OOM killer or an operator, "
                             f"not a TVM bug{memory}); restarted")
    else:
        where = "while setting up" if death.during_setup else f"during {death.stage.value}"
        campaign.monitor.message(f"worker {ev.worker} {death.message} {where}; restarted")
    campaign.db.add_event("workers", {"pids": campaign._executor.pids() if campaign._executor else []})
    if parent is not None and death.kind == "exit" and not death.during_setup \
            and campaign.quarantine.death(parent, death.message):  # Seedzer cannot run it: no restart loop
        campaign.pending = deque(e for e in campaign.pending if e.seed_id != parent.seed_id)
        campaign.quarantine.check_left()
    for info in ev.dropped:  # a seed waiting to be executed goes back in line; a mutation is just not made
        entry = campaign.corpus.by_id.get(info.parent or "") if info.kind == "exec" else None
        if entry is not None and not entry.executed and entry not in campaign.pending and entry.seed_id \
                not in campaign.quarantine:
            campaign.pending.appendleft(entry)
    obs = death.observation()
    if obs is None or tc is None or not tc.announced:
        return
    judged = campaign._judged(obs, tc.level)
    if judged.symptom.is_bug:
        campaign.filing.candidate(judged, tc, ev.worker, [], death.log_tail)
