"""Filing findings: every candidate is written, then judged by the filing gate before it counts as a bug.

A bug observation from a worker is grouped by its raw signature (:func:`seedzer.oracles.signature.raw_key`).
The first occurrence of a raw signature gets its finding folder (IR, passes, the kernel case, a
``repro.py``, ``meta.json`` with verdict ``pending``) and waits for the gate, which runs in a process
forked from the zygote while the campaign goes on (:mod:`seedzer.finding.tir.gate`). The gate's verdict is
written into ``meta.json`` and campaign.db; a bug is counted under its root signature (one root cause,
one finding), a not-a-bug by its reason. A crash the gate confirms is re-run once more from its
``repro.py`` in a clean interpreter (independence from Seedzer). Pending candidates of a killed
campaign are judged when it resumes: nothing is lost.

**The gate's budget.** A candidate whose predicted root the gate already judged is counted against
that verdict without a gate run (:mod:`seedzer.finding.known`). The others wait in a queue, and one
gate run starts at a time, each killed after ``GateSettings.job_seconds``. While the gate's processor
seconds so far exceed ``FilingSettings.gate_share`` of the workers' time so far (elapsed x jobs, the
whole campaign across resumes), no new run starts: the candidates keep waiting (pending in
campaign.db) until the share falls back as the campaign goes on, or until the end of the campaign,
whose drain starts them regardless of the share for as long as its budget lasts; what is left is
judged on ``--resume``. So the share exceeds the limit by at most the run in progress during
fuzzing, plus the end drain.
"""

from __future__ import annotations

import dataclasses
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from seedzer.campaign.confirm import Confirmer
from seedzer.campaign.filtered import WAITING, FilterLedger
from seedzer.campaign.model_fills import ModelFills
from seedzer.campaign.monitor import Monitor
from seedzer.campaign.reruns import Reruns
from seedzer.campaign.stats import CampaignStats
from seedzer.config import Config
from seedzer.errors import CampaignError, SeedzerError
from seedzer.execute.background import Background, JobResult
from seedzer.execute.records import TestCaseInfo
from seedzer.finding.gate import GateSettings, gate_settings
from seedzer.finding.kind import FileSettings, GateContext, Observed, Provenance
from seedzer.finding.known import KnownVerdicts
from seedzer.finding.layout import REPRO_FILE
from seedzer.finding.meta import BUG, NOT_A_BUG, PENDING, FindingMeta, FindingSettings
from seedzer.finding.registry import POOL_KIND, kind
from seedzer.finding.store import FindingStore
from seedzer.finding.verdict import Verdict, reason_code
from seedzer.kernel.common import Observation, Symptom
from seedzer.load.loader import LoaderFailure
from seedzer.store.corpus import Corpus, CorpusEntry
from seedzer.store.db import FindingRow


@dataclass(frozen=True)
class Candidate:
    """A bug observation ready to file: the finding kind that files it, what was observed, its raw
    signature, and whether that signature was filed before (``repeat``: one more occurrence)."""

    kind: str
    observed: Observed
    signature: str
    repeat: bool


class GateJobs(Protocol):
    """Runs the gate's jobs away from the campaign loop and returns finished ones."""

    def submit(self, key: str, fn: Callable[..., Any], *args: Any) -> None:
        """Queue ``fn(*args)``."""
        ...

    def poll(self) -> list[JobResult]:
        """Jobs that finished since the last call."""
        ...

    def pending(self) -> int:
        """Jobs not finished yet."""
        ...

    def drain(self, budget: float) -> list[JobResult]:
        """Wait up to ``budget`` seconds for outstanding jobs."""
        ...

    def close(self) -> None:
        """Stop a running job (it is re-run on resume)."""
        ...


