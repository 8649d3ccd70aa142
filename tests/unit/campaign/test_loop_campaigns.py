"""The campaign's keep, feedback and judging logic, driven with the cheap fake worker (no TVM runs).

Every test runs a real :class:`~seedzer.campaign.loop.Campaign` loop on a real
:class:`~seedzer.execute.worker_pool.WorkerPool` whose workers run the fake worker protocol
(:mod:`seedzer.execute.fake_worker`: script lines ``CRASH``/``HANG``/``ERROR``/``MISMATCH``/``INVALID``
drive it, features are the script's lines), a fake seed loader (a few scripts, no ONNX) and a fake
filing gate that answers synchronously with the :class:`~seedzer.finding.tir.gate.Verdict` a test chooses.
Coverage is ``passes`` (no breakpoint set-up). A probe monitor stops each campaign as soon as what the
test waits for has happened; the budget (seconds) is only a safety net.
"""

from __future__ import annotations

import itertools
import json
import os
import re
import signal
import sqlite3
import time
from collections.abc import Callable, Iterator, Sequence
from multiprocessing.connection import Connection
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from rich.console import Console

from seedzer.campaign.loading import SeedLoader
from seedzer.campaign.loop import Campaign
from seedzer.campaign.monitor import QuietMonitor
from seedzer.campaign.seeds import ModelSeeds
from seedzer.campaign.stats import CampaignStats
from seedzer.campaign.summary import campaign_summary
from seedzer.config import Config, parse_levels
from seedzer.coverage.native import prepare_collector
from seedzer.errors import CampaignError
from seedzer.execute.fake_worker import fake_case, fake_execute, fake_worker_main
from seedzer.execute.progress import ProgressSlot
from seedzer.execute.records import ExecResult, ExecTask, Fatal, FuzzTask, Task, WorkerEvent
from seedzer.execute.settings import WorkerSettings
from seedzer.execute.worker import serve
from seedzer.execute.worker_pool import WorkerHandle, WorkerPool
from seedzer.finding.meta import BUG, NOT_A_BUG, PENDING, FindingMeta
from seedzer.finding.tir.gate import GateJob
from seedzer.finding.verdict import Verdict
from seedzer.kernel.common import Observation, Stage, Symptom
from seedzer.kernel.tir.case import Case
from seedzer.load.bounds import Limits
from seedzer.seed import PassSpec, passes_from_json, passes_to_json
from seedzer.store.corpus import CorpusEntry, entry_id
from tests.unit.fake_gate import FakeGate

ROOTS = {Symptom.EXCEPTION: "e0e0e0e0e0e0", Symptom.CRASH: "c0c0c0c0c0c0", Symptom.HANG: "a0a0a0a0a0a0",
         Symptom.MISMATCH: "d0d0d0d0d0d0"}
"""The root signature the fake gate files each symptom's bugs under."""
FUZZED_PASS = ("tirx.Simplify", "tirx.RemoveNoOp")
"""Passes the passes-carrying fake worker puts first in a mutant's sequence (they change the IR)."""
NOOP_PASS = "tirx.LowerIntrin"
"""The pass it puts second, and reports as having left the IR unchanged."""


# --- fake workers (module level: the zygote's children import them by name) ----------------------
def passes_worker_main(conn: Connection, slot: ProgressSlot, settings: Any, index: int = 0) -> None:
    """The fake worker, but its mutants carry a two-pass sequence whose second pass changes nothing."""

    def mutate(task: FuzzTask, rng: Any) -> tuple[str, str, list[str]]:
        passes = [PassSpec(FUZZED_PASS[rng.randrange(2)]), PassSpec(NOOP_PASS)]
        return task.script + f"\nline{rng.randrange(settings.lines)}", passes_to_json(passes), ["FakeAppend"]

    def execute(level: str, case: Case, passes: str) -> ExecResult:
        result = fake_execute(case.script, slot)
        result.unchanged = [i for i, p in enumerate(passes_from_json(passes)) if p.name == NOOP_PASS]
        return result

    serve(conn, slot, mutate, fake_case, execute)


def slow_setup_main(conn: Connection, slot: ProgressSlot, settings: Any, index: int = 0) -> None:
    """A fake worker whose set-up takes a while (a window to kill it in)."""
    time.sleep(settings.setup_seconds)
    fake_worker_main(conn, slot, settings, index)


def crashing_setup_main(conn: Connection, slot: ProgressSlot, settings: Any, index: int = 0) -> None:
    """A worker whose set-up segfaults every time."""
    os.kill(os.getpid(), signal.SIGSEGV)


def exiting_setup_main(conn: Connection, slot: ProgressSlot, settings: Any, index: int = 0) -> None:
    """A worker that exits during set-up before it can say why (e.g. an import failing in the child)."""
    raise SystemExit(3)


def fatal_setup_main(conn: Connection, slot: ProgressSlot, settings: Any, index: int = 0) -> None:
    """A worker whose set-up fails with a reason."""
    conn.send(Fatal("RuntimeError: no coverage collector here"))
    raise SystemExit(1)


