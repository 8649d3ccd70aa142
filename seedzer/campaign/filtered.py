"""What the filters before the gate turned away, counted and sampled, so nothing real is lost unseen.

Every test case that becomes ``invalid`` (out of bounds, each precondition pattern, outputs that
differ only where the reference is NaN/Inf, a nondeterministic build, out of memory, a disabled
oracle, a model onnxruntime refuses, a worker killed from outside...) or ``slow`` (stopped at its
limit relative to its parent's cost) is counted by level, reason
(:func:`seedzer.campaign.invalid.invalid_class`) and the pass it was turned away at, in campaign.db's
``filter_summary``. The first :data:`SAMPLES` test cases of each
(level, reason, pass) are kept as *samples*: ``filtered/<id>/`` holds its ``meta.json`` (the
observation, ``filter_reason`` among its extras) and the case files its level's finding kind writes,
without the reproducer (``seedzer replay CAMPAIGN/filtered/<id>`` writes one first, then runs it).
A failure an oracle turned invalid (a pass stating a precondition) is kept as the worker observed
it, its invalid verdict in ``filtered_as``: its reproducer, which applies no oracle, shows whether
that failure still happens.

Slow and out-of-memory test cases are all kept (up to :data:`RERUN_SAMPLES` per reason and pass) and
re-run once at the full limits (:mod:`seedzer.campaign.reruns`); ``filter_samples.rerun`` says how
that ended. ``seedzer status --invalid`` lists the reasons with their counts and samples.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from seedzer.campaign.invalid import invalid_class
from seedzer.errors import SeedzerError
from seedzer.finding.kind import FileSettings, Observed
from seedzer.finding.layout import REPRO_FILE
from seedzer.finding.meta import FindingMeta
from seedzer.finding.registry import kind
from seedzer.finding.store import dump
from seedzer.kernel.common import Observation, Stage, Symptom
from seedzer.store.db import CampaignDB

FILTERED_DIR = "filtered"
"""The campaign's folder of samples of filtered test cases."""
SAMPLES = 3
"""Samples kept per (level, reason, pass)."""
RERUN_SAMPLES = 20
"""Slow and out-of-memory test cases kept (each re-run at the full limits) per (level, reason, pass)."""
SAMPLE_BYTES = 256 * 1024
"""Largest sample kept (its files together); a larger one is counted, not kept."""
SLOW = "slow"
"""The reason of a test case stopped at its relative limit."""
OUT_OF_MEMORY = "out of memory"
"""The reason class of an allocation that failed (and of a worker the kernel's OOM killer took)."""
KILLED_FROM_OUTSIDE = "killed from outside by SIGKILL"
"""The reason class of a test case whose worker was SIGKILLed, with no OOM kill counted for it (an
operator, a chaos test): never the test case's fault, never re-run."""
RERUN_REASONS = frozenset({SLOW, OUT_OF_MEMORY})
"""The reasons whose test cases are re-run once at the full limits."""
WAITING = "waiting"
"""``filter_samples.rerun`` of a sample whose re-run has not run yet."""


@dataclass(frozen=True)
class Sample:
    """One kept sample: its id and folder, what turned it away, and how its re-run ended (``""``: none
    is due, ``waiting``, or the outcome)."""

    id: int
    level: str
    reason: str
    pass_name: str
    folder: Path
    rerun: str = ""
    detail: str = ""


@dataclass
class _SampleFiles:
    """A sample folder's contents (a :class:`~seedzer.finding.kind.Finding` for the house's ``dump``)."""

    meta: FindingMeta
    content: dict[str, str | bytes]

    def files(self) -> dict[str, str | bytes]:
        """The kind's files, the reproducer left out."""
        return self.content


def where_of(observation: Observation) -> str:
    """The pass (else the stage) a test case was turned away at."""
    return observation.pass_name or (observation.stage.value if observation.stage else "-")


def slow_observation(stage: Stage, pass_name: str | None, message: str) -> Observation:
    """The observation a slow test case is sampled with: a hang at the stage and pass it was stopped
    at, its message (the worker's) saying it outlived only its relative limit."""
    return Observation(Symptom.HANG, stage, pass_name, f"{SLOW}: {message}")


class FilterLedger:
    """Counts filtered test cases and keeps their samples (see the module docstring)."""

    def __init__(self, campaign: Path, db: CampaignDB, settings: FileSettings) -> None:
        self.root = Path(campaign) / FILTERED_DIR
        self.db = db
        self.settings = settings
        self.counts: Counter[tuple[str, str, str]] = Counter()
        """Filtered test cases by (level, reason, pass) since the last flush."""
        self.kept: Counter[tuple[str, str, str]] = Counter(
            (level, reason, where) for _, level, reason, where, *_ in db.filter_samples())

    def reason(self, observation: Observation) -> str:
        """Why ``observation`` was turned away (``slow`` for a test case stopped at its relative limit)."""
        if observation.symptom is Symptom.HANG and observation.message.startswith(f"{SLOW}: "):
            return SLOW
        return invalid_class(observation.message)

    def record(self, level: str, obs: Observation, observed: Observed | None) -> Sample | None:
        """Count one filtered test case of ``level`` judged ``obs`` and keep it (``observed``: its test
        case with what the worker observed, None when unknown) as a sample while its (level, reason,
        pass) has fewer than its share; the sample, or None (not kept: enough kept, no test case, too
        large, or its kind cannot file it)."""
        reason, where = self.reason(obs), where_of(obs)
        key = (level, reason, where)
        self.counts[key] += 1
        rerun = reason in RERUN_REASONS
        if observed is None or self.kept[key] >= (RERUN_SAMPLES if rerun else SAMPLES):
            return None
        try:
            filed = kind(level).file(observed, self.settings)
            content = {name: data for name, data in filed.finding.files().items() if name != REPRO_FILE}
            if sum(len(data) for data in content.values()) > SAMPLE_BYTES:
                return None
            meta = filed.meta
            meta.extra = {**meta.extra, "filter_reason": reason, "passes": observed.passes}
            if observed.observation != obs:  # an oracle's verdict on what the worker observed
                meta.extra["filtered_as"] = obs.message
            name = f"{int(time.time() * 1000):x}-{observed.provenance.testcase or 0}"
            folder = dump(self.root / name, _SampleFiles(meta, content))
        except (SeedzerError, OSError):  # a sample that cannot be written (its model gone, a full disk): counted
            return None
        self.kept[key] += 1
        sample = self.db.add_filter_sample(level, reason, where, folder.name, observed.provenance.testcase,
                                           WAITING if rerun else "")
        return Sample(sample, level, reason, where, folder, WAITING if rerun else "")

    def flush(self) -> None:
        """Add the counts since the last flush to campaign.db."""
        self.db.add_filter_counts(dict(self.counts))
        self.counts.clear()

    def waiting(self) -> list[Sample]:
        """The samples whose re-run has not run yet (a resumed campaign's too)."""
        return [Sample(i, level, reason, where, self.root / folder, rerun, detail)
                for i, level, reason, where, folder, rerun, detail in self.db.filter_samples() if rerun == WAITING]
