"""Slow and out-of-memory test cases, re-run once at the full limits, off the hot path.

Every sample of a slow or out-of-memory test case (:mod:`seedzer.campaign.filtered`) waits for one
re-run. The filing starts one as a gate background job when no candidate waits and the gate is
within its share, so its seconds count as the gate's (``--resume`` re-runs what was left). The re-run
is its kind's ``rerun_call``: the case alone, in a fresh process, within the sum of the campaign's
stage limits (none of them relative to a parent's cost) and under the workers' address-space limit.
Outcomes (``filter_samples.rerun``):

- ``hangs``: a slow case outlived the full limits too; its hang is filed as a candidate and the gate
  judges it as any hang (a sample kept before a ``--resume`` is listed, not filed: its test case is
  gone with the process that ran it);
- ``out of memory again``: the allocation fails alone in a fresh process under the same limit, a
  runaway allocation for a maintainer to look at (``seedzer status --invalid`` lists it; the gates
  judge no failed allocation, the kernels count them invalid);
- ``passes``: it finished at the full limits (it stays slow or invalid), or ``other: ...``.
"""

from __future__ import annotations

import dataclasses
from collections import deque
from dataclasses import dataclass

from seedzer.campaign.filtered import SLOW, FilterLedger, Sample
from seedzer.errors import SeedzerError
from seedzer.execute.background import JobResult
from seedzer.finding.gate import GateSettings
from seedzer.finding.kind import GateCall, Observed
from seedzer.finding.meta import FindingMeta
from seedzer.finding.registry import kind
from seedzer.kernel.common import OUT_OF_MEMORY, Observation, Symptom

RERUN_KEY = "rerun:"
"""How a re-run's background job key starts (the gate's jobs are keyed by signature)."""


@dataclass(frozen=True)
class RerunOutcome:
    """How one re-run ended; ``hang`` is the hang to file as a candidate (None: nothing to file)."""

    sample: Sample
    outcome: str
    detail: str
    hang: Observed | None = None


def outcome_of(reason: str, seen: Observation) -> str:
    """The outcome of a re-run of a test case filtered for ``reason`` that showed ``seen``."""
    if seen.symptom is Symptom.OK:
        return "passes"
    if reason == SLOW and seen.symptom is Symptom.HANG:
        return "hangs"
    if reason == OUT_OF_MEMORY and seen.symptom is Symptom.INVALID and seen.message.startswith(OUT_OF_MEMORY):
        return "out of memory again"
    return "other: " + seen.headline()[:160]


class Reruns:
    """The queue of samples waiting for their re-run (see the module docstring)."""

    def __init__(self, ledger: FilterLedger, settings: GateSettings, max_memory: int) -> None:
        self.ledger = ledger
        self.timeout = sum(float(v) for v in settings.timeouts.values())
        self.max_memory = max_memory
        self.waiting: deque[Sample] = deque(ledger.waiting())
        self.observed: dict[int, Observed] = {}
        """The test cases of this session's samples, by sample id (what a hang is filed with)."""
        self.running: dict[str, Sample] = {}

    def add(self, sample: Sample, observed: Observed) -> None:
        """Queue the re-run of a sample kept now."""
        self.waiting.append(sample)
        self.observed[sample.id] = observed

    def next_call(self) -> tuple[str, GateCall] | None:
        """The next re-run's job key and call (None: none waits; a sample whose folder is gone is
        recorded as such and skipped)."""
        while self.waiting:
            sample = self.waiting.popleft()
            try:
                meta = FindingMeta.load(sample.folder)
                call = kind(sample.level).rerun_call(sample.folder, meta, self.timeout, self.max_memory)
            except SeedzerError as exc:
                self.ledger.db.set_filter_rerun(sample.id, "error", str(exc)[:300])
                continue
            key = f"{RERUN_KEY}{sample.id}"
            self.running[key] = sample
            return key, call
        return None

    def apply(self, job: JobResult) -> RerunOutcome | None:
        """Record a finished re-run (None: the job is not one of these re-runs)."""
        sample = self.running.pop(job.key, None)
        if sample is None:
            return None
        if job.error is not None or not isinstance(job.value, Observation):
            outcome, detail, hang = "error", (job.error or "no observation").splitlines()[0][:300], None
        else:
            seen: Observation = job.value
            outcome, detail = outcome_of(sample.reason, seen), f"{seen.headline()[:240]} ({job.seconds:.1f} s)"
            observed = self.observed.pop(sample.id, None)
            hang = dataclasses.replace(observed, observation=seen) if outcome == "hangs" and observed else None
        self.ledger.db.set_filter_rerun(sample.id, outcome, detail)
        return RerunOutcome(sample, outcome, detail, hang)
