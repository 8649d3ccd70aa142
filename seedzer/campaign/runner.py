"""The campaign process: owns the store, the corpus and coverage totals, feeds workers, never runs TVM."""

from __future__ import annotations

import json
import random
import signal
import time
from collections import Counter, deque
from pathlib import Path
from types import FrameType
from typing import Any

from seedzer import __version__
from seedzer.campaign.confirm import Confirmer
from seedzer.campaign.monitor import Monitor, QuietMonitor
from seedzer.campaign.scheduler import make_scheduler
from seedzer.campaign.seeds import list_pool, load_for_campaign
from seedzer.campaign.stats import CampaignStats
from seedzer.config import Config, OracleConfig, to_dict
from seedzer.coverage import make_backend
from seedzer.coverage.native import prepare_collector
from seedzer.errors import CampaignError, PoolError
from seedzer.execute.pool import TestCaseInfo, WorkerEvent, WorkerPool
from seedzer.execute.settings import ExecSettings, WorkerSettings
from seedzer.oracles import judge, make_oracles
from seedzer.outcome import Outcome, Stage, Symptom
from seedzer.seed import JointSeed, drop_passes, passes_from_json, passes_to_json
from seedzer.store.corpus import Corpus, CorpusEntry
from seedzer.store.db import CampaignDB
from seedzer.store.findings import FindingStore
from seedzer.store.repro import TVM_VERSION


def prepare_dir(out: Path, resume: bool) -> None:
    """Create (or check, with ``resume``) a campaign directory; one-line errors name the path."""
    db = out / "campaign.db"
    if resume and not db.exists():
        raise CampaignError(f"{out}: nothing to resume (no campaign.db)")
    if not resume and db.exists():
        raise CampaignError(f"{out}: a campaign already exists here (use --resume to continue it)")
    try:
        (out / "corpus").mkdir(parents=True, exist_ok=True)
        (out / "findings").mkdir(exist_ok=True)
        probe = out / ".write-probe"
        probe.write_text("ok")
        probe.unlink()
    except OSError as exc:
        raise CampaignError(f"{out}: campaign directory is not writable ({exc.strerror or exc})") from exc


def exec_settings(oracles: OracleConfig, coverage: str) -> ExecSettings:
    """What workers must measure for the enabled oracles (costly checks only when asked for).

    The build pipeline's pass features are detailed (node histograms) only when ``passes`` is the
    coverage that decides what is kept: the histograms triple the cost of a build.
    """
    on = set(oracles.enabled)
    return ExecSettings(rtol=oracles.rtol, atol=oracles.atol, compare="mismatch" in on,
                        illformed="illformed" in on, perf_rate=oracles.perf_rate if "perf" in on else 0.0,
                        perf_factor=oracles.perf_factor, perf_repeats=oracles.perf_repeats,
                        detailed_build_coverage=coverage == "passes")


