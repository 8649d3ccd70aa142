"""A campaign's collaborators built for real on a temporary directory, wired as the campaign wires them,
for the tests of each collaborator (not a test module): a real campaign.db, corpus, finding store and
filing with the fake gate; no worker runs (the tests hand the collaborators the events a worker sends)."""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from pathlib import Path

from seedzer.campaign.allocator import Allocator
from seedzer.campaign.counts import ExecCounts
from seedzer.campaign.deaths import Deaths
from seedzer.campaign.feedback import Feedback
from seedzer.campaign.feeding import Feeder
from seedzer.campaign.filing import Filing, FilingSettings
from seedzer.campaign.intake import Intake
from seedzer.campaign.judging import Judge
from seedzer.campaign.pending import PendingSeeds
from seedzer.campaign.quarantine import Quarantine
from seedzer.campaign.stats import CampaignStats
from seedzer.campaign.worker_limits import stage_limits
from seedzer.config import Config
from seedzer.coverage import make_backend
from seedzer.execute.fake_worker import fake_case
from seedzer.execute.records import ExecResult, TestCaseInfo
from seedzer.finding.store import FindingStore
from seedzer.kernel.common import Observation
from seedzer.oracles import make_oracles
from seedzer.store.corpus import Corpus, CorpusEntry
from seedzer.store.db import CampaignDB
from tests.unit.campaign.test_loop_campaigns import by_symptom, config
from tests.unit.fake_gate import FakeGate


@dataclass
class Said:
    """A monitor that keeps the lines it is told."""

    lines: list[str] = field(default_factory=list)

    def update(self, stats: CampaignStats) -> None:
        """Nothing to show."""

    def message(self, text: str) -> None:
        self.lines.append(text)

    def close(self) -> None:
        """Nothing to stop."""


class Parts:
    """The collaborators of one campaign in ``out`` (see the module docstring); ``oom``: what the kernel's
    OOM-kill count reads (a list so a test can change it; None: not readable)."""

    def __init__(self, out: Path, cfg: Config | None = None, oom: list[int | None] | None = None) -> None:
        self.out = out
        out.mkdir(parents=True, exist_ok=True)
        self.cfg = cfg or config()
        self.db = CampaignDB(out / "campaign.db")
        self.corpus = Corpus(out / "corpus", self.db)
        self.stats = CampaignStats()
        self.said = Said()
        self.gate = FakeGate(by_symptom)
        self.filing = Filing(FindingStore(out / "findings", self.db), self.corpus, FilingSettings.of(self.cfg),
                             self.stats, self.said, self.gate, log_dir=out / "logs")
        self.pending = PendingSeeds()
        self.allocator = Allocator(self.cfg, {"tir": ("FakeAppend",)}, self.corpus, set, self.said.message)
        self.filing.root_listeners.append(self.allocator.filed)
        self.feeder = Feeder(self.cfg, self.corpus, self.pending, stage_limits(self.cfg), random.Random(1),
                             self.allocator)
        self.feedback = Feedback(make_backend("passes"))
        self.counts = ExecCounts(self.stats)
        self.judge = Judge(make_oracles(self.cfg.oracles.enabled), self.counts, self.stats)
        self.intake = Intake(self.feedback, self.judge, self.counts, self.corpus, self.feeder, self.filing, self.stats,
                             self.allocator)
        self.quarantine = Quarantine(self.db, self.corpus, self.said.message)
        self.oom = oom if oom is not None else [0]
        self.deaths = Deaths(self.db, self.corpus, self.stats, self.counts, self.judge, self.filing, self.said,
                             self.quarantine, self.pending, oom_count=lambda: self.oom[0])

    def seed(self, script: str, seed_id: str = "s1") -> CorpusEntry:
        """A seed in the corpus (and in line), as loading leaves it."""
        entry = CorpusEntry(seed_id, script, "[]", "m.onnx", level="tir")
        self.corpus.add(entry, 0, ["initial"])
        self.pending.append(entry)
        return entry


def case_info(tc_id: int, parent: str, script: str, task: str = "fuzz", mutators: tuple[str, ...] = ("FakeAppend",),
              announced: bool = True) -> TestCaseInfo:
    """What the campaign knows of a test case a worker announced (its kernel case included)."""
    return TestCaseInfo(tc_id, task, parent, "tir", script, "[]", list(mutators), announced,
                        fake_case("tir", script, "[]") if announced else None)


def result(observation: Observation, lines: list[str], triggered: tuple[str, ...] = (),
           busy: float = 0.5) -> ExecResult:
    """A worker's result whose coverage features are ``lines`` (as the fake worker reports them)."""
    return ExecResult(observation, [f"line:{ln}" for ln in lines], [], {"worker_busy": busy},
                      passes_ran=["FakePass", *triggered], passes_triggered=list(triggered))
