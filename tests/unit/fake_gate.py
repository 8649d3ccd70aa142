"""Filing-gate jobs for campaign tests: judges each job at once (not a test module)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from seedzer.campaign.model_fills import MODEL_KEY
from seedzer.campaign.reruns import RERUN_KEY
from seedzer.execute.background import JobResult
from seedzer.finding.tir.check import observe_folder
from seedzer.finding.tir.gate import GateJob, run_gate
from seedzer.finding.verdict import Verdict
from seedzer.kernel.common import Observation


class FakeGate:
    """Gate jobs (:class:`~seedzer.campaign.filing.GateJobs`) judging each low-level job with ``decide``
    at once, charging ``cpu`` seconds per job; ``hold`` keeps the verdicts until released. A re-run at
    the full limits of a filtered test case (:mod:`seedzer.campaign.reruns`) shows ``rerun`` (default:
    it passes); a model job (:mod:`seedzer.campaign.model_fills`) runs its call here."""

    def __init__(self, decide: Callable[[GateJob], Verdict], hold: bool = False, cpu: float = 0.01,
                 rerun: Observation | None = None) -> None:
        self.decide, self.hold, self.cpu = decide, hold, cpu
        self.rerun = rerun or Observation.ok()
        self.submitted: list[str] = []
        self.ready: list[JobResult] = []

    def submit(self, key: str, fn: Callable[..., Any], *args: Any) -> None:
        self.submitted.append(key)
        if key.startswith(RERUN_KEY):
            assert fn is observe_folder and len(args) == 3
            self.ready.append(JobResult(key, self.rerun, None, self.cpu, self.cpu))
            return
        if key.startswith(MODEL_KEY):
            self.ready.append(JobResult(key, fn(*args), None, self.cpu, self.cpu))
            return
        assert fn is run_gate and isinstance(args[0], GateJob) and args[0].signature == key
        self.ready.append(JobResult(key, self.decide(args[0]), None, self.cpu, self.cpu))

    def poll(self) -> list[JobResult]:
        if self.hold:
            return []
        out, self.ready = self.ready, []
        return out

    def pending(self) -> int:
        return len(self.ready)

    def drain(self, budget: float) -> list[JobResult]:
        return self.poll()

    def close(self) -> None:
        pass