# --- fakes of the campaign's other parts ----------------------------------------------------------
def bug(job: GateJob, root: str | None = None) -> Verdict:
    obs = job.case.expected
    assert isinstance(job.case, Case) and isinstance(obs, Observation)
    return Verdict(job.signature, BUG, "bug", job.case, obs, [obs.pass_name or "FakePass"],
                   root or ROOTS[obs.symptom], tests=3, seconds=0.01, rule="witness")


def not_a_bug(job: GateJob, reason: str) -> Verdict:
    assert job.case.expected is not None
    return Verdict(job.signature, NOT_A_BUG, reason, job.case, job.case.expected, tests=1, seconds=0.01,
                   rule=reason.split(":")[0])


def by_symptom(job: GateJob) -> Verdict:
    """Errors, crashes and hangs are bugs; mismatches are dismissed by the pass contracts."""
    assert job.case.expected is not None
    if job.case.expected.symptom is Symptom.MISMATCH:
        return not_a_bug(job, "contract: FakePass fails only on IR its pipeline position never has")
    return bug(job)


class Probe(QuietMonitor):
    """Calls ``step(campaign)`` on every loop iteration while fuzzing; True stops the campaign."""

    def __init__(self, step: Callable[[Campaign], bool]) -> None:
        self.step = step
        self.campaign: Campaign | None = None
        self.messages: list[str] = []

    def update(self, stats: CampaignStats) -> None:
        c = self.campaign
        if c is not None and stats.phase == "fuzzing" and c.executor is not None and self.step(c):
            c.stop()

    def message(self, text: str) -> None:
        self.messages.append(text)


class Recording:
    """Wraps an executor and records, in the campaign's order, every task given to a worker and every
    event the campaign took in (an event is recorded when the campaign receives it, before it feeds)."""

    def __init__(self, inner: WorkerPool, tasks: list[Task | WorkerEvent]) -> None:
        self.inner, self.tasks = inner, tasks

    @property
    def restarts(self) -> int:
        return self.inner.restarts

    def idle(self) -> Iterator[Any]:
        for w in self.inner.idle():
            yield SimpleNamespace(index=w.index, submit=lambda task, info, w=w: self._submit(w, task, info))

    def _submit(self, w: Any, task: Task, info: Any) -> None:
        self.tasks.append(task)
        w.submit(task, info)

    def poll(self, timeout: float) -> Any:
        events = self.inner.poll(timeout)
        self.tasks.extend(events)
        return events

    def pids(self) -> list[int | None]:
        return self.inner.pids()

    def close(self) -> None:
        self.inner.close()


class NoHang:
    """A scheduler that never mutates an entry whose script hangs."""

    name = "no-hang"

    def choose(self, entries: Sequence[CorpusEntry], rng: Any) -> CorpusEntry:
        usable = [e for e in entries if "HANG" not in e.script]
        return usable[rng.randrange(len(usable))]

    def learn(self, entry: CorpusEntry, features: Any) -> None:
        """Nothing to learn."""


pytestmark = pytest.mark.usefixtures("restore_signals")


def config(run_limit: float = 30.0) -> Config:
    """A short campaign of the TIR level (the fake worker answers every task with a TIR case)."""
    cfg = Config()
    cfg.levels = parse_levels("tir,graph", cfg.levels)
    cfg.fuzz.coverage = "passes"
    cfg.fuzz.minutes = 0.5  # a safety net: every test stops its campaign long before
    cfg.fuzz.snapshot_period = 0.5
    cfg.oracles.confirm_crashes = False
    cfg.timeouts.run = run_limit
    return cfg


def loader_of(scripts: list[str], calls: list[Path] | None = None) -> SeedLoader:
    def load(model: Path, differential: bool, timeout: float, max_seeds: int, limits: Limits) -> ModelSeeds:
        if calls is not None:
            calls.append(model)
        return ModelSeeds(model, seeds=[(s, f"op{i}") for i, s in enumerate(scripts)])

    return load


def campaign(out: Path, pool: Path, scripts: list[str], gate: FakeGate, until: Callable[[Campaign], bool], *,
             target: Callable[..., None] = fake_worker_main, lines: int = 4, cfg: Config | None = None,
             resume: bool = False, tasks: list[Task | WorkerEvent] | None = None, setup_seconds: float = 0.0,
             loads: list[Path] | None = None) -> tuple[Campaign, Probe]:
    """A campaign on the fake worker with ``scripts`` as seeds, stopped when ``until`` holds."""

    def executor(jobs: int, settings: WorkerSettings, limits: dict[Stage, float]) -> Any:
        fake = SimpleNamespace(lines=lines, log_dir=settings.log_dir, setup_seconds=setup_seconds)
        pool_ = WorkerPool(jobs, fake, limits, target=target)
        return pool_ if tasks is None else Recording(pool_, tasks)

    probe = Probe(until)
    camp = Campaign(out, pool, cfg or config(), resume=resume, monitor=probe, executor=executor,
                    seed_loader=loader_of(scripts, loads), gate=gate)
    probe.campaign = camp
    return camp, probe