class Campaign:
    """One fuzzing campaign in one directory (resumable)."""

    def __init__(self, out: Path, pool: Path, cfg: Config, *, resume: bool = False,
                 monitor: Monitor | None = None) -> None:
        self.out, self.pool, self.cfg, self.resume = Path(out), Path(pool), cfg, resume
        self.monitor = monitor or QuietMonitor()
        self.models = list_pool(self.pool)  # fails early, before anything is created
        prepare_dir(self.out, resume)
        self.db = CampaignDB(self.out / "campaign.db")
        self.corpus = Corpus(self.out / "corpus", self.db)
        self.findings = FindingStore(self.out / "findings", self.db, cfg.known_issues)
        self.coverage = make_backend(cfg.fuzz.coverage)
        self.oracles = make_oracles(cfg.oracles.enabled)
        self.scheduler = make_scheduler(cfg.fuzz.scheduler)
        self.confirmer = Confirmer(coverage=cfg.fuzz.coverage)
        self.rng = random.Random(cfg.fuzz.seed)
        self.stats = CampaignStats(budget=cfg.fuzz.minutes * 60)
        self.pending: deque[CorpusEntry] = deque()
        self.exec_counts: Counter[tuple[str, str]] = Counter()
        self.tc_counter = 0
        self._stop = False
        self._pool: WorkerPool | Any = None

    # --- set-up -------------------------------------------------------------------------
    def _restore(self) -> None:
        self.stats.elapsed = float(self.db.get_meta("elapsed", 0.0))
        self.stats.execs = self.db.total_execs()
        self.stats.invalid = sum(n for (s, _), n in self.db.exec_summary().items() if s == Symptom.INVALID.value)
        restore = getattr(self.coverage, "restore", None)
        if restore is not None:
            restore(self.db.features())
        self.corpus.restore()
        for f in self.db.findings():
            self.stats.unique[f.symptom] += 1
            self.stats.findings[f.symptom] += f.count
            crash = f.status == "new" and f.symptom == Symptom.CRASH.value and self.cfg.oracles.confirm_crashes
            folder = Path(f.dir)
            if crash or ((folder / "meta.json").exists() and not (folder / "repro.py").exists()):
                self.confirmer.submit(f.signature, folder, confirm=crash)
        self.db.add_event("resume", {"elapsed": self.stats.elapsed, "corpus": len(self.corpus)})

    def load_seeds(self) -> None:
        """Load every pool model not loaded before; loader failures are findings, never fatal."""
        done = self.db.loaded_models()
        self.stats.phase = "loading"
        for model in self.models:
            if self._stop:  # Ctrl-C while loading: the models not loaded yet are loaded on --resume
                return
            if model.name in done:
                continue
            got = load_for_campaign(model, self.cfg.fuzz.differential_load, self.cfg.timeouts.load,
                                    self.cfg.fuzz.max_seeds_per_model)
            outcomes = got.outcomes
            for outcome in outcomes:
                if outcome.symptom.is_bug:
                    self._report_loader(model, outcome)
            added = 0
            for script, op in got.seeds:
                entry = CorpusEntry(JointSeed(script).seed_id, script, "[]", model.name, None, op)
                if self.corpus.add(entry, 0, ["initial"]):
                    self.pending.append(entry)
                    added += 1
            status = "ok" if got.seeds else "failed"
            detail = {"outcomes": [o.to_dict() for o in outcomes]}
            self.db.set_model(model.name, status, added, detail)
            if got.seeds:
                self.stats.loaded_models += 1
            else:
                self.stats.failed_models += 1
                first = outcomes[0].message.splitlines()[0] if outcomes and outcomes[0].message else "no seeds"
                self.monitor.message(f"warning: {model}: skipped, cannot be loaded ({first[:160]})")
            self.stats.corpus = len(self.corpus)
            self.monitor.update(self.stats)
        if not self.corpus.entries:
            raise PoolError(f"{self.pool}: no usable seeds ({len(self.models)} models, none could be loaded)")

    def _report_loader(self, model: Path, outcome: Outcome) -> None:
        files = {"log.txt": outcome.message + "\n" + str(outcome.detail.get("traceback", ""))}
        rep = self.findings.report(outcome, files, {"model": str(model.resolve()), "kind": "loader"})
        self._count_finding(rep.new, outcome, rep.signature)
        if rep.new:  # the original model's standalone repro.py, written in the background
            self.confirmer.submit(rep.signature, rep.dir, confirm=False)

    # --- the loop -------------------------------------------------------------------------
    def _install_signals(self) -> None:
        def stop(signum: int, _frame: FrameType | None) -> None:
            self._stop = True

        signal.signal(signal.SIGINT, stop)
        signal.signal(signal.SIGTERM, stop)

    def run(self) -> CampaignStats:
        """Load (or restore) seeds and fuzz until the budget is spent or a stop is requested."""
        if self.resume:
            self._restore()
        else:
            self.db.set_meta("config", to_dict(self.cfg))
            self.db.set_meta("pool", str(self.pool.resolve()))
            self.db.set_meta("versions", {"seedzer": __version__, "tvm": TVM_VERSION})
            self.db.set_meta("created", time.time())
        self._install_signals()
        # The coverage collector first: a backend that cannot work here fails before seeds load.
        settings = WorkerSettings(
            exec=exec_settings(self.cfg.oracles, self.cfg.fuzz.coverage),
            tolerance=self.cfg.fuzz.tolerance, max_passes=self.cfg.fuzz.max_passes,
            collector=prepare_collector(self.cfg.fuzz.coverage, self.out, self.db.features(),
                                        self.cfg.fuzz.block_cache, self.cfg.fuzz.block_granularity))
        self.load_seeds()
        self.pending.extend(e for e in self.corpus.entries if not e.executed and e not in self.pending)
        timeouts = {Stage.LOAD: self.cfg.timeouts.load, Stage.MUTATE: self.cfg.timeouts.mutate,
                     Stage.PASS: self.cfg.timeouts.passes, Stage.BUILD: self.cfg.timeouts.build,
                     Stage.RUN: self.cfg.timeouts.run, Stage.COMPARE: self.cfg.timeouts.compare}
        self.stats.phase = "fuzzing"
        pool = WorkerPool(self.cfg.fuzz.jobs, settings, timeouts)
        self._pool = pool
        self.db.add_event("workers", {"pids": pool.pids()})
        start = time.monotonic()
        base_elapsed = self.stats.elapsed
        next_snap = 0.0
        try:
            while not self._stop and self.stats.elapsed < self.stats.budget:
                busy = time.perf_counter()
                for w in pool.idle():
                    self._feed(w)
                book = time.perf_counter() - busy
                events = pool.poll(0.05)  # waiting for workers: not the fuzzer's own work
                busy = time.perf_counter()
                for ev in events:
                    self._on_event(ev)
                for verdict in self.confirmer.poll():
                    self._on_confirmation(verdict.signature, verdict.status, verdict.returncode)
                now = time.monotonic()
                self.stats.session_seconds = now - start
                self.stats.elapsed = base_elapsed + self.stats.session_seconds
                self.stats.restarts = pool.restarts
                if now >= next_snap:
                    self.snapshot()
                    next_snap = now + self.cfg.fuzz.snapshot_period
                self.monitor.update(self.stats)
                self.stats.add_timings({"bookkeeping": book + time.perf_counter() - busy})
        finally:
            pool.close()
            self.stats.phase = "finishing"
            self.snapshot()
            for verdict in self.confirmer.drain(60.0):
                self._on_confirmation(verdict.signature, verdict.status, verdict.returncode)
            self.monitor.update(self.stats)
            self.monitor.close()
            self.db.close()
        self.stats.phase = "done"
        return self.stats

    def stop(self) -> None:
        """Ask the loop to finish after the current poll."""
        self._stop = True

    def _feed(self, w: Any) -> None:
        self.tc_counter += 1
        if self.pending:
            entry = self.pending.popleft()
            info = TestCaseInfo(self.tc_counter, "exec", entry.seed_id, entry.script, entry.passes)
            w.submit(("exec", self.tc_counter, entry.script, entry.passes), info)
            return
        entry = self.scheduler.choose(self.corpus.entries, self.rng)
        other = self.rng.choice(self.corpus.entries).passes
        seed = {"script": entry.script, "passes": entry.passes, "failures": entry.failures}
        info = TestCaseInfo(self.tc_counter, "fuzz", entry.seed_id)
        w.submit(("fuzz", self.tc_counter, seed, other, self.rng.getrandbits(62)), info)

    def _on_event(self, ev: WorkerEvent) -> None:
        if ev.kind == "tc":
            return
        tc = ev.tc
        if ev.kind == "death":
            death = ev.record["death"]
            self.db.add_event("worker_restart", {"worker": ev.worker, **death,
                                                 "testcase": tc.tc_id if tc else None})
            self.monitor.message(f"worker {ev.worker} {death['message']} during {death['stage']}; restarted")
            self.db.add_event("workers", {"pids": self._pool.pids()})
            if tc is None or not tc.announced:
                return
        assert tc is not None
        outcome = judge(self.oracles, ev.record)
        self.stats.execs += 1
        self.stats.session_execs += 1
        self.exec_counts[(outcome.symptom.value, outcome.stage.value if outcome.stage else "")] += 1
        self.stats.add_timings(ev.timings)
        gain = self.coverage.new_since_last(ev.record.get("features", ()))
        self.stats.coverage = self.coverage.total()
        if outcome.symptom is Symptom.INVALID:
            self.stats.invalid += 1
        if outcome.symptom.is_bug:
            self._report(outcome, tc, ev)
        parent = self.corpus.by_id.get(tc.parent or "")
        if tc.kind == "exec":
            if parent is not None:
                parent.executed = True
            return
        if gain > 0 and outcome.symptom is Symptom.OK:
            # Passes that left the IR unchanged add nothing: the stored sequence goes without them.
            passes = drop_passes(passes_from_json(tc.passes), ev.record.get("noop_passes", ()))
            entry = CorpusEntry(JointSeed(tc.script, passes).seed_id, tc.script,
                                passes_to_json(passes), parent.origin if parent else "", tc.parent,
                                parent.op if parent else "", executed=True)
            self.corpus.add(entry, gain, tc.mutators)
            self.stats.corpus = len(self.corpus)
            if parent is not None:
                parent.failures = 0
        elif parent is not None:
            parent.failures += 1

    def _count_finding(self, new: bool, outcome: Outcome, sig: str) -> None:
        self.stats.findings[outcome.symptom.value] += 1
        if new:
            self.stats.unique[outcome.symptom.value] += 1
            where = f"{outcome.stage.value if outcome.stage else '?'}/{outcome.pass_name or '-'}"
            self.monitor.message(f"new finding {sig}: {outcome.symptom.value} at {where}: "
                                 f"{outcome.message.splitlines()[0][:120] if outcome.message else ''}")

    def _report(self, outcome: Outcome, tc: TestCaseInfo, ev: WorkerEvent) -> None:
        err = (ev.record.get("error") or ev.record.get("death") or ev.record.get("compare")
               or ev.record.get("illformed") or ev.record.get("perf") or {})
        files = {"ir.py": tc.script, "passes.json": json.dumps(json.loads(tc.passes), indent=1),
                 "log.txt": json.dumps(err, indent=1, default=str)}
        t = self.cfg.timeouts
        settings = {"rtol": self.cfg.oracles.rtol, "atol": self.cfg.oracles.atol,
                    "timeouts": {"mutate": t.mutate, "pass": t.passes, "build": t.build, "run": t.run,
                                 "compare": t.compare}}
        meta = {"parent": tc.parent, "mutators": tc.mutators, "worker": ev.worker, "testcase": tc.tc_id,
                "tvm": TVM_VERSION, "seedzer": __version__, "kind": "lowlevel", "settings": settings}
        rep = self.findings.report(outcome, files, meta)
        self._count_finding(rep.new, outcome, rep.signature)
        if rep.new:  # the standalone repro.py is written in the background (seedzer.triage.materialize)
            crash = outcome.symptom is Symptom.CRASH and self.cfg.oracles.confirm_crashes
            self.confirmer.submit(rep.signature, rep.dir, confirm=crash)

    def _on_confirmation(self, sig: str, status: str | None, code: int | None) -> None:
        if status is None:
            self.db.add_event("repro", {"signature": sig})
            return
        self.findings.set_status(sig, status, {"confirm_returncode": code})
        self.db.add_event("confirmation", {"signature": sig, "status": status, "returncode": code})

    def snapshot(self) -> None:
        """Write one snapshot row and flush batched counters and fresh coverage features."""
        self.db.add_exec_counts(dict(self.exec_counts))
        self.exec_counts.clear()
        drain = getattr(self.coverage, "drain_fresh", None)
        if drain is not None:
            self.db.add_features(drain(), time.time())
        self.db.add_snapshot({
            "time": self.stats.elapsed, "execs": self.stats.execs, "coverage": self.coverage.total(),
            "coverage_backend": self.cfg.fuzz.coverage, "corpus_size": len(self.corpus),
            "findings": sum(self.stats.findings.values()), "unique_findings": sum(self.stats.unique.values()),
            "invalid": self.stats.invalid, "wall": time.time(),
            "coverage_detail": getattr(self.coverage, "detail", dict)(),
        })
        self.db.set_meta("elapsed", self.stats.elapsed)

