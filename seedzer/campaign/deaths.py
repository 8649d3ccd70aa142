"""A worker's death, as the campaign takes it in.

A death is an event (``worker_killed`` for a SIGKILL from outside, ``worker_restart`` otherwise) and
one line; what it did to the test case it ran is an :class:`~seedzer.campaign.outcome.Outcome`:

* a test case stopped at its relative limit is *slow*: counted as an execution and turned away (it
  is re-run at the full limits, :mod:`seedzer.campaign.reruns`);
* one whose worker was SIGKILLed from outside is turned away as *out of memory* only with evidence:
  the kernel's count of OOM kills grew since the campaign last looked (:func:`oom_kills`: the
  worker's cgroup, else the machine's; the OOM killer is the one sender of SIGKILL that counts it).
  Otherwise it was *killed from outside by SIGKILL* (an operator, a chaos test): never the test case's
  fault, never re-run. The worker's own address-space limit never kills it: an allocation past it
  fails (``MemoryError``, ``std::bad_alloc``) and the test case is invalid as out of memory;
* a crash or a hang is judged, and a bug is a candidate (its worker's log tail with it).

A worker that exits by itself on a test case counts towards quarantining its corpus entry
(:mod:`seedzer.campaign.quarantine`); the seeds that waited in its pipe go back in line.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from seedzer.campaign.counts import ExecCounts
from seedzer.campaign.filing import Filing
from seedzer.campaign.filtered import KILLED_FROM_OUTSIDE, slow_observation
from seedzer.campaign.judging import Judge
from seedzer.campaign.monitor import Monitor
from seedzer.campaign.outcome import Outcome, Turned
from seedzer.campaign.pending import PendingSeeds
from seedzer.campaign.quarantine import Quarantine
from seedzer.campaign.scheduler import record_cost
from seedzer.campaign.stats import CampaignStats
from seedzer.execute.memory import oom_kills
from seedzer.execute.records import Death, WorkerEvent
from seedzer.kernel.common import OUT_OF_MEMORY, Observation, Symptom
from seedzer.store.corpus import Corpus
from seedzer.store.db import CampaignDB


class Deaths:
    """Takes in workers' deaths; owns the kernel's OOM-kill count at its last look and the OOM kills not
    yet matched to a SIGKILLed worker (what tells the OOM killer's SIGKILL from anyone else's)."""

    def __init__(self, db: CampaignDB, corpus: Corpus, stats: CampaignStats, counts: ExecCounts, judge: Judge,
                 filing: Filing, monitor: Monitor, quarantine: Quarantine, pending: PendingSeeds,
                 oom_count: Callable[[], int | None] = oom_kills) -> None:
        self.db, self.corpus, self.stats, self.counts, self.judge = db, corpus, stats, counts, judge
        self.filing, self.monitor, self.quarantine, self.pending = filing, monitor, quarantine, pending
        self.oom_count = oom_count
        self.oom_seen = oom_count()
        """The kernel's OOM-kill count when last looked at (None: not readable here)."""
        self.oom_unmatched = 0
        """OOM kills counted since the start that no SIGKILLed worker was matched to yet."""

    def start(self) -> None:
        """Fuzzing starts: OOM kills before now (of a model's load, say) explain no worker's death."""
        self.oom_seen, self.oom_unmatched = self.oom_count(), 0

    def out_of_memory(self) -> bool | None:
        """Whether an OOM kill the kernel counted since the last look, not matched to a worker yet,
        explains one more SIGKILLed worker (None: the count is not readable here)."""
        now = self.oom_count()
        if now is None or self.oom_seen is None:
            self.oom_seen = now if now is not None else self.oom_seen
            return None
        self.oom_unmatched += max(0, now - self.oom_seen)
        self.oom_seen = now
        if self.oom_unmatched <= 0:
            return False
        self.oom_unmatched -= 1
        return True

    def take(self, ev: WorkerEvent, death: Death, pids: Sequence[int | None]) -> Outcome:
        """Take in the death of worker ``ev.worker`` (``pids``: the workers' processes now, the restarted
        one's included): its cost, its event and line, a quarantined seed, its dropped seeds back in
        line; what it did to its test case."""
        tc = ev.tc
        parent = self.corpus.by_id.get(tc.parent or "") if tc is not None else None
        if parent is not None and death.seconds is not None:  # what choosing it cost: the time it ran
            record_cost(parent, death.seconds)
        oom = self.out_of_memory() if death.cause == "killed" else None
        detail = {"worker": ev.worker, "kind": death.cause, "stage": death.stage.value, "pass": death.pass_name,
                  "message": death.message, "signal": death.signal, "exitcode": death.exitcode,
                  "rss_mb": death.rss_mb, "available_mb": death.available_mb, "during_setup": death.during_setup,
                  "testcase": tc.tc_id if tc else None}
        if death.cause == "killed":
            detail["oom_killer"] = oom
        self.db.add_event("worker_killed" if death.cause == "killed" else "worker_restart", detail)
        outcome = Outcome.nothing()
        if death.cause == "slow" and tc is not None:  # an execution (counted, shown in status and the report)
            self.stats.slow += 1
            self.counts.execution("slow", death.stage.value, tc.level)
            outcome = Outcome.filtered(Turned(slow_observation(death.stage, death.pass_name, death.message), tc,
                                              ev.worker))
        elif death.cause == "killed":
            if tc is not None and tc.announced:
                outcome = Outcome.filtered(Turned(killed_observation(death, oom), tc, ev.worker))
            self.monitor.message(f"worker {ev.worker} was killed by SIGKILL {_sender(oom)}{_memory(death)}); "
                                 "restarted")
        else:
            where = "while setting up" if death.during_setup else f"during {death.stage.value}"
            self.monitor.message(f"worker {ev.worker} {death.message} {where}; restarted")
        self.db.add_event("workers", {"pids": list(pids)})
        if parent is not None and death.cause == "exit" and not death.during_setup \
                and self.quarantine.death(parent, death.message):  # Seedzer cannot run it: no restart loop
            self.pending.drop_seed(parent.seed_id)
            self.quarantine.check_left()
        for info in ev.dropped:  # a seed waiting to be executed goes back in line; a mutation is just not made
            entry = self.corpus.by_id.get(info.parent or "") if info.task == "exec" else None
            if entry is not None and not entry.executed and entry not in self.pending \
                    and entry.seed_id not in self.quarantine:
                self.pending.put_back(entry)
        obs = death.observation()
        if obs is None or tc is None or not tc.announced:
            return outcome
        judged = self.judge.judged(obs, tc.level)
        if not judged.symptom.is_bug:
            return Outcome.invalid()
        return Outcome.bug(self.filing.candidate(judged, tc, ev.worker, [], death.log_tail))