def query(db: Path, sql: str) -> list[tuple[Any, ...]]:
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def findings_rows(c: Campaign) -> list[Any]:
    return c.db.findings()


def sigkill(w: WorkerHandle) -> int:
    """SIGKILL a worker from outside, as the OOM killer or an operator would; its pid."""
    assert w.proc.pid is not None
    os.kill(w.proc.pid, signal.SIGKILL)
    return w.proc.pid


def events(out: Path, kind: str) -> list[dict[str, Any]]:
    return [json.loads(d) for (d,) in query(out / "campaign.db", f"SELECT detail FROM events WHERE kind='{kind}'")]


# --- tests -------------------------------------------------------------------------------------------
def test_passes_coverage_needs_no_collector(tmp_path: Path) -> None:
    assert prepare_collector("passes", tmp_path, [], str(tmp_path / "cache"), "blocks") is None
    assert not list(tmp_path.iterdir())


def test_new_features_are_kept_without_their_unchanged_passes(tmp_path: Path, pool: Path) -> None:
    out = tmp_path / "camp"
    c, _ = campaign(out, pool, ["a"], FakeGate(by_symptom), lambda c: len(c.corpus) >= 4,
                    target=passes_worker_main, lines=3)
    stats = c.run()
    assert stats.corpus == 4 and stats.coverage == 4  # line:a, line:line0..2
    seed = entry_id("tir", "a")
    rows = query(out / "campaign.db",
                 "SELECT id, parent, passes, coverage_gain, path, mutators FROM corpus ORDER BY rowid")
    assert rows[0][0] == seed and rows[0][3] == 0
    seen = {"a"}
    for sid, parent, passes, gain, path, mutators in rows[1:]:
        script = (out / path).read_text()
        assert path == f"corpus/{sid}.py" and (out / "corpus" / f"{sid}.passes.json").read_text() == passes
        kept = [p.name for p in passes_from_json(passes)]
        assert len(kept) == 1 and kept[0] in FUZZED_PASS  # the pass that left the IR unchanged is gone
        assert sid == entry_id("tir", script, passes_from_json(passes))
        lines = set(script.splitlines())
        assert gain == len(lines - seen) > 0  # kept for features no earlier entry reached
        seen |= lines
        assert parent in {r[0] for r in rows} and json.loads(mutators) == ["FakeAppend"]
    assert {e.seed_id for e in c.corpus.entries} == {r[0] for r in rows}


def test_no_new_features_counts_against_the_parent(tmp_path: Path, pool: Path) -> None:
    """Tzer's tolerance: every mutant without new coverage adds one to its parent's failure counter,
    which goes back to the worker with the next task on that parent sent after the answer."""
    log: list[Task | WorkerEvent] = []
    c, _ = campaign(tmp_path / "camp", pool, ["a"], FakeGate(by_symptom), lambda c: c.stats.execs >= 15,
                    lines=1, tasks=log)
    stats = c.run()
    assert len(c.corpus) == 2  # the seed and its one mutant with the only new line
    # one execution of the seed, one kept mutant; every other mutant failed its parent
    assert sum(e.failures for e in c.corpus.entries) == stats.execs - 2
    seed, mutant = c.corpus.entries
    # Replay what the campaign received and sent, in its order: a task carries its parent's counter
    # as the answers received before it was sent left it (the worker runs one task while the next
    # waits in its pipe, so a task may be sent before the answer of the one before it).
    failures = {seed.script: 0, mutant.script: 0}
    parent_script = {seed.seed_id: seed.script, mutant.seed_id: mutant.script}
    carried: dict[str, list[int]] = {seed.script: [], mutant.script: []}
    answers, kept = 0, False
    for item in log:
        if isinstance(item, FuzzTask):
            assert item.failures == failures[item.script]
            carried[item.script].append(item.failures)
        elif isinstance(item, WorkerEvent) and item.what == "result" and item.tc is not None:
            answers += 1
            if item.tc.task == "fuzz":
                parent = parent_script[item.tc.parent or ""]
                first = item.tc.script == mutant.script and not kept  # the one mutant with new coverage
                kept = kept or first
                failures[parent] = 0 if first else failures[parent] + 1
    assert answers == stats.execs
    assert failures == {seed.script: seed.failures, mutant.script: mutant.failures}
    assert max(carried[seed.script] + carried[mutant.script]) >= 3


