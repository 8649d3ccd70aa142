"""Workers under chaos: a real campaign whose workers are SIGKILLed at random, then the campaign itself.

Usage::

    python benchmarks/chaos.py [--pool DIR] [--minutes 4] [--chaos-minutes 3] [--every 3] [--jobs 1] [--out DIR]
                               [--levels graph] [--load-kills N]

Without ``--pool`` it generates 6 models with ``seedzer generate --heuristic basic`` in a temporary
directory. It starts ``seedzer fuzz`` on them (default coverage, ``--minutes`` of budget). While the
campaign loads its pool, it SIGKILLs one of its running load attempts every ``--every`` seconds, up to
``--load-kills`` of them (default: half the pool's models; a load attempt is a child of the campaign's
zygote whose output does not go to the campaign's logs, which a gate job's does). Then, for
``--chaos-minutes`` from the moment its workers run, it SIGKILLs one of its current fuzz workers every
``--every`` seconds (the pids the campaign records in its ``workers`` events, checked in /proc to be
live descendants of the campaign; never the gate, the loader or the confirmer). Then it SIGKILLs the
campaign itself and resumes it with ``--resume`` until the budget is used (``--levels`` is passed to
every ``seedzer fuzz``: ``--levels graph`` makes a graph-only campaign). It prints what happened
and checks:

* the campaign never stopped by itself before its budget was used (no early "finishing"), and the
  resumed campaign's recorded time reaches the budget;
* every kill is a ``worker_killed`` event (with memory figures), none is a ``crash`` finding;
* every corpus row of campaign.db has its ``corpus/<id><suffix>`` (its level's) and every finding its
  ``findings/<signature>/meta.json``;
* no corpus entry was quarantined (a SIGKILL is never the entry's fault) and ``PRAGMA integrity_check``
  of campaign.db says ``ok``;
* every pool model is loaded in the end (campaign.db ``models``: ``ok``, or ``failed`` for a reason of
  its own), none lost to a killed load: the resume loads again what a kill interrupted.

Exit status 0 when every check holds, 1 otherwise. ``tests/integration/test_campaign_chaos.py`` runs
it with the issue's numbers (100 kills in 10 minutes).
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import click

from seedzer.campaign.seeds import list_pool
from seedzer.level_table import level_entry

NEAR_KILL_SECONDS = 2.0
"""A crash finding first seen this soon after a kill is reported as possibly caused by it."""


def seedzer(*args: str) -> list[str]:
    """The command line of a Seedzer CLI command run by this interpreter."""
    return [sys.executable, "-m", "seedzer.cli", *args]


def make_pool(root: Path, count: int = 6, heuristic: str = "basic", seed: int = 0) -> Path:
    """Generate a pool of ``count`` models with ``seedzer generate``; returns its directory."""
    done = subprocess.run(seedzer("generate", "--heuristic", heuristic, "--count", str(count), "--out", str(root),
                                  "--seed", str(seed), "--no-progress"), capture_output=True, text=True, timeout=1800)
    if done.returncode != 0:
        raise RuntimeError(f"seedzer generate failed ({done.returncode}): {done.stderr.strip()[-2000:]}")
    return root


def query(db: Path, sql: str, args: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Read campaign.db without writing it (a running campaign keeps writing: WAL readers are fine)."""
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30)
    try:
        return con.execute(sql, args).fetchall()
    finally:
        con.close()


