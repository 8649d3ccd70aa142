"""The campaign process: owns the store, the corpus and coverage totals, feeds workers, never runs TVM.

:class:`Campaign` wires its collaborators, each owning its part of the state behind a small typed
interface, and runs the loop: take in the workers' events, feed the idle workers, act on what happened
to each test case, snapshot.

* :class:`~seedzer.campaign.loading.Loading`: the models, their seeds and load failures (killed loads too);
* :class:`~seedzer.campaign.pending.PendingSeeds`: the line of entries to run as they are;
* :class:`~seedzer.campaign.feeding.Feeder`: the next test case of a worker (schedulers, random stream);
* :class:`~seedzer.campaign.feedback.Feedback`: coverage totals and pass triggers;
* :class:`~seedzer.campaign.counts.ExecCounts` and :class:`~seedzer.campaign.judging.Judge`: executions
  judged by the oracles and counted;
* :class:`~seedzer.campaign.intake.Intake` (a result) and :class:`~seedzer.campaign.deaths.Deaths` (a
  worker's death): what happened to a test case, an :class:`~seedzer.campaign.outcome.Outcome`;
* :class:`~seedzer.campaign.filing.Filing`: candidates, the gate, verdicts, filtered samples;
* :class:`~seedzer.campaign.epochs.Epochs`: the generation epochs (``--epochs``).

Its parts from outside come in through small interfaces so that the keep/feedback/judging logic is
tested with cheap stand-ins: the executor (workers, :class:`~seedzer.execute.executor.Executor`), the
seed loader (ONNX models to initial seeds) and the filing gate's background jobs (:mod:`seedzer.campaign.filing`).
"""

from __future__ import annotations

import random
import signal
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from types import FrameType

from rich.console import Group

from seedzer import __version__
from seedzer.campaign.allocator import Allocator
from seedzer.campaign.counts import ExecCounts
from seedzer.campaign.deaths import Deaths
from seedzer.campaign.directory import discard_new, prepare_dir
from seedzer.campaign.epochs import Epochs, epoch_models, resumed_epochs
from seedzer.campaign.feedback import Feedback
from seedzer.campaign.feeding import Feeder
from seedzer.campaign.filing import Filing, FilingSettings, GateJobs
from seedzer.campaign.intake import Intake
from seedzer.campaign.judging import Judge
from seedzer.campaign.ledger_roots import LEDGER_META, CampaignLedger
from seedzer.campaign.loading import Loading, SeedLoader
from seedzer.campaign.monitor import Monitor, QuietMonitor
from seedzer.campaign.outcome import Keep, Outcome
from seedzer.campaign.pending import PendingSeeds
from seedzer.campaign.quarantine import Quarantine
from seedzer.campaign.scheduler import record_cost
from seedzer.campaign.seeds import list_pool
from seedzer.campaign.stats import CampaignStats
from seedzer.campaign.summary import campaign_summary
from seedzer.campaign.throughput import parse_timings, stage_totals
from seedzer.campaign.triggers import snapshot_column
from seedzer.campaign.worker_limits import exec_settings, stage_limits
from seedzer.config import Config, to_dict
from seedzer.coverage import make_backend
from seedzer.coverage.native import prepare_collector
from seedzer.execute.executor import Executor
from seedzer.execute.records import WorkerEvent
from seedzer.execute.settings import WorkerSettings
from seedzer.execute.worker_pool import WorkerPool
from seedzer.finding.repro import TVM_VERSION
from seedzer.finding.store import FindingStore
from seedzer.kernel.common import Stage, Symptom
from seedzer.ledger.records import CAMPAIGN
from seedzer.level_table import level_names
from seedzer.levels.registry import level
from seedzer.oracles import make_oracles
from seedzer.provenance import provenance
from seedzer.store.api_rows import API_META
from seedzer.store.corpus import CORPUS_DIR, Corpus, CorpusEntry
from seedzer.store.db import CampaignDB
from seedzer.store.lock import DirLock

ExecutorFactory = Callable[[int, WorkerSettings, dict[Stage, float]], Executor]
"""Builds the campaign's executor: (jobs, worker settings, stage time limits) -> executor."""