@dataclass
class FilingSettings:
    """What filing needs from the campaign's configuration."""

    settings: FindingSettings
    gate: GateSettings
    perf_factor: float
    perf_repeats: int
    confirm_crashes: bool
    gate_share: float | None = 0.05
    """No new gate run starts while the gate's seconds exceed this share of the workers' time (None:
    no limit; see the module docstring)."""
    max_memory: int = 0
    """The workers' address-space limit of a test case, under which slow and out-of-memory test cases
    are re-run (:mod:`seedzer.campaign.reruns`)."""

    @property
    def filing(self) -> FileSettings:
        """What a kind needs to file a case (:meth:`seedzer.finding.kind.FindingKind.file`)."""
        return FileSettings(self.settings, self.perf_factor, self.perf_repeats)

    @staticmethod
    def of(cfg: Config) -> FilingSettings:
        """From the campaign configuration."""
        gate = gate_settings(cfg)
        share = cfg.oracles.gate_share  # 0 or less: no limit
        return FilingSettings(FindingSettings(cfg.oracles.rtol, cfg.oracles.atol, dict(gate.timeouts)), gate,
                              cfg.oracles.perf_factor, cfg.oracles.perf_repeats, cfg.oracles.confirm_crashes,
                              share if share > 0 else None, cfg.limits.max_testcase_memory)