def killed_observation(death: Death, oom: bool | None) -> Observation:
    """How a test case whose worker was SIGKILLed from outside is turned away: out of memory when the
    kernel counted an OOM kill for it (``oom``), else killed from outside (see the module docstring)."""
    if oom:
        why = f"{OUT_OF_MEMORY}: its worker was killed by the kernel's OOM killer ({death.message})"
    elif oom is None:
        why = (f"{KILLED_FROM_OUTSIDE}: its worker was killed while running it; the kernel's OOM-kill count is not "
               f"readable here ({death.message})")
    else:
        why = (f"{KILLED_FROM_OUTSIDE}: its worker was killed while running it, and the kernel counted no OOM kill "
               f"({death.message})")
    return Observation(Symptom.INVALID, death.stage, death.pass_name, why)


def _sender(oom: bool | None) -> str:
    if oom:
        return "from the kernel's OOM killer (not a TVM bug"
    if oom is None:
        return "(the OOM killer or an operator, not a TVM bug"
    return "from outside, not for memory (the kernel counted no OOM kill: an operator or another process; not a TVM bug"


def _memory(death: Death) -> str:
    if death.available_mb is None or death.rss_mb is None:
        return ""
    return f"; available memory {death.available_mb:.0f} MiB, worker peak {death.rss_mb:.0f} MiB"
