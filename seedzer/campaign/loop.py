"""The campaign process: owns the store, the corpus and coverage totals, feeds workers, never runs TVM.

Its parts come in through small interfaces so that the keep/feedback/judging logic is tested with
cheap stand-ins: the executor (workers, :class:`~seedzer.execute.executor.Executor`), the seed loader
(ONNX models to initial seeds) and the filing gate's runner (:mod:`seedzer.campaign.filing`).
"""

from __future__ import annotations

import random
import signal
import time
from collections import Counter, deque
from collections.abc import Callable, Sequence
from pathlib import Path
from types import FrameType

from seedzer import __version__
from seedzer.campaign.deaths import on_death
from seedzer.campaign.directory import discard_new, prepare_dir
from seedzer.campaign.epochs import Epochs, epoch_models
from seedzer.campaign.filing import Filing, FilingSettings, GateRunner
from seedzer.campaign.keep import KeepRule
from seedzer.campaign.ledger_roots import LEDGER_META, CampaignLedger
from seedzer.campaign.loading import SeedLoader, import_seeds, load_seeds
from seedzer.campaign.monitor import Monitor, QuietMonitor
from seedzer.campaign.quarantine import Quarantine
from seedzer.campaign.scheduler import Scheduler, make_scheduler, record_cost
from seedzer.campaign.seeds import list_pool
from seedzer.campaign.stats import CampaignStats
from seedzer.campaign.throughput import parse_timings, stage_totals
from seedzer.campaign.triggers import PassCount, TriggerCounts, snapshot_column
from seedzer.campaign.worker_limits import exec_settings, stage_limits
from seedzer.config import RARITY, Config, config_from_dict, to_dict
from seedzer.coverage import make_backend
from seedzer.coverage.native import prepare_collector
from seedzer.execute.executor import Executor, WorkerSlot
from seedzer.execute.records import ExecTask, FuzzTask, TestCaseInfo, WorkerEvent
from seedzer.execute.settings import WorkerSettings
from seedzer.execute.worker_pool import WorkerPool
from seedzer.finding.repro import TVM_VERSION
from seedzer.finding.store import FindingStore
from seedzer.kernel.common import Observation, Stage, Symptom
from seedzer.ledger.records import CAMPAIGN
from seedzer.level_table import level_names
from seedzer.levels.registry import level
from seedzer.oracles import judge, make_oracles
from seedzer.provenance import provenance
from seedzer.store.corpus import CORPUS_DIR, Corpus, CorpusEntry
from seedzer.store.db import CampaignDB
from seedzer.store.lock import DirLock