class Filing:
    """Records candidates, runs the gate on new ones and applies its verdicts (see the module docstring)."""

    def __init__(self, findings: FindingStore, corpus: Corpus, settings: FilingSettings, stats: CampaignStats,
                 monitor: Monitor, gate: GateJobs | None = None, confirmer: Confirmer | None = None,
                 log_dir: Path | None = None) -> None:
        self.findings = findings
        self.corpus = corpus
        self.settings = settings
        self.stats = stats
        self.monitor = monitor
        self.gate: GateJobs = gate or Background("gate", str(log_dir) if log_dir else None,
                                                   settings.gate.job_seconds)
        self.confirmer = confirmer or Confirmer()
        self.verdicts: dict[str, tuple[str, str | None]] = {}  # raw signature -> (verdict, root)
        self.roots: set[str] = set()
        self.root_listeners: list[Callable[[FindingMeta], object]] = []
        """Called with the finding of every bug root first filed in this session (the allocation's credit)."""
        self.known = KnownVerdicts()
        self.waiting: deque[tuple[FindingMeta, Any]] = deque()  # candidates before their gate run
        self.ledger = FilterLedger(findings.root.parent, findings.db, settings.filing)
        self.reruns = Reruns(self.ledger, settings.gate, settings.max_memory)
        self.fills = ModelFills(findings)

    # --- the campaign's view ------------------------------------------------------------------
    def restore(self) -> None:
        """Reload verdicts from campaign.db (and what they teach, :mod:`seedzer.finding.known`); queue
        the gate for candidates still pending. A verdict its finding's folder holds and campaign.db
        does not (the campaign stopped between the two writes, e.g. on a full disk) is the campaign's
        own: written into campaign.db now and counted as judged, never gated (nor announced) again."""
        pending: list[FindingMeta] = []
        for row in self.findings.db.findings():
            judged = row.verdict in (BUG, NOT_A_BUG)
            meta = self._load(row.signature) if not judged and row.status != "known" else None
            if meta is not None and meta.verdict in (BUG, NOT_A_BUG):
                row = self._written_verdict(row, meta)
            self.verdicts[row.signature] = (row.verdict, row.root)
            if row.verdict == BUG and row.root:
                if row.root not in self.roots:
                    self.roots.add(row.root)
                    self.stats.unique[row.symptom] += 1
                self.stats.findings[row.symptom] += row.count
            elif row.verdict == NOT_A_BUG:
                self.stats.not_a_bug[reason_code(row.verdict_reason)] += 1
            elif row.status == "known":  # known issues are never sent to the gate (as when filed)
                continue
            meta = self._load(row.signature) if judged else meta
            if meta is None:
                continue
            if row.verdict in (BUG, NOT_A_BUG):
                self.known.learn(meta)
                self.fills.add(meta)
            else:
                pending.append(meta)
        for meta in pending:
            self.stats.pending += 1  # shown as awaiting the gate until its verdict lands
            self.submit(meta)

    def _written_verdict(self, row: FindingRow, meta: FindingMeta) -> FindingRow:
        """``row`` with the verdict of its folder's ``meta``, which campaign.db lost (the folder is written
        first: its case and reproducer were rewritten before that verdict), written into campaign.db."""
        self.findings.update(meta)
        self.findings.db.add_event("verdict_restored", {"signature": meta.signature, "verdict": meta.verdict,
                                                        "root": meta.root_signature})
        return dataclasses.replace(row, verdict=meta.verdict, verdict_reason=meta.verdict_reason,
                                   root=meta.root_signature, status=meta.status)

    def _load(self, signature: str) -> FindingMeta | None:
        try:
            return self.findings.load(signature)
        except Exception as exc:  # a folder damaged outside Seedzer: say so, keep going
            self.monitor.message(f"warning: finding {signature}: {exc}")
            return None

    def candidate(self, obs: Observation, tc: TestCaseInfo, worker: int, unchanged: Sequence[int],
                  log: str = "") -> Candidate:
        """One bug observation of a fuzzer test case as a candidate of its level's kind, with the kernel
        case its worker ran (never planned again here), classified by its raw signature: a repeat, or
        new (its signature is then taken: a second occurrence before it is filed is a repeat).
        :meth:`file` files it."""
        ran = tc.ran()
        if ran is None:  # a result and a death are filed only once their test case was announced
            raise CampaignError(f"test case {tc.tc_id} of worker {worker} was never announced")
        return self._classify(tc.level, self._observed(obs, tc, ran, worker, unchanged, log))

    def _observed(self, obs: Observation, tc: TestCaseInfo, ran: Any, worker: int, unchanged: Sequence[int],
                  log: str = "") -> Observed:
        parent = self.corpus.by_id.get(tc.parent or "")
        provenance = Provenance(tc.parent, parent.origin if parent else "", tuple(tc.mutators), worker, tc.tc_id)
        return Observed(obs, ran, provenance, tc.passes, tuple(unchanged), log)

    def filtered(self, obs: Observation, tc: TestCaseInfo, worker: int, raw: Observation | None = None) -> None:
        """Count a test case the filters turned away (invalid, or slow) and keep a sample of it
        (:mod:`seedzer.campaign.filtered`); a slow or out-of-memory one waits for its re-run at the
        full limits (:mod:`seedzer.campaign.reruns`). One that was never announced is only counted.
        ``raw``: what the worker observed, when an oracle turned it invalid (a stated precondition):
        the sample reproduces that failure."""
        ran = tc.ran()
        observed = self._observed(raw or obs, tc, ran, worker, []) if ran is not None else None
        sample = self.ledger.record(tc.level, obs, observed)
        if sample is not None and observed is not None and sample.rerun == WAITING:
            self.reruns.add(sample, observed)
            self._dispatch()

    def loaded(self, model: Path, failure: LoaderFailure) -> None:
        """File one failure of loading a pool model (the one path of the pool's findings)."""
        observed = Observed(failure.observation, failure, Provenance(origin=model.name), log=failure.log,
                            source=model)
        self._file(POOL_KIND, observed)

    def _file(self, kind_name: str, observed: Observed) -> None:
        """Classify and file at once (a load failure, a re-run's hang)."""
        self.file(self._classify(kind_name, observed))

    def _classify(self, kind_name: str, observed: Observed) -> Candidate:
        signature = kind(kind_name).signature(observed)
        repeat = signature in self.verdicts
        if not repeat:
            self.verdicts[signature] = (PENDING, None)  # taken: filed by :meth:`file`, given back if it cannot be
        return Candidate(kind_name, observed, signature, repeat)

    def file(self, candidate: Candidate) -> None:
        """Count a repeat of a known signature, else write the new finding's folder and queue its gate
        run (a finding that cannot be filed, e.g. its model file gone, is a warning, never fatal)."""
        if candidate.signature in self.verdicts and candidate.repeat:
            self._occurrence(candidate.signature, candidate.observed.observation)
            return
        self.verdicts[candidate.signature] = (PENDING, None)  # a repeat of one that could not be filed tries too
        try:
            filed = kind(candidate.kind).file(candidate.observed, self.settings.filing)
        except SeedzerError as exc:
            del self.verdicts[candidate.signature]  # a later occurrence tries again
            self.monitor.message(f"warning: {exc}")
            return
        report = self.findings.record(filed.finding)
        if report.new and filed.meta.status != "known":
            self.stats.pending += 1
            self.submit(filed.meta, filed.gate_case)

    def _occurrence(self, signature: str, obs: Observation) -> None:
        """Count a repeat of a known raw signature."""
        self.findings.db.bump_finding(signature)
        if self.verdicts[signature][0] == BUG:
            self.stats.findings[obs.symptom.value] += 1

    def submit(self, meta: FindingMeta, case: Any = None) -> None:
        """Queue a pending candidate for the gate (``case``: the case the worker ran): counted at once
        when a known verdict covers it, else gated in its turn (see the module docstring)."""
        known = self.known.verdict(meta)
        if known is not None:
            self._settle_known(known)
            return
        self.waiting.append((meta, case))
        self._dispatch()

    def _dispatch(self, force: bool = False) -> bool:
        """Start the next waiting candidate's gate run when none runs and the gate is within its share
        (``force``: regardless of the share); whether one started."""
        started = False
        if self.gate.pending() == 0 and (force or self._within_share()):
            if self.waiting:  # candidates first; a re-run when none waits
                meta, case = self.waiting.popleft()
                folder = self.findings.root / meta.signature
                context = GateContext(self.settings.gate, self._ancestors(meta.parent), case)
                call = kind(meta.kind).gate_call(folder, meta, context)
                self.gate.submit(meta.signature, call.fn, *call.args)
                started = True
            elif (rerun := self.reruns.next_call() or self.fills.next_call()) is not None:
                key, call = rerun
                self.gate.submit(key, call.fn, *call.args)
                started = True
        self.stats.gate_waiting = len(self.waiting)
        return started

    def _within_share(self) -> bool:
        limit, fraction = self.settings.gate_share, self.stats.gate_fraction()
        return limit is None or fraction is None or fraction <= limit

    def _sweep(self) -> None:
        """Count the waiting candidates a verdict just learned covers."""
        keep: deque[tuple[FindingMeta, Any]] = deque()
        for meta, case in self.waiting:
            known = self.known.verdict(meta)
            if known is None:
                keep.append((meta, case))
            else:
                self._settle_known(known)
        self.waiting = keep
        self.stats.gate_waiting = len(self.waiting)

    def _settle_known(self, verdict: Verdict) -> None:
        """Record a verdict counted without a gate run (no crash confirmation either: the root's own
        finding had it)."""
        self.stats.gate_known += 1
        meta = self.findings.load(verdict.signature)
        verdict.observation = meta.observation  # the fuzzer's own, as recorded: nothing was re-observed
        self._record(meta, verdict)
        self.fills.add(meta)
        self.findings.db.add_event("known_verdict", {"signature": meta.signature, "rule": verdict.rule,
                                                     "verdict": verdict.verdict, "root": verdict.root})

    def _record(self, meta: FindingMeta, verdict: Verdict) -> None:
        """Write a pending candidate's verdict and count it (a bug by its root, a dismissal by its reason)."""
        self.stats.pending = max(0, self.stats.pending - 1)
        self.findings.settle(meta, verdict)
        self.verdicts[meta.signature] = (meta.verdict, meta.root_signature)
        if verdict.verdict == BUG:
            self._count_bug(meta)
        else:
            self.stats.not_a_bug[reason_code(meta.verdict_reason)] += 1

    def _ancestors(self, parent: str | None) -> list[tuple[str, str]]:
        chain: list[CorpusEntry] = []
        entry = self.corpus.by_id.get(parent or "")
        while entry is not None and len(chain) < 10_000:
            chain.append(entry)
            entry = self.corpus.by_id.get(entry.parent or "")
        if not chain:
            return []
        out = [("the original seed", chain[-1].script)]
        if len(chain) > 1:
            out.append(("the unmutated parent", chain[0].script))
        return out

    # --- verdicts ------------------------------------------------------------------------------
    def poll(self) -> None:
        """Apply finished gate verdicts and crash confirmations."""
        for job in self.gate.poll():
            self._apply(job)
        self._dispatch()
        for done in self.confirmer.poll():
            meta = self.findings.load(done.signature)
            meta.status, meta.confirm_returncode = done.status, done.returncode
            self.findings.update(meta)
            self.findings.db.add_event("confirmation", {"signature": done.signature, "status": done.status,
                                                        "returncode": done.returncode})

    def drain(self, budget: float) -> None:
        """At the end of a campaign: judge waiting candidates regardless of the gate's share, and wait
        for outstanding verdicts, for up to ``budget`` seconds (the rest stay pending for ``--resume``)."""
        end = time.monotonic() + budget
        while time.monotonic() < end:
            started = self._dispatch(force=True)
            finished = self.gate.drain(max(0.0, end - time.monotonic()))
            for job in finished:
                self._apply(job)
            if not started and not finished:
                break
        for done in self.confirmer.drain(min(budget, 60.0)):
            meta = self.findings.load(done.signature)
            meta.status, meta.confirm_returncode = done.status, done.returncode
            self.findings.update(meta)
        self.gate.close()

    def _apply(self, job: JobResult) -> None:
        self.stats.add_timings({"gate": job.cpu_seconds})
        rerun = self.reruns.apply(job)
        if rerun is not None:
            self.stats.reruns[rerun.outcome.split(":")[0]] += 1
            if rerun.outcome != "passes":
                self.monitor.message(f"re-run of a {rerun.sample.reason} test case at the full limits "
                                     f"({rerun.sample.folder.name}): {rerun.outcome}")
            if rerun.hang is not None:
                self._file(rerun.sample.level, rerun.hang)
            return
        filled = self.fills.apply(job)
        if filled is not None:
            if filled != "written":
                self.monitor.message(f"warning: {filled}")
            return
        if job.error is not None or not isinstance(job.value, Verdict):
            self.findings.db.add_event("gate_error", {"signature": job.key, "error": (job.error or "")[:2000]})
            self.monitor.message(f"warning: the gate could not judge {job.key} ({(job.error or '').splitlines()[0]}"
                                 "); it stays pending and is judged again on --resume")
            return
        verdict = job.value
        meta = self.findings.load(verdict.signature)
        self._record(meta, verdict)
        if verdict.verdict == BUG and meta.observation.symptom is Symptom.CRASH and self.settings.confirm_crashes:
            self.confirmer.submit(meta.signature, self.findings.root / meta.signature / REPRO_FILE, 900.0)
        self.known.learn(meta)
        self._sweep()

    def _count_bug(self, meta: FindingMeta) -> None:
        symptom = meta.observation.symptom.value
        self.stats.findings[symptom] += 1
        if meta.root_signature and meta.root_signature not in self.roots:
            self.roots.add(meta.root_signature)
            self.stats.unique[symptom] += 1
            for listener in self.root_listeners:
                listener(meta)
            culprit = " + ".join(meta.culprit) or "-"
            fresh = "known bug" if meta.status == "known" else "new bug"
            known = f" [{meta.known_issue}]" if meta.status == "known" and meta.known_issue else ""
            self.monitor.message(f"{fresh} {meta.root_signature}{known} (culprit {culprit}): "
                                 f"{meta.observation.headline()[:140]} (findings/{meta.signature}/repro.py)")