def test_error_is_filed_once_pending_then_judged_a_bug(tmp_path: Path, pool: Path) -> None:
    out = tmp_path / "camp"
    gate = FakeGate(by_symptom, hold=True)
    seen: dict[str, Any] = {}

    def step(c: Campaign) -> bool:
        rows = findings_rows(c)
        if gate.hold and rows and rows[0].count >= 3:
            seen["rows"] = rows
            seen["meta"] = FindingMeta.load(out / "findings" / rows[0].signature)
            seen["stats"] = (c.stats.pending, dict(c.stats.unique), dict(c.stats.findings))
            seen["submitted"] = list(gate.submitted)
            gate.hold = False
            return False
        return not gate.hold and c.stats.findings["exception"] >= 2

    c, probe = campaign(out, pool, ["a", "ERROR"], gate, step)
    stats = c.run()
    (row,) = seen["rows"]  # one finding for every occurrence of the same raw signature
    assert (row.symptom, row.stage, row.pass_name, row.verdict) == ("exception", "pass", "FakePass", PENDING)
    assert seen["meta"].verdict == PENDING and seen["meta"].observation.symptom is Symptom.EXCEPTION
    assert seen["submitted"] == [row.signature]  # judged once, not per occurrence
    assert seen["stats"] == (1, {}, {})  # pending: not a bug yet
    folder = out / "findings" / row.signature
    files = {p.name for p in folder.iterdir()}
    assert {"ir.py", "passes.json", "case.json", "repro.py", "log.txt", "meta.json"} <= files

    meta = FindingMeta.load(folder)
    assert (meta.verdict, meta.root_signature, meta.culprit) == (BUG, ROOTS[Symptom.EXCEPTION], ["FakePass"])
    db = query(out / "campaign.db", "SELECT signature, verdict, root, count FROM findings")
    assert len(db) == 1 and db[0][:3] == (row.signature, BUG, ROOTS[Symptom.EXCEPTION]) and db[0][3] > row.count
    # one occurrence per execution that raised, before and after the verdict
    assert query(out / "campaign.db", "SELECT count FROM exec_summary WHERE symptom='exception'") == [(db[0][3],)]
    assert gate.submitted == [row.signature]
    assert stats.unique == {"exception": 1} and stats.pending == 0 and not stats.not_a_bug
    assert stats.findings["exception"] >= 2  # the verdict, then every later occurrence
    line = f"new bug {ROOTS[Symptom.EXCEPTION]} (culprit FakePass): exception at"
    assert any(m.startswith(line) for m in probe.messages)


def test_bugs_count_once_per_root(tmp_path: Path, pool: Path) -> None:
    """Mismatches reached through different fuzzed passes are different raw signatures; the gate files
    them under one root: one unique bug."""
    out = tmp_path / "camp"
    gate = FakeGate(bug)

    def step(c: Campaign) -> bool:
        rows = findings_rows(c)
        return len(rows) >= 3 and all(r.verdict == BUG for r in rows)

    c, _ = campaign(out, pool, ["MISMATCH"], gate, step, target=passes_worker_main)
    stats = c.run()
    rows = query(out / "campaign.db", "SELECT signature, symptom, verdict, root FROM findings")
    assert len(rows) == 3 and {r[1:] for r in rows} == {("mismatch", BUG, ROOTS[Symptom.MISMATCH])}
    assert sorted(gate.submitted) == sorted(r[0] for r in rows)
    assert stats.unique == {"mismatch": 1} and stats.findings["mismatch"] >= 3
    text = render(out)
    assert text.count(ROOTS[Symptom.MISMATCH]) == 1 and "mismatch 1" in text


def render(out: Path, show_all: bool = False) -> str:
    console = Console(record=True, width=250, file=open(os.devnull, "w"))  # noqa: SIM115
    console.print(campaign_summary(out, show_all))
    return console.export_text()


def test_not_a_bug_is_counted_by_reason_never_as_a_bug(tmp_path: Path, pool: Path) -> None:
    out = tmp_path / "camp"

    def step(c: Campaign) -> bool:
        rows = findings_rows(c)
        return len(rows) == 2 and all(r.verdict != PENDING for r in rows) and c.stats.execs > 10

    c, _ = campaign(out, pool, ["a", "ERROR", "MISMATCH"], FakeGate(by_symptom), step)
    stats = c.run()
    assert stats.not_a_bug == {"contract": 1}
    assert stats.unique == {"exception": 1} and "mismatch" not in stats.findings
    ((sig, verdict, reason, root),) = query(out / "campaign.db", "SELECT signature, verdict, verdict_reason, root "
                                                                 "FROM findings WHERE symptom='mismatch'")
    assert verdict == NOT_A_BUG and reason.startswith("contract:") and root is None
    meta = FindingMeta.load(out / "findings" / sig)
    assert meta.verdict == NOT_A_BUG and not meta.is_bug and meta.verdict_reason == reason

    # `seedzer status`: bugs by root, not bugs by reason
    text = render(out)
    assert "exception 1" in text and ROOTS[Symptom.EXCEPTION] in text and "contract 1" in text
    assert "filing gate time" in text and "% of worker time" in text  # the gate's share of the campaign
    assert sig not in text and "mismatch" not in text
    bug_sig = query(out / "campaign.db", "SELECT signature FROM findings WHERE verdict='bug'")[0][0]
    assert f"findings/{bug_sig}/repro.py" in text
    every = render(out, show_all=True)
    assert sig in every and "not-a-bug (contract)" in every and "bug (witness)" in every  # the deciding rules