AFFINITY_DRAWS = 8
"""Extra draws of the scheduler for an entry the asking worker ran itself (see ``_choose_for``): with
two workers, ``n`` draws leave 1 choice in ``2 ** (n + 1)`` to another's entry, which costs a parse
(why this value: docs/measurements.md, 'Campaign loop')."""
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
                 gate: GateRunner | None = None, imported: Sequence[CorpusEntry] | None = None,
                 ledger_source: str = CAMPAIGN) -> None:
        self.out, self.pool, self.cfg, self.resume = Path(out), Path(pool), cfg, resume
        self.monitor = monitor or QuietMonitor()
        self.imported = list(imported) if imported is not None else None
        # fails early, before anything is created; a campaign seeded with imported entries loads no model
        self.models = list_pool(self.pool) if self.imported is None else []
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
        self.coverage = make_backend(cfg.fuzz.coverage)
        self.oracles = make_oracles(cfg.oracles.enabled)
        self.levels = cfg.levels.weights()
        self.schedulers = {name: make_scheduler(cfg.fuzz.scheduler, cfg.fuzz.energy) for name in self.levels}
        """One scheduler per level fuzzed: a level is drawn by its weight, then an entry of it."""
        self.limits = stage_limits(cfg)
        self.keep = KeepRule()
        self.rng = random.Random(cfg.fuzz.seed)
        self.stats = CampaignStats(budget=cfg.fuzz.minutes * 60, jobs=cfg.fuzz.jobs)
        self.filing = Filing(self.findings, self.corpus, FilingSettings.of(cfg), self.stats, self.monitor, gate,
                             log_dir=self.out / "logs")
        self.executor_factory = executor
        self.seed_loader = seed_loader
        self.pending: deque[CorpusEntry] = deque()
        self.exec_counts: Counter[tuple[str, str]] = Counter()
        self.level_counts: Counter[tuple[str, str]] = Counter()
        self.mutator_counts: Counter[tuple[str, str]] = Counter()
        self.triggers = TriggerCounts()
        """Per level and pass: test cases that ran it and that triggered it (changed the IR)."""
        self.tc_counter = 0
        self._stop = False
        self._executor: Executor | None = None
        self.epochs: Epochs | None = None
        """The generation epochs (``--epochs``), made once the pool is loaded."""

    # --- set-up -------------------------------------------------------------------------
    def _restore(self) -> None:
        self.stats.elapsed = float(self.db.get_meta("elapsed", 0.0))
        self.stats.execs = self.db.total_execs()
        summary = self.db.exec_summary().items()
        self.stats.invalid = sum(n for (s, _), n in summary if s == Symptom.INVALID.value)
        self.stats.slow = sum(n for (s, _), n in summary if s == "slow")
        snapshots = self.db.snapshots()  # stage seconds stay cumulative across resumes
        self.stats.timings = parse_timings(snapshots[-1].get("timings")) if snapshots else {}
        self.coverage.restore(self.db.features())
        self.triggers.restore({key: PassCount(*counts) for key, counts in self.db.pass_triggers().items()})
        recorded = self.db.get_meta("config") or {}
        if self.cfg.epochs.count == 0 and isinstance(recorded.get("epochs"), dict):  # resumed without --epochs
            self.cfg.epochs = config_from_dict({"epochs": recorded["epochs"]}, "campaign.db").epochs
        loaded = self.db.loaded_models()  # the epochs' models taken in so far: resumed entries may name them
        self.models.extend(m for m in epoch_models(self.out) if m.name in loaded)
        skipped: dict[str, str] = {}  # entries read back that cannot be fuzzed (an edited file)
        self.corpus.restore(self.quarantine.entry_check(self.models) if self.imported is None else None, skipped)
        self.quarantine.restored(skipped)
        self.stats.corpus, self.stats.coverage = len(self.corpus), self.coverage.total()  # shown from the start
        self.filing.restore()
        self.db.add_event("resume", {"elapsed": self.stats.elapsed, "corpus": len(self.corpus)})

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
        self._install_signals()
        settings = self._worker_settings()
        self.stats.phase = "loading"
        if self.imported is not None:
            import_seeds(self, self.imported)
        else:
            load_seeds(self, self.seed_loader)
        self.pending.extend(e for e in self.corpus.entries if not e.executed and e not in self.pending)
        self.quarantine.check_left()
        if self.cfg.epochs.count > 1 and self.imported is None:
            self.epochs = Epochs(self)
        self.stats.phase = "fuzzing"
        executor = self.executor_factory(self.cfg.fuzz.jobs, settings, self.limits)
        self._executor = executor
        self.db.add_event("workers", {"pids": executor.pids()})
        start = time.monotonic()
        base_elapsed = self.stats.elapsed
        next_snap = 0.0
        try:
            while not self._stop and self.stats.elapsed < self.stats.budget:
                events = executor.poll(0.05)  # waiting for workers: not the fuzzer's own work
                busy = time.perf_counter()
                stores = [self._on_event(ev) for ev in events]
                # A worker with room gets its next test case (it still runs the one sent before, see
                # QUEUED_TASKS) before the campaign writes an answer's corpus entry or finding to disk.
                for w in executor.idle():
                    self._feed(w)
                for store in stores:
                    if store is not None:
                        store()
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

    # --- the loop -------------------------------------------------------------------------
    def _feed(self, w: WorkerSlot) -> None:
        self.tc_counter += 1
        submit = w.submit
        if self.pending:
            entry = self.pending.popleft()
            submit(ExecTask(self.tc_counter, entry.level, entry.script, entry.passes),
                   TestCaseInfo(self.tc_counter, "exec", entry.seed_id, entry.level, entry.script, entry.passes))
            return
        name = self._level()
        entry = self._choose_for(w.index, name)
        other = self.rng.choice(self.corpus.levels.get(name) or self.corpus.entries).passes
        steer = entry.triggered if self.cfg.fuzz.energy == RARITY else ()  # inserted passes: untriggered first
        task = FuzzTask(self.tc_counter, name, entry.script, entry.passes, entry.failures, other,
                        self.rng.getrandbits(62), steer)
        submit(task, TestCaseInfo(self.tc_counter, "fuzz", entry.seed_id, name, limits=self._relative_limits(entry)))

    def _relative_limits(self, parent: CorpusEntry) -> dict[Stage, float] | None:
        """A mutant's stage limits: ``timeouts.relative`` times its parent's measured cost, within
        ``timeouts.floor`` and each stage's own limit (None: the stage limits, for a parent not measured
        yet and for the ``timeouts.hang_share`` of mutants whose hangs may be filed). AFL++ likewise
        derives its time limit from the seeds' measured speed and confirms a hang with a longer one."""
        t = self.cfg.timeouts
        if t.relative <= 0 or parent.cost is None or self.rng.random() < t.hang_share:
            return None
        limit = max(t.floor, t.relative * parent.cost)
        return {stage: min(full, limit) for stage, full in self.limits.items()}

    def _level(self) -> str:
        """A level drawn by its configured weight among those the corpus has entries of (when it has
        none of a level on, e.g. a campaign whose pool gave no graph seed, the first it has)."""
        present = {name: w for name, w in self.levels.items() if self.corpus.levels.get(name)}
        if not present:
            return next(iter(self.corpus.levels))
        return self.rng.choices(list(present), weights=list(present.values()))[0]

    def _choose_for(self, worker: int, level: str) -> CorpusEntry:
        """The scheduler's choice, drawn again (up to :data:`AFFINITY_DRAWS` times) while it is an
        entry another worker ran: a worker has the parsed IR of its own entries cached, and parsing
        another's TVMScript is costly (docs/measurements.md, 'Campaign loop'). Workers are alike, so
        every entry is still chosen as often as the scheduler says; each worker mostly grows its own
        part of the corpus."""
        entries, scheduler = self.corpus.levels[level], self.schedulers[level]
        entry = scheduler.choose(entries, self.rng)
        for _ in range(AFFINITY_DRAWS):
            if entry.worker is None or entry.worker == worker:
                break
            entry = scheduler.choose(entries, self.rng)
        entry.chosen += 1
        return entry

    def _on_event(self, ev: WorkerEvent) -> Callable[[], None] | None:
        """Take in one event: judge a result, merge its coverage, decide whether it is kept and
        update its parent's failure counter. Writing what must be stored (a corpus entry, a
        finding) is returned as a call for later, so that the worker can be fed first."""
        if ev.kind == "tc":
            return None
        if ev.kind == "death":
            assert ev.death is not None
            on_death(self, ev, ev.death)
            return None
        assert ev.tc is not None and ev.result is not None
        result, tc, worker = ev.result, ev.tc, ev.worker
        self.stats.add_timings(result.timings)
        result.features.extend(self.triggers.record(tc.level, result.passes_ran, result.passes_triggered))
        gain = self.coverage.new_since_last(result.features)
        self.stats.coverage = self.coverage.total()
        obs = self._judged(result.observation, tc.level)
        if obs.symptom is Symptom.INVALID:
            self.filing.filtered(obs, tc, worker, result.observation)
        for mutator in tc.mutators:  # what each kind of mutation yields (status: by mutation)
            self.mutator_counts[(mutator, obs.symptom.value)] += 1
        bug = obs.symptom.is_bug
        parent = self.corpus.by_id.get(tc.parent or "")
        seconds = result.timings.get("worker_busy", 0.0)
        if parent is not None:
            record_cost(parent, seconds)
            if tc.kind == "exec":  # a seed's (or a resumed entry's) own run: what it covers and triggers
                parent.triggered = tuple(result.passes_triggered)
                self._scheduler(parent).learn(parent, result.features)
        entry = self.keep.apply(tc, gain, obs, result.unchanged, parent, worker)
        if not bug and entry is None:
            return None

        def store() -> None:
            if bug:
                self.filing.candidate(obs, tc, worker, result.unchanged, "")
            if entry is not None and self.corpus.add(entry, gain, tc.mutators):
                record_cost(entry, seconds)
                entry.triggered = tuple(result.passes_triggered)
                self._scheduler(entry).learn(entry, result.features)
                self.stats.corpus = len(self.corpus)

        return store

    def _scheduler(self, entry: CorpusEntry) -> Scheduler:
        """The scheduler of the entry's level (one for a level not fuzzed now, whose entries a resumed
        or imported corpus may hold)."""
        found = self.schedulers.get(entry.level)
        if found is None:
            found = self.schedulers[entry.level] = make_scheduler(self.cfg.fuzz.scheduler, self.cfg.fuzz.energy)
        return found

    def _judged(self, observation: Observation, level: str) -> Observation:
        """The oracles' verdict on one execution of ``level``, counted in the campaign's statistics."""
        obs = judge(self.oracles, observation)
        self._count(obs.symptom.value, obs.stage.value if obs.stage else "", level)
        if obs.symptom is Symptom.INVALID:
            self.stats.invalid += 1
        return obs

    def _count(self, symptom: str, stage: str, level: str) -> None:
        """One more execution, by symptom and stage and by level and symptom (flushed to campaign.db
        at the next snapshot)."""
        self.stats.execs += 1
        self.stats.session_execs += 1
        self.exec_counts[(symptom, stage)] += 1
        self.level_counts[(level, symptom)] += 1
        self.stats.level_execs[level] += 1

    def snapshot(self) -> None:
        """Write one snapshot row and flush batched counters and fresh coverage features."""
        self.db.add_exec_counts(dict(self.exec_counts))
        self.exec_counts.clear()
        self.db.add_level_counts(dict(self.level_counts))
        self.level_counts.clear()
        self.db.add_mutator_counts(dict(self.mutator_counts))
        self.mutator_counts.clear()
        self.filing.ledger.flush()
        self.db.add_features(self.coverage.drain_fresh(), time.time())
        self.db.add_pass_triggers((lv, name, c.ran, c.triggered) for (lv, name), c in self.triggers.drain().items())
        self.db.add_snapshot({
            "time": self.stats.elapsed, "execs": self.stats.execs, "coverage": self.coverage.total(),
            "coverage_backend": self.cfg.fuzz.coverage, "corpus_size": len(self.corpus),
            "findings": sum(self.stats.findings.values()), "unique_findings": sum(self.stats.unique.values()),
            "invalid": self.stats.invalid, "wall": time.time(),
            "coverage_detail": self.coverage.detail(), "timings": stage_totals(self.stats.timings),
            "triggers": snapshot_column(self.triggers.totals()),
        })
        self.db.set_meta("elapsed", self.stats.elapsed)