class Campaign:
    """One fuzzing campaign in one directory (resumable; one writer at a time).

    Its seeds are the models of ``pool``, or, with ``imported``, the given corpus entries (e.g.
    another campaign's, :func:`~seedzer.campaign.seeds.imported_entries`; ``pool`` then only names
    where they came from).
    """

    def __init__(self, out: Path, pool: Path, cfg: Config, *, resume: bool = False, monitor: Monitor | None = None,
                 executor: ExecutorFactory = WorkerPool, seed_loader: SeedLoader | None = None,
                 gate: GateJobs | None = None, imported: Sequence[CorpusEntry] | None = None,
                 ledger_source: str = CAMPAIGN) -> None:
        self.out, self.pool, self.cfg, self.resume = Path(out), Path(pool), cfg, resume
        self.monitor = monitor or QuietMonitor()
        self.imported = list(imported) if imported is not None else None
        # fails early, before anything is created; a campaign seeded with imported entries loads no model
        models = list_pool(self.pool) if self.imported is None else []
        self.lock = DirLock(self.out, what="campaign").acquire()
        made: list[Path] = []
        try:
            made = prepare_dir(self.out, resume)
            self.db = CampaignDB(self.out / "campaign.db")
        except BaseException:
            if not resume:  # a full disk: no campaign.db that is none, no empty folders
                discard_new(self.out, made)
            self.lock.release()
            raise
        self.corpus = Corpus(self.out / CORPUS_DIR, self.db)
        self.quarantine = Quarantine(self.db, self.corpus, self.monitor.message)
        self.ledger = CampaignLedger.of(cfg, self.pool, ledger_source, self.monitor.message)
        self.findings = FindingStore(self.out / "findings", self.db, [(k.pattern, k.note) for k in cfg.known_issues],
                                     self.ledger.known(), self.ledger.upstream())
        self.limits = stage_limits(cfg)
        self.stats = CampaignStats(budget=cfg.fuzz.minutes * 60, jobs=cfg.fuzz.jobs)
        self.filing = Filing(self.findings, self.corpus, FilingSettings.of(cfg), self.stats, self.monitor, gate,
                             log_dir=self.out / "logs")
        self.pending = PendingSeeds()
        self.loading = Loading(cfg, self.pool, models, self.db, self.corpus, self.pending, self.filing, self.stats,
                               self.monitor, seed_loader)
        self.allocator = Allocator(cfg, {name: level(name).mutations for name in level_names()}, self.corpus,
                                   self._ledger_roots, self.monitor.message)
        self.filing.root_listeners.append(self.allocator.filed)
        self.feeder = Feeder(cfg, self.corpus, self.pending, self.limits, random.Random(cfg.fuzz.seed),
                             self.allocator)
        self.feedback = Feedback(make_backend(cfg.fuzz.coverage))
        self.counts = ExecCounts(self.stats)
        self.judge = Judge(make_oracles(cfg.oracles.enabled), self.counts, self.stats)
        self.intake = Intake(self.feedback, self.judge, self.counts, self.corpus, self.feeder, self.filing, self.stats,
                             self.allocator)
        self.deaths = Deaths(self.db, self.corpus, self.stats, self.counts, self.judge, self.filing, self.monitor,
                             self.quarantine, self.pending)
        self.executor_factory = executor
        self.executor: Executor | None = None
        """The workers, once fuzzing started."""
        self.epochs: Epochs | None = None
        """The generation epochs (``--epochs``), made once the pool is loaded."""
        self._stop = False

    # --- set-up -------------------------------------------------------------------------
    def _ledger_roots(self) -> set[str]:
        """The roots the ledger held from other campaigns (none when it is off or unreadable)."""
        return set(self.ledger.seen(self.out) or {})

    def _restore(self) -> None:
        self.stats.elapsed = float(self.db.get_meta("elapsed", 0.0))
        self.stats.execs = self.db.total_execs()
        summary = self.db.exec_summary().items()
        self.stats.invalid = sum(n for (s, _), n in summary if s == Symptom.INVALID.value)
        self.stats.slow = sum(n for (s, _), n in summary if s == "slow")
        snapshots = self.db.snapshots()  # stage seconds stay cumulative across resumes
        self.stats.timings = parse_timings(snapshots[-1].get("timings")) if snapshots else {}
        self.feedback.restore(self.db)
        self._restore_epochs()
        loaded = self.db.loaded_models()  # the epochs' models taken in so far: resumed entries may name them
        self.loading.add_models([m for m in epoch_models(self.out) if m.name in loaded])
        skipped: dict[str, str] = {}  # entries read back that cannot be fuzzed (an edited file)
        self.corpus.restore(self.quarantine.entry_check(self.loading.models) if self.imported is None else None,
                            skipped)
        self.quarantine.restored(skipped)
        self.stats.corpus, self.stats.coverage = len(self.corpus), self.feedback.total()  # shown from the start
        self.filing.restore()
        self.allocator.restore(self.db)
        self.db.add_event("resume", {"elapsed": self.stats.elapsed, "corpus": len(self.corpus)})

    def _restore_epochs(self) -> None:
        """A resumed campaign keeps the epochs it was started with, saying so when asked for others."""
        kept, said = resumed_epochs(self.db.get_meta("config"), self.cfg.epochs)
        if said is not None:
            self.monitor.message(said)
        self.cfg.epochs = kept

    def _install_signals(self) -> None:
        def stop(signum: int, _frame: FrameType | None) -> None:
            self._stop = True

        signal.signal(signal.SIGINT, stop)
        signal.signal(signal.SIGTERM, stop)

    def _worker_settings(self) -> WorkerSettings:
        """What every worker needs; it can run every registered level (a resumed or imported corpus may
        hold entries of a level the schedule no longer draws: they still run once, as seeds)."""
        # The coverage collector first: a backend that cannot work here fails before seeds load.
        return WorkerSettings(
            exec=exec_settings(self.cfg.oracles, self.cfg.fuzz.coverage, self.cfg.limits.max_testcase_memory),
            collector=prepare_collector(self.cfg.fuzz.coverage, self.out, self.db.features(),
                                        self.cfg.fuzz.block_cache, self.cfg.fuzz.block_granularity),
            bounds=self.cfg.bounds, levels=self.cfg.levels.settings(), log_dir=str(self.out / "logs"),
            fuzzers={name: level(name).fuzzer for name in level_names()})

    def _record_apis(self) -> None:
        """Record the TVM API each level on names (:meth:`seedzer.levels.level.Level.api`), once: a resumed
        campaign reports against the API it started with."""
        for name in self.cfg.levels.weights():
            if self.db.get_meta(API_META + name) is None:
                api = level(name).api()
                if api is not None:
                    self.db.set_level_api(api)

    def run(self) -> CampaignStats:
        """Load (or restore) seeds and fuzz until the budget is spent or a stop is requested."""
        try:
            return self._run()
        finally:
            self.lock.release()

    def _run(self) -> CampaignStats:
        if self.resume:
            self._restore()
        else:
            self.db.set_meta("config", to_dict(self.cfg))
            self.db.set_meta("pool", str(self.pool.resolve()))
            self.db.set_meta("versions", {"seedzer": __version__, "tvm": TVM_VERSION, **provenance()})
            self.db.set_meta("created", time.time())
        if self.ledger.path is not None:
            self.db.set_meta(LEDGER_META, str(self.ledger.path.resolve()))
        self._record_apis()
        self._install_signals()
        settings = self._worker_settings()
        self.stats.phase = "loading"
        if self.imported is not None:
            self.loading.import_entries(self.imported)
        else:
            self.loading.load_pool(self.stopping)
        self.pending.extend(e for e in self.corpus.entries if not e.executed)
        self.quarantine.check_left()
        if self.cfg.epochs.count > 1 and self.imported is None:
            self.epochs = Epochs(self.out, self.cfg, self.db, self.loading, self.corpus, self.feedback.total,
                                 self.monitor, self.stats.budget, self.stats.elapsed)
        self.stats.phase = "fuzzing"
        executor = self.executor_factory(self.cfg.fuzz.jobs, settings, self.limits)
        self.executor = executor
        self.deaths.start()
        self.db.add_event("workers", {"pids": executor.pids()})
        start = time.monotonic()
        base_elapsed = self.stats.elapsed
        next_snap = 0.0
        try:
            while not self._stop and self.stats.elapsed < self.stats.budget:
                events = executor.poll(0.05)  # waiting for workers: not the fuzzer's own work
                busy = time.perf_counter()
                outcomes = [self.take(ev) for ev in events]
                # A worker with room gets its next test case (it still runs the one sent before, see
                # QUEUED_TASKS) before the campaign writes what happened to the test cases to disk.
                for w in executor.idle():
                    self.feeder.feed(w)
                for outcome in outcomes:
                    self.act(outcome)
                self.filing.poll()
                if self.epochs is not None:
                    self.epochs.poll(self.stats.elapsed)
                now = time.monotonic()
                self.stats.session_seconds = now - start
                self.stats.elapsed = base_elapsed + self.stats.session_seconds
                self.stats.restarts = executor.restarts
                if now >= next_snap:
                    self.snapshot()
                    next_snap = now + self.cfg.fuzz.snapshot_period
                self.monitor.update(self.stats)
                self.stats.add_timings({"bookkeeping": time.perf_counter() - busy})
        finally:
            executor.close()
            self.stats.phase = "finishing"
            self.snapshot()
            self.filing.drain(60.0)
            self.snapshot()
            self.monitor.update(self.stats)
            if self.epochs is not None:
                self.epochs.close(self.stats.elapsed)
            self.db.close()
            self.ledger.record(self.out)
            self.monitor.close()
        self.stats.phase = "done"
        return self.stats

    def stop(self) -> None:
        """Ask the loop to finish after the current poll."""
        self._stop = True

    def stopping(self) -> bool:
        """True once a stop was requested."""
        return self._stop

    def summary(self) -> Group:
        """The campaign's summary as recorded so far, its bugs marked with what its ledger knew of them
        from other campaigns (``(no ledger)`` only when the ledger is off or cannot be read)."""
        return campaign_summary(self.out, seen=self.ledger.seen(self.out))

    # --- the loop -------------------------------------------------------------------------
    def take(self, ev: WorkerEvent) -> Outcome:
        """Take in one worker event (judged, counted, coverage merged, parent updated): what happened
        to its test case, to be acted on once the idle workers are fed (:meth:`act`)."""
        if ev.what == "tc":  # an announcement: the test case runs
            return Outcome.nothing()
        if ev.what == "death":
            assert ev.death is not None
            return self.deaths.take(ev, ev.death, self.executor.pids() if self.executor is not None else [])
        assert ev.tc is not None and ev.result is not None
        return self.intake.result(ev.tc, ev.result, ev.worker)

    def act(self, outcome: Outcome) -> None:
        """Write what happened to one test case: the corpus entry of a kept one, the finding of a new
        candidate (or one more occurrence of a repeat), the sample of one turned away."""
        if outcome.keep is not None:
            self._keep(outcome.keep)
        if outcome.candidate is not None:
            self.filing.file(outcome.candidate)
        if outcome.turned is not None:
            turned = outcome.turned
            self.filing.filtered(turned.observation, turned.tc, turned.worker, turned.raw)

    def _keep(self, keep: Keep) -> None:
        entry = keep.entry
        if self.corpus.add(entry, keep.gain, list(keep.mutations)):
            record_cost(entry, keep.seconds)
            entry.triggered = keep.triggered
            self.feeder.scheduler(entry).learn(entry, keep.features)
            self.stats.corpus = len(self.corpus)

    def snapshot(self) -> None:
        """Write one snapshot row and flush batched counters and fresh coverage features."""
        self.counts.flush(self.db)
        self.filing.ledger.flush()
        self.feedback.flush(self.db, time.time())
        self.db.add_snapshot({
            "time": self.stats.elapsed, "execs": self.stats.execs, "coverage": self.feedback.total(),
            "coverage_backend": self.cfg.fuzz.coverage, "corpus_size": len(self.corpus),
            "findings": sum(self.stats.findings.values()), "unique_findings": sum(self.stats.unique.values()),
            "invalid": self.stats.invalid, "wall": time.time(),
            "coverage_detail": self.feedback.detail(), "timings": stage_totals(self.stats.timings),
            "triggers": snapshot_column(self.feedback.trigger_totals()),
        })
        self.db.set_meta("elapsed", self.stats.elapsed)
        self.allocator.save(self.db, self.stats.elapsed)