def test_invalid_counts_as_invalid(tmp_path: Path, pool: Path) -> None:
    out = tmp_path / "camp"
    c, _ = campaign(out, pool, ["INVALID"], FakeGate(by_symptom), lambda c: c.stats.execs >= 8)
    stats = c.run()
    assert stats.invalid == stats.execs >= 8
    assert len(c.corpus) == 1  # new lines, but an invalid test case is never kept
    assert not query(out / "campaign.db", "SELECT * FROM findings")
    assert query(out / "campaign.db", "SELECT symptom, stage, count FROM exec_summary") == [
        ("invalid", "mutate", stats.execs)]


def test_findings_are_filed_with_the_case_their_worker_ran(tmp_path: Path, pool: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """Filing never plans a case again: the campaign process cannot plan here (its workers, forked
    from the zygote, can), and every finding's ``case.json`` is the case its worker announced, with
    the finding's expectation, tolerances and time limit, as planning it anew made it."""
    import sys

    from seedzer.finding.tir.folder import new_case
    from seedzer.passes.tir import contracts

    real_plan = contracts.plan

    def no_plan(*_args: Any, **_kwargs: Any) -> Any:
        raise AssertionError("the campaign process planned a case")

    for module in list(sys.modules.values()):
        if getattr(module, "plan", None) is real_plan:
            monkeypatch.setattr(module, "plan", no_plan)
    log: list[Task | WorkerEvent] = []
    out = tmp_path / "camp"
    c, _ = campaign(out, pool, ["a", "ERROR", "CRASH"], FakeGate(by_symptom),
                    lambda c: {r.symptom for r in findings_rows(c)} >= {"exception", "crash"} and c.stats.execs >= 8,
                    target=passes_worker_main, tasks=log)
    c.run()
    monkeypatch.undo()
    announced = {e.tc.tc_id: e.tc for e in log if isinstance(e, WorkerEvent) and e.tc is not None and e.tc.announced}
    rows = query(out / "campaign.db", "SELECT signature, symptom FROM findings")
    assert {symptom for _, symptom in rows} >= {"exception", "crash"}
    for signature, _ in rows:
        folder = out / "findings" / signature
        meta = FindingMeta.load(folder)
        filed = Case.from_json(json.loads((folder / "case.json").read_text()))
        tc = announced[meta.testcase]
        ran = tc.ran()
        assert ran is not None and ran.script is tc.script  # one object: the script crossed the pipe once
        assert (filed.script, filed.steps, filed.input_seed) == (ran.script, ran.steps, ran.input_seed)
        assert any(s.name in FUZZED_PASS for s in filed.steps)
        settings = c.filing.settings
        assert filed == new_case(tc.script, tc.passes, meta.observation, settings.settings, settings.perf_factor,
                                 settings.perf_repeats)


def test_crash_death_is_a_crash_finding(tmp_path: Path, pool: Path) -> None:
    out = tmp_path / "camp"
    c, _ = campaign(out, pool, ["a", "CRASH"], FakeGate(by_symptom),
                    lambda c: bool(c.stats.unique) and c.stats.execs >= 5)
    stats = c.run()
    ((sig, symptom, stage, pass_name, verdict),) = query(
        out / "campaign.db", "SELECT signature, symptom, stage, pass, verdict FROM findings")
    assert (symptom, stage, pass_name, verdict) == ("crash", "build", "FakePass", BUG)
    meta = FindingMeta.load(out / "findings" / sig)
    assert meta.observation.signal == signal.SIGSEGV and "SIGSEGV" in meta.observation.message
    deaths = events(out, "worker_restart")
    assert deaths and all(d["kind"] == "signal" and d["signal"] == signal.SIGSEGV for d in deaths)
    assert not events(out, "worker_killed")
    assert stats.restarts == len(deaths) and stats.unique == {"crash": 1}


def test_external_sigkill_is_an_event_never_a_finding(tmp_path: Path, pool: Path) -> None:
    """A worker SIGKILLed from outside (the OOM killer, an operator) while it runs a test case, or
    between two, is an event with memory figures and is restarted; nothing is filed."""
    out = tmp_path / "camp"
    kills: list[tuple[int, str]] = []

    def step(c: Campaign) -> bool:
        pool_ = c.executor
        assert isinstance(pool_, WorkerPool)
        w = pool_.workers[0]
        if not kills and w.current is not None and w.current.announced and "HANG" in w.current.script:
            time.sleep(0.2)  # well inside the run stage
            kills.append((sigkill(w), "hang"))
        elif len(kills) == 1 and c.stats.execs >= 5 and w.ready:
            kills.append((sigkill(w), "any"))  # whatever it is doing: a test case or waiting for one
        return len(kills) == 2 and pool_.restarts == 2 and c.stats.execs >= 10

    c, probe = campaign(out, pool, ["a", "HANG"], FakeGate(by_symptom), step)
    c.feeder.schedulers["tir"] = NoHang()
    stats = c.run()
    killed = events(out, "worker_killed")
    assert len(killed) == 2 and [k["signal"] for k in killed] == [signal.SIGKILL] * 2
    first = killed[0]
    assert first["kind"] == "killed" and first["stage"] == "run" and first["testcase"] is not None
    assert isinstance(first["rss_mb"], float) and isinstance(first["available_mb"], float)
    assert not first["during_setup"]
    assert not events(out, "worker_restart")
    assert not query(out / "campaign.db", "SELECT * FROM findings") and not stats.findings
    assert stats.restarts == 2 and stats.execs >= 10  # the campaign went on after each kill
    pids = [e["pids"][0] for e in events(out, "workers")]
    assert [pid for pid, _ in kills] == pids[:2] and len(set(pids)) == 3  # a new worker after each kill
    assert sum("killed by SIGKILL" in m and "not a TVM bug" in m for m in probe.messages) == 2


def test_a_seed_waiting_behind_a_killed_test_case_is_executed_later(tmp_path: Path, pool: Path) -> None:
    """A worker gets its next task while it runs one; when it dies, a seed execution that waited in
    its pipe goes back in line (it was never run) and the restarted worker runs it."""
    out = tmp_path / "camp"
    log: list[Task | WorkerEvent] = []
    kills: list[int] = []

    def step(c: Campaign) -> bool:
        pool_ = c.executor
        assert isinstance(pool_, Recording) and isinstance(pool_.inner, WorkerPool)
        w = pool_.inner.workers[0]
        if not kills and w.current is not None and w.current.announced and "HANG" in w.current.script \
                and w.queued:
            kills.append(sigkill(w))
        waiting = next((e for e in c.corpus.entries if e.script == "b"), None)
        return bool(kills) and waiting is not None and waiting.executed and c.stats.execs >= 3

    c, _ = campaign(out, pool, ["HANG", "b"], FakeGate(by_symptom), step, tasks=log)
    c.feeder.schedulers["tir"] = NoHang()
    c.run()
    execs = [t.script for t in log if isinstance(t, ExecTask)]
    assert execs == ["HANG", "b", "b"]  # sent behind the hang, dropped with the worker, sent again
    answered = [e.tc.script for e in log if isinstance(e, WorkerEvent) and e.what == "result" and e.tc is not None
                and e.tc.task == "exec"]
    assert answered == ["b"] and all(e.executed for e in c.corpus.entries if "HANG" not in e.script)


def test_a_hang_is_filed_as_a_hang(tmp_path: Path, pool: Path) -> None:
    out = tmp_path / "camp"
    c, _ = campaign(out, pool, ["HANG"], FakeGate(by_symptom), lambda c: bool(c.stats.unique),
                    cfg=config(run_limit=1.0))
    stats = c.run()
    ((sig, symptom, stage, verdict),) = query(out / "campaign.db", "SELECT signature, symptom, stage, verdict "
                                                                   "FROM findings")
    assert (symptom, stage, verdict) == ("hang", "run", BUG)
    obs = FindingMeta.load(out / "findings" / sig).observation
    assert obs.seconds is not None and obs.seconds >= 1.0 and "exceeded" in obs.message
    (death,) = events(out, "worker_restart")
    assert death["kind"] == "timeout" and not events(out, "worker_killed")
    assert stats.unique == {"hang": 1}


def test_a_mutant_over_its_relative_limit_is_slow_never_a_finding(tmp_path: Path, pool: Path) -> None:
    """The hanging seed runs with the full limit (a hang finding, its cost measured at 1 s); its
    mutants get 0.3 s (relative 0.3 x 1 s) and are stopped there: counted as slow, never filed."""
    out = tmp_path / "camp"
    cfg = config(run_limit=1.0)
    cfg.timeouts.relative, cfg.timeouts.floor, cfg.timeouts.hang_share = 0.3, 0.1, 0.0
    c, _ = campaign(out, pool, ["HANG"], FakeGate(by_symptom), lambda c: c.stats.slow >= 2, cfg=cfg)
    stats = c.run()
    deaths = events(out, "worker_restart")
    assert deaths[0]["kind"] == "timeout" and {d["kind"] for d in deaths[1:]} == {"slow"}
    # 0.3 x the parent's measured cost (the hang's: 1 s, a little more on a loaded machine, where a
    # mutant's own measured cost can also be the parent), never below the floor nor up to the stage's 1 s
    said = r"run stage exceeded the test case's relative limit ([\d.]+)s"
    limits = [re.match(said, d["message"]) for d in deaths[1:]]
    assert all(m is not None and 0.1 <= float(m.group(1)) < 1.0 for m in limits), [d["message"] for d in deaths]
    ((count,),) = query(out / "campaign.db", "SELECT COUNT(*) FROM findings")
    assert count == 1 and stats.unique == {"hang": 1}
    assert stats.slow >= 2 and stats.execs >= 1 + stats.slow
    slow_rows = query(out / "campaign.db", "SELECT count FROM exec_summary WHERE symptom = 'slow'")
    assert sum(n for (n,) in slow_rows) == stats.slow
    assert f"({stats.slow} of them slow test cases stopped at their relative limit)" in render(out)


def test_resume_judges_pending_findings_and_restores_verdicts(tmp_path: Path, pool: Path) -> None:
    out = tmp_path / "camp"
    loads: list[Path] = []
    # 1: the gate never answers (the campaign is stopped, as if killed before its verdict)
    held = FakeGate(by_symptom, hold=True)
    c, _ = campaign(out, pool, ["a", "ERROR"], held, lambda c: len(findings_rows(c)) == 1 and c.stats.execs > 4,
                    loads=loads)
    first = c.run()
    ((sig, verdict),) = query(out / "campaign.db", "SELECT signature, verdict FROM findings")
    assert verdict == PENDING and held.submitted == [sig] and first.pending == 1
    corpus = {r[0] for r in query(out / "campaign.db", "SELECT id FROM corpus")}

    # 2: --resume submits the pending candidate again before fuzzing; its verdict lands
    gate = FakeGate(by_symptom, hold=True)
    waiting: list[int] = []

    def step(c: Campaign) -> bool:
        if gate.hold:  # shown as pending until the verdict comes
            waiting.append(c.stats.pending)
            gate.hold = False
        return bool(c.stats.unique) and c.stats.session_execs >= 3

    c, _ = campaign(out, pool, ["a", "ERROR"], gate, step, resume=True, loads=loads)
    second = c.run()
    assert waiting == [1]
    assert gate.submitted[0] == sig and gate.submitted.count(sig) == 1
    assert query(out / "campaign.db", "SELECT verdict, root FROM findings") == [(BUG, ROOTS[Symptom.EXCEPTION])]
    assert FindingMeta.load(out / "findings" / sig).verdict == BUG
    assert second.unique == {"exception": 1} and second.pending == 0
    assert second.elapsed > first.elapsed and second.execs == first.execs + second.session_execs
    assert corpus <= {e.seed_id for e in c.corpus.entries} and second.corpus == len(c.corpus)

    # 3: a judged finding is restored from the database, never judged again
    again = FakeGate(by_symptom)
    c, _ = campaign(out, pool, ["a", "ERROR"], again, lambda c: True, resume=True, loads=loads)
    third = c.run()
    assert sig not in again.submitted
    assert third.unique == {"exception": 1} and third.findings["exception"] >= second.findings["exception"]
    assert len(loads) == 1  # the pool's model was loaded once, by the first run
    assert len(events(out, "resume")) == 2


def test_a_worker_killed_while_setting_up_is_restarted(tmp_path: Path, pool: Path) -> None:
    out = tmp_path / "camp"
    kills: list[int] = []

    def step(c: Campaign) -> bool:
        pool_ = c.executor
        assert isinstance(pool_, WorkerPool)
        w = pool_.workers[0]
        if len(kills) < 6 and not w.ready and w.proc.pid not in kills and w.proc.is_alive():
            kills.append(sigkill(w))
        return len(kills) == 6 and c.stats.execs >= 3

    c, _ = campaign(out, pool, ["a"], FakeGate(by_symptom), step, target=slow_setup_main, setup_seconds=0.5)
    stats = c.run()  # more set-up deaths than the limit, but by SIGKILL: never fatal
    killed = events(out, "worker_killed")
    assert len(killed) == 6 and all(k["during_setup"] and k["testcase"] is None for k in killed)
    assert all(isinstance(k["rss_mb"], float) and isinstance(k["available_mb"], float) for k in killed)
    assert stats.restarts == 6 and stats.execs >= 3


@pytest.mark.parametrize(("target", "message"), [
    (crashing_setup_main, "worker 0 dies while setting up: killed by signal SIGSEGV (5 times in a row)"),
    (exiting_setup_main, "worker 0 dies while setting up: exited with status 3 (5 times in a row)"),
    (fatal_setup_main, "worker 0 cannot start: RuntimeError: no coverage collector here"),
])
def test_a_setup_that_fails_stops_the_campaign_with_its_reason(tmp_path: Path, pool: Path,
                                                               target: Callable[..., None], message: str) -> None:
    out = tmp_path / "camp"
    c, _ = campaign(out, pool, ["a"], FakeGate(by_symptom), lambda c: False, target=target)
    with pytest.raises(CampaignError) as info:
        c.run()
    assert str(info.value) == message
    assert not query(out / "campaign.db", "SELECT * FROM findings")


def test_snapshots_record_cumulative_stage_seconds_across_a_resume(tmp_path: Path, pool: Path) -> None:
    out = tmp_path / "camp"
    c, _ = campaign(out, pool, ["a", "b"], FakeGate(by_symptom), lambda c: c.stats.execs >= 12)
    c.run()
    first = [json.loads(t) for (t,) in query(out / "campaign.db", "SELECT timings FROM snapshots ORDER BY id")]
    last = first[-1]
    assert last["busy"] > 0 and last["cpu"] > 0 and last["bookkeeping"] > 0 and "mutate" in last
    assert "worker_busy" not in last and last["other"] <= last["busy"]
    for a, b in itertools.pairwise(first):  # cumulative: a window is a difference
        assert all(b.get(k, 0.0) >= v for k, v in a.items() if k != "other")
    c, _ = campaign(out, pool, ["a", "b"], FakeGate(by_symptom), lambda c: c.stats.session_execs >= 3, resume=True)
    c.run()
    (after,) = query(out / "campaign.db", "SELECT timings FROM snapshots ORDER BY id DESC LIMIT 1")
    assert json.loads(after[0])["busy"] > last["busy"]  # restored, then added to


def test_a_campaign_seeded_with_another_campaigns_late_entries(tmp_path: Path, pool: Path) -> None:
    from seedzer.campaign.seeds import imported_entries

    src = tmp_path / "src"
    c, _ = campaign(src, pool, ["a", "b"], FakeGate(by_symptom), lambda c: len(c.corpus) >= 6)
    c.run()
    late = imported_entries(src, 0.5)
    assert 3 <= len(late) < len(c.corpus)
    out = tmp_path / "late"
    probe = Probe(lambda c: c.stats.execs >= len(late) + 3)
    camp = Campaign(out, src, config(), monitor=probe, gate=FakeGate(by_symptom), imported=late,
                    executor=lambda jobs, settings, limits: WorkerPool(
                        jobs, SimpleNamespace(lines=4, log_dir=settings.log_dir, setup_seconds=0.0), limits,
                        target=fake_worker_main))
    probe.campaign = camp
    stats = camp.run()
    rows = query(out / "campaign.db", "SELECT id, passes, mutators FROM corpus ORDER BY rowid")
    assert [r[0] for r in rows[:len(late)]] == [e.seed_id for e in late]
    assert all(json.loads(r[2]) == ["imported"] for r in rows[:len(late)])
    assert [r[1] for r in rows[:len(late)]] == [e.passes for e in late]
    assert stats.loaded_models == 0 and not query(out / "campaign.db", "SELECT * FROM models")
    assert stats.execs >= len(late) + 3


def test_passes_triggered_are_counted_per_test_case_shown_and_kept_across_a_resume(tmp_path: Path,
                                                                                  pool: Path) -> None:
    out = tmp_path / "camp"
    c, _ = campaign(out, pool, ["a\nT:tirx.Simplify", "b"], FakeGate(by_symptom), lambda c: c.stats.execs >= 12)
    c.run()
    counts = {(lv, p): (ran, hit) for lv, p, ran, hit in query(out / "campaign.db", "SELECT * FROM pass_triggers")}
    execs = sum(n for (n,) in query(out / "campaign.db", "SELECT count FROM level_summary"))
    assert counts[("tir", "FakePass")] == (execs, 0)  # every test case ran it, none triggered it
    ran, hit = counts[("tir", "tirx.Simplify")]
    assert ran == hit >= 1  # the seed's own run, and every mutant of it
    assert query(out / "campaign.db", "SELECT feature FROM coverage_features WHERE feature LIKE 'triggered/%'") == [
        ("triggered/tir/tirx.Simplify",)]
    (last,) = query(out / "campaign.db", "SELECT triggers FROM snapshots ORDER BY id DESC LIMIT 1")
    assert json.loads(last[0]) == {"tir": [2, 1, 1 if hit >= 10 else 0]}
    console = Console(record=True, width=200)
    console.print(campaign_summary(out))
    shown = console.export_text()
    assert "Optimizations triggered" in shown and "tirx.Simplify" in shown and "FakePass" in shown
    c, _ = campaign(out, pool, ["a\nT:tirx.Simplify", "b"], FakeGate(by_symptom),
                    lambda c: c.stats.session_execs >= 3, resume=True)
    c.run()
    (after,) = query(out / "campaign.db", "SELECT ran FROM pass_triggers WHERE pass = 'FakePass'")
    assert after[0] > execs  # restored, then added to


@pytest.mark.parametrize("energy", ["coverage", "rarity"])
def test_only_rarity_energy_tells_the_mutators_what_an_entry_triggered(tmp_path: Path, pool: Path,
                                                                        energy: str) -> None:
    cfg = config()
    cfg.fuzz.energy = energy
    log: list[Task | WorkerEvent] = []
    c, _ = campaign(tmp_path / "camp", pool, ["a\nT:tirx.Simplify"], FakeGate(by_symptom),
                    lambda c: c.stats.execs >= 6, cfg=cfg, tasks=log)
    c.run()
    steered = {task.triggered for task in log if isinstance(task, FuzzTask)}
    if energy == "rarity":  # (a task chosen before the seed's own run came back knows nothing yet)
        assert ("tirx.Simplify",) in steered and steered <= {(), ("tirx.Simplify",)}
    else:
        assert steered == {()}