def _stat(pid: int) -> tuple[str, int] | None:
    """(state, parent pid) of a process from /proc, None when it is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text[text.rfind(")") + 2:].split()  # the command name may hold spaces and parentheses
    return fields[0], int(fields[1])


def alive(pid: int) -> bool:
    """True while ``pid`` runs (not a zombie)."""
    st = _stat(pid)
    return st is not None and st[0] not in ("Z", "X")


def descends_from(pid: int, ancestor: int) -> bool:
    """True when ``ancestor`` is a parent, grandparent... of ``pid`` (workers are children of the
    campaign's zygote, itself a child of the campaign)."""
    seen = 0
    while pid > 1 and seen < 64:
        st = _stat(pid)
        if st is None:
            return False
        pid = st[1]
        if pid == ancestor:
            return True
        seen += 1
    return False


def descendants(root: int) -> list[int]:
    """Live descendants of ``root`` (from /proc)."""
    parent: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and (st := _stat(int(entry.name))) is not None and st[0] not in ("Z", "X"):
            parent[int(entry.name)] = st[1]
    out, frontier = [], {root}
    while frontier:
        kids = {p for p, pp in parent.items() if pp in frontier}
        out.extend(sorted(kids))
        frontier = kids
    return out


def _writes_into(pid: int, folder: Path) -> bool:
    """Whether process ``pid``'s output (fd 1 or 2) goes to a file in ``folder``."""
    for fd in (1, 2):
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if target.startswith(str(folder.resolve()) + os.sep):
            return True
    return False


def load_pids(campaign: int, out: Path) -> list[int]:
    """The campaign's running load attempts: children of its zygote (a child of the campaign) whose output
    does not go to the campaign's logs (a gate job's does)."""
    kids = {p for p in descendants(campaign) if (st := _stat(p)) is not None and st[1] == campaign}
    return [p for p in descendants(campaign) if (st := _stat(p)) is not None and st[1] in kids
            and not _writes_into(p, out / "logs")]


def worker_pids(db: Path, campaign: int) -> list[int]:
    """The campaign's current fuzz workers: the pids of its last ``workers`` event that are live
    descendants of the campaign process (a stale or reused pid is never signalled)."""
    try:
        rows = query(db, "SELECT detail FROM events WHERE kind = 'workers' ORDER BY id DESC LIMIT 1")
    except sqlite3.Error:
        return []
    if not rows:
        return []
    pids = [p for p in json.loads(rows[0][0]).get("pids", []) if isinstance(p, int)]
    return [p for p in pids if alive(p) and descends_from(p, campaign)]


@dataclass
class Run:
    """One ``seedzer fuzz`` process of the benchmark."""

    role: str  # "chaos" (killed by the benchmark) or "resume"
    returncode: int | None
    seconds: float
    log: Path
    stopped_by_itself: bool = False


@dataclass
class ChaosReport:
    """What the benchmark did and what the campaign directory shows afterwards."""

    out: Path
    budget: float
    kills: int = 0
    kill_times: list[float] = field(default_factory=list)
    kill_misses: int = 0
    load_kills: int = 0
    models: list[str] = field(default_factory=list)
    model_status: dict[str, str] = field(default_factory=dict)
    models_lost: list[str] = field(default_factory=list)
    runs: list[Run] = field(default_factory=list)
    elapsed: float = 0.0
    early: list[str] = field(default_factory=list)
    worker_killed: int = 0
    killed_with_memory: int = 0
    killed_during_setup: int = 0
    worker_restart: dict[str, int] = field(default_factory=dict)
    resumes: int = 0
    execs: int = 0
    corpus: int = 0
    findings: dict[str, int] = field(default_factory=dict)
    verdicts: dict[str, int] = field(default_factory=dict)
    crash_sigkill: list[str] = field(default_factory=list)
    crash_near_kill: list[str] = field(default_factory=list)
    missing_corpus: list[str] = field(default_factory=list)
    missing_findings: list[str] = field(default_factory=list)
    orphans: int = 0
    levels: dict[str, int] = field(default_factory=dict)
    quarantined: int = 0
    integrity: str = ""
    staging: int = 0

    def problems(self) -> list[str]:
        """Every check that failed, one line each (empty: the campaign survived the chaos)."""
        out = list(self.early)
        if self.elapsed < self.budget - 1.0:
            out.append(f"the campaign used {self.elapsed:.0f} s of its {self.budget:.0f} s budget")
        if self.crash_sigkill:
            out.append(f"crash findings by SIGKILL: {', '.join(self.crash_sigkill)}")
        if self.crash_near_kill:
            out.append(f"crash findings first seen within {NEAR_KILL_SECONDS:g} s of a kill: "
                       f"{', '.join(self.crash_near_kill)}")
        if self.worker_killed < self.kills:
            out.append(f"{self.kills} kills but {self.worker_killed} worker_killed events")
        if self.killed_with_memory < self.worker_killed:
            out.append(f"{self.worker_killed - self.killed_with_memory} worker_killed events without memory figures")
        if self.missing_corpus:
            out.append(f"corpus rows without their file: {', '.join(self.missing_corpus[:10])}")
        if self.missing_findings:
            out.append(f"finding rows without meta.json: {', '.join(self.missing_findings[:10])}")
        if not self.resumes:
            out.append("the campaign was never resumed")
        if self.quarantined:
            out.append(f"{self.quarantined} corpus entries quarantined (a SIGKILL is no entry's fault)")
        if self.integrity != "ok":
            out.append(f"PRAGMA integrity_check: {self.integrity}")
        if self.models_lost:
            out.append(f"{len(self.models_lost)} of {len(self.models)} pool models not loaded in the end: "
                       f"{', '.join(self.models_lost[:10])}")
        return out


def _tail(path: Path, lines: int = 15) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return ""


def _load_and_wait_for_workers(proc: subprocess.Popen[bytes], out: Path, timeout: float, every: float,
                               load_kills: int, report: ChaosReport, rng: random.Random) -> bool:
    """Wait for the campaign's workers; meanwhile SIGKILL one of its load attempts every ``every`` seconds,
    up to ``load_kills`` of them."""
    db = out / "campaign.db"
    end = time.monotonic() + timeout
    next_kill = time.monotonic() + every
    while time.monotonic() < end and proc.poll() is None:
        if db.exists() and worker_pids(db, proc.pid):
            return True
        if report.load_kills < load_kills and time.monotonic() >= next_kill:
            loading = load_pids(proc.pid, out)
            if loading:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(rng.choice(loading), signal.SIGKILL)
                    report.load_kills += 1
                    report.kill_times.append(time.time())
                    next_kill = time.monotonic() + every
        time.sleep(0.2)
    return False


def run_chaos(pool: Path, out: Path, minutes: float, chaos_seconds: float, every: float, jobs: int = 1,
              seed: int = 0, logs: Path | None = None, say: Any = print, levels: str | None = None,
              load_kills: int | None = None) -> ChaosReport:
    """Fuzz ``pool`` into ``out`` for ``minutes`` of budget (at ``levels``, a ``--levels`` value; None: the
    default levels), SIGKILLing up to ``load_kills`` load attempts while it loads (None: half the pool's
    models), then a random worker every ``every`` seconds for ``chaos_seconds``, then SIGKILL the
    campaign and resume it until its budget is used."""
    out, logs = Path(out), Path(logs or out.parent)
    logs.mkdir(parents=True, exist_ok=True)
    db = out / "campaign.db"
    report = ChaosReport(out, minutes * 60, models=[m.name for m in list_pool(pool)])
    if load_kills is None:
        load_kills = (len(report.models) + 1) // 2
    rng = random.Random(seed)
    args = ["fuzz", "--pool", str(pool), "--out", str(out), "--minutes", f"{minutes:g}", "--jobs", str(jobs),
            "--monitor", "plain", *(["--levels", levels] if levels else [])]

    log = logs / f"{out.name}-chaos.log"
    started = time.monotonic()
    with open(log, "wb") as fh:
        proc = subprocess.Popen(seedzer(*args), stdout=fh, stderr=subprocess.STDOUT, start_new_session=True)
    run = Run("chaos", None, 0.0, log)
    report.runs.append(run)
    try:
        if _load_and_wait_for_workers(proc, out, 900, every, load_kills, report, rng):
            say(f"chaos: campaign {proc.pid} is fuzzing after {report.load_kills} load kills; a worker is "
                f"SIGKILLed every {every:g} s for {chaos_seconds:g} s")
        else:
            report.early.append(f"the campaign never started its workers:\n{_tail(log)}")
        end = time.monotonic() + chaos_seconds
        while time.monotonic() < end and proc.poll() is None:
            time.sleep(min(every, max(0.0, end - time.monotonic())))
            if proc.poll() is not None or time.monotonic() >= end:
                break
            pids = worker_pids(db, proc.pid)
            if not pids:
                report.kill_misses += 1  # between a death and its replacement's record: next time
                continue
            victim = rng.choice(pids)
            try:
                os.kill(victim, signal.SIGKILL)
            except ProcessLookupError:
                report.kill_misses += 1
                continue
            report.kills += 1
            report.kill_times.append(time.time())
            if report.kills % 10 == 0:
                say(f"chaos: {report.kills} kills, {time.monotonic() - started:.0f} s")
        if proc.poll() is not None:
            run.stopped_by_itself = True
            report.early.append(f"the campaign ended by itself (status {proc.returncode}) during the chaos, "
                                f"after {time.monotonic() - started:.0f} s of a {minutes * 60:.0f} s budget:\n"
                                f"{_tail(log)}")
        else:
            kids = descendants(proc.pid)
            os.kill(proc.pid, signal.SIGKILL)  # the campaign itself, as the OOM killer would
            proc.wait()
            time.sleep(5)
            report.orphans = sum(alive(p) for p in kids)
            say(f"chaos: campaign SIGKILLed after {report.kills} kills; {report.orphans} of its "
                f"{len(kids)} processes still alive 5 s later")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        run.returncode, run.seconds = proc.returncode, time.monotonic() - started

    for attempt in range(1, 6):
        elapsed = _elapsed(db)
        if elapsed >= report.budget:
            break
        say(f"resume {attempt}: {elapsed:.0f} s of {report.budget:.0f} s used")
        log = logs / f"{out.name}-resume-{attempt}.log"
        t0 = time.monotonic()
        with open(log, "wb") as fh:
            done = subprocess.run(seedzer(*args, "--resume"), stdout=fh, stderr=subprocess.STDOUT,
                                  timeout=report.budget + 1800)
        report.runs.append(Run("resume", done.returncode, time.monotonic() - t0, log))
        report.resumes += 1
        if done.returncode != 0:
            report.early.append(f"resume {attempt} failed (status {done.returncode}):\n{_tail(log)}")
            break
    _inspect(report, db)
    for run in report.runs:
        _check_log(report, run)
    return report


def _elapsed(db: Path) -> float:
    rows = query(db, "SELECT value FROM meta WHERE key = 'elapsed'")
    return float(json.loads(rows[0][0])) if rows else 0.0


def _check_log(report: ChaosReport, run: Run) -> None:
    """A campaign goes to "finishing" only with its budget used (the chaos run never gets there)."""
    for line in run.log.read_text(errors="replace").splitlines():
        if line.startswith("[finishing]") and " 0:00:00 left" not in line:
            report.early.append(f"{run.role} run went to finishing early: {line[:200]}")
            return


def _inspect(report: ChaosReport, db: Path) -> None:
    out = report.out
    report.elapsed = _elapsed(db)
    report.execs = int(query(db, "SELECT COALESCE(SUM(count), 0) FROM exec_summary")[0][0])
    for (detail,) in query(db, "SELECT detail FROM events WHERE kind = 'worker_killed'"):
        d = json.loads(detail)
        report.worker_killed += 1
        report.killed_with_memory += d.get("rss_mb") is not None and d.get("available_mb") is not None
        report.killed_during_setup += bool(d.get("during_setup"))
    for (detail,) in query(db, "SELECT detail FROM events WHERE kind = 'worker_restart'"):
        cause = str(json.loads(detail).get("kind"))  # the death's cause, under its on-disk key
        report.worker_restart[cause] = report.worker_restart.get(cause, 0) + 1
    rows = query(db, "SELECT id, path, level FROM corpus")
    report.corpus = len(rows)
    for _, _, level in rows:
        report.levels[str(level)] = report.levels.get(str(level), 0) + 1
    report.missing_corpus = [sid for sid, path, level in rows
                             if not (out / path).is_file() or path != f"corpus/{sid}{level_entry(str(level)).suffix}"]
    report.quarantined = len(query(db, "SELECT id FROM events WHERE kind = 'quarantine'"))
    loads = query(db, "SELECT model, status, detail FROM models")
    report.model_status = {str(m): str(status) for m, status, _ in loads}
    given_up = {str(m) for m, status, detail in loads if status == "failed" and "killed" in json.loads(detail)}
    report.models_lost = [m for m in report.models if report.model_status.get(m) not in ("ok", "failed")
                          or m in given_up]
    report.integrity = "; ".join(str(r[0]) for r in query(db, "PRAGMA integrity_check"))
    report.staging = sum(1 for p in (out / "findings").glob(".*.tmp"))
    for sig, symptom, verdict, first_seen, folder in query(
            db, "SELECT signature, symptom, verdict, first_seen, dir FROM findings"):
        report.findings[symptom] = report.findings.get(symptom, 0) + 1
        report.verdicts[verdict] = report.verdicts.get(verdict, 0) + 1
        meta = out / folder / "meta.json"
        if not meta.is_file() or folder != f"findings/{sig}":
            report.missing_findings.append(sig)
            continue
        if symptom != "crash":
            continue
        obs = json.loads(meta.read_text()).get("observation") or {}
        if obs.get("signal") == signal.SIGKILL:
            report.crash_sigkill.append(sig)
        if any(0 <= first_seen - t <= NEAR_KILL_SECONDS for t in report.kill_times):
            report.crash_near_kill.append(sig)


def print_report(report: ChaosReport, say: Any = print) -> None:
    """The benchmark's summary lines."""
    restarts = sum(report.worker_restart.values())
    say(f"campaign          {report.out}")
    say("runs              " + "; ".join(f"{r.role}: status {r.returncode}, {r.seconds:.0f} s" for r in report.runs))
    say(f"load kills        {report.load_kills} (load attempts SIGKILLed while the first run loaded the pool)")
    say(f"kills             {report.kills} (missed {report.kill_misses}: no live worker at that moment)")
    say(f"worker_killed     {report.worker_killed} events ({report.killed_with_memory} with memory figures, "
        f"{report.killed_during_setup} during set-up)")
    causes = ", ".join(f"{k} {v}" for k, v in sorted(report.worker_restart.items())) or "none"
    say(f"other restarts    {restarts} ({causes})")
    say(f"elapsed / budget  {report.elapsed:.1f} s / {report.budget:.0f} s after {report.resumes} resume(s)")
    say(f"executions        {report.execs}; corpus {report.corpus} (by level: {report.levels or 'none'})")
    say(f"findings          {dict(sorted(report.findings.items())) or 'none'}; verdicts {report.verdicts or 'none'}")
    say(f"crash findings    {report.findings.get('crash', 0)} (by SIGKILL: {len(report.crash_sigkill)}; "
        f"first seen within {NEAR_KILL_SECONDS:g} s of a kill: {len(report.crash_near_kill)})")
    say(f"files             corpus rows without their file: {len(report.missing_corpus)}; "
        f"findings without meta.json: {len(report.missing_findings)}; finding folders left mid-write: "
        f"{report.staging}")
    say(f"campaign.db       integrity_check {report.integrity}; quarantined entries {report.quarantined}")
    statuses = {st: sum(1 for v in report.model_status.values() if v == st) for st in set(report.model_status.values())}
    say(f"pool models       {len(report.models)}; in the end {dict(sorted(statuses.items())) or 'none recorded'}; "
        f"not loaded: {len(report.models_lost)}")
    problems = report.problems()
    say("result            " + ("ok" if not problems else "FAILED"))
    for p in problems:
        say(f"  - {p}")


@click.command()
@click.option("--pool", type=click.Path(exists=True, file_okay=False, path_type=Path), default=None,
              help="Seed pool (default: generate 6 'basic' models).")
@click.option("--out", type=click.Path(path_type=Path), default=None,
              help="Campaign directory (default: a temporary one, removed afterwards).")
@click.option("--minutes", type=float, default=4.0, show_default=True, help="Campaign budget.")
@click.option("--chaos-minutes", type=float, default=3.0, show_default=True,
              help="How long workers are killed before the campaign itself is.")
@click.option("--every", type=float, default=3.0, show_default=True, help="Seconds between worker kills.")
@click.option("--jobs", type=int, default=1, show_default=True, help="Worker processes.")
@click.option("--seed", type=int, default=0, show_default=True, help="Which worker is killed (rng seed).")
@click.option("--levels", default=None, help="Levels the campaign fuzzes (a --levels value, e.g. graph).")
@click.option("--load-kills", type=int, default=None,
              help="Load attempts SIGKILLed while the pool loads (default: half the pool's models).")
def main(pool: Path | None, out: Path | None, minutes: float, chaos_minutes: float, every: float, jobs: int,
         seed: int, levels: str | None, load_kills: int | None) -> None:
    """Kill workers at random during a real campaign, then the campaign; resume; check nothing was lost."""
    with tempfile.TemporaryDirectory(prefix="seedzer-chaos-") as tmp:
        if pool is None:
            print(f"generating 6 'basic' models into {tmp}/pool ...", flush=True)
            pool = make_pool(Path(tmp) / "pool")
        camp = out or Path(tmp) / "campaign"
        report = run_chaos(pool, camp, minutes, chaos_minutes * 60, every, jobs, seed,
                           logs=camp.parent, say=lambda s: print(s, flush=True), levels=levels, load_kills=load_kills)
        print_report(report)
    sys.exit(1 if report.problems() else 0)


if __name__ == "__main__":
    main()
