"""The long-format table of an experiment (FuzzBench's model), read from every trial's campaign.db.

A results directory holds ``<heuristic>/trial-<n>/campaign.db`` (one experiment) or
``<experiment>/<heuristic>/trial-<n>/campaign.db`` (several); an experiment comparing levels has
one directory per arm, ``<pool>@<label>``, read as a heuristic is. Databases are opened read-only, so
a report can be built while trials still run; a trial whose database is missing, empty or
unreadable is skipped with a warning rather than failing the report.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from seedzer.campaign.throughput import read_points, whole
from seedzer.errors import CampaignError, SeedzerError
from seedzer.finding.layout import META_FILE
from seedzer.provenance import read_machine, read_source
from seedzer.report.allocation import ALLOCATION_COLUMNS, read_trial_allocation
from seedzer.report.api import API_COLUMNS, read_trial_api
from seedzer.report.levels import LEVEL_COLUMNS, execs_by_level, finding_level, trial_rows
from seedzer.report.mutations import BUG_COLUMNS, MUTANT_COLUMNS, read_trial_mutations
from seedzer.report.operators import OPERATOR_COLUMNS, ROOT_OPERATOR_COLUMNS, read_trial_operators
from seedzer.report.triggers import TRIGGER_COLUMNS, read_trial_triggers
from seedzer.store.reader import CampaignReader, UnreadableCampaign

CATEGORIES = ("segfault", "other_crash", "mismatch", "other")
"""Finding categories of the report: SIGSEGV crashes, other crashes, wrong results, the rest."""

SIGSEGV = 11
TRIAL_RE = re.compile(r"^trial-(\d+)$")
REPLICA_RE = re.compile(r"^(.+)-(\d+)$")

LONG_COLUMNS = [
    "experiment", "heuristic", "trial", "status", "time", "execs", "coverage", "coverage_backend",
    "corpus", "findings", "unique_findings", "invalid",
    *(f"findings_{c}" for c in CATEGORIES), "execs_per_s",
]
"""``execs_per_s``: executions per second since the trial's previous snapshot (one window)."""
STAGE_COLUMNS = ["experiment", "heuristic", "trial", "stage", "seconds", "share"]
"""Where a trial's time went: seconds by stage over the whole trial and their share of the workers'
time (elapsed x jobs); stages as in :mod:`seedzer.campaign.throughput` (none for older trials)."""
FINDING_COLUMNS = [
    "experiment", "heuristic", "trial", "signature", "symptom", "category", "stage", "pass",
    "status", "count", "time", "message", "level",
]


class ReportError(SeedzerError):
    """A results directory cannot be reported on (message names the directory)."""


@dataclass(frozen=True)
class TrialRef:
    """Where one trial's campaign lives and what it belongs to."""

    experiment: str
    heuristic: str
    trial: int
    dir: Path


@dataclass
class Tables:
    """Everything the reporter reads: the long table, the findings table and per-trial metadata."""

    long: pd.DataFrame
    findings: pd.DataFrame
    trials: pd.DataFrame
    warnings: list[str] = field(default_factory=list)
    stages: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=STAGE_COLUMNS))
    levels: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=LEVEL_COLUMNS))
    mutants: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=MUTANT_COLUMNS))
    bugs: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=BUG_COLUMNS))
    operators: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=OPERATOR_COLUMNS))
    root_operators: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=ROOT_OPERATOR_COLUMNS))
    triggers: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=TRIGGER_COLUMNS))
    allocation: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=ALLOCATION_COLUMNS))
    api: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=API_COLUMNS))


class TrialTables(NamedTuple):
    """What one trial contributes to :class:`Tables` (``info``: one row of its trials table)."""

    long: pd.DataFrame
    findings: pd.DataFrame
    info: dict[str, Any]
    stages: pd.DataFrame
    levels: pd.DataFrame
    mutants: pd.DataFrame
    bugs: pd.DataFrame
    operators: pd.DataFrame
    root_operators: pd.DataFrame
    triggers: pd.DataFrame
    allocation: pd.DataFrame
    api: pd.DataFrame


FRAME_COLUMNS = {"long": LONG_COLUMNS, "findings": FINDING_COLUMNS, "stages": STAGE_COLUMNS,
                 "levels": LEVEL_COLUMNS, "mutants": MUTANT_COLUMNS, "bugs": BUG_COLUMNS,
                 "operators": OPERATOR_COLUMNS, "root_operators": ROOT_OPERATOR_COLUMNS,
                 "triggers": TRIGGER_COLUMNS, "allocation": ALLOCATION_COLUMNS, "api": API_COLUMNS}
"""The per-trial tables :func:`build_tables` concatenates, with their columns."""
TRIAL_COLUMNS = ["experiment", "heuristic", "trial", "status", "budget", "elapsed", "snapshots", "dir", "source",
                 "machine"]


def identify(campaign_dir: Path) -> tuple[str, str, int]:
    """(experiment, heuristic, trial) of a campaign directory from its path: ``<exp>/<h>/trial-<n>``
    (``experiment run``), ``<exp>/<h>-<n>`` (docker compose replicas) or ``<exp>/<name>`` (trial 1)."""
    d = Path(campaign_dir).resolve()
    m = TRIAL_RE.match(d.name)
    if m:
        return d.parent.parent.name, d.parent.name, int(m.group(1))
    m = REPLICA_RE.match(d.name)
    if m:
        return d.parent.name, m.group(1), int(m.group(2))
    return d.parent.name, d.name, 1


def discover(results: Path) -> list[TrialRef]:
    """Every campaign directory (one holding campaign.db) under ``results``, in a stable order."""
    results = Path(results)
    if not results.is_dir():
        raise ReportError(f"{results}: results directory does not exist")
    refs = []
    for db in sorted(results.glob("**/campaign.db")):
        experiment, heuristic, trial = identify(db.parent)
        refs.append(TrialRef(experiment, heuristic, trial, db.parent))
    refs.sort(key=lambda r: (r.experiment, r.heuristic, r.trial))
    return refs


def trial_status(trial_dir: Path) -> str:
    """``done``/``failed``/``interrupted`` from trial.json, or ``incomplete`` without one."""
    try:
        data = json.loads((Path(trial_dir) / "trial.json").read_text())
        return str(data.get("status", "incomplete"))
    except (OSError, ValueError):
        return "incomplete"


def classify(symptom: str, meta: dict[str, Any] | None) -> str:
    """The report category of a finding: a crash by SIGSEGV (from meta.json), other crash, mismatch, other."""
    if symptom == "crash":
        detail = ((meta or {}).get("outcome") or {}).get("detail") or {}
        return "segfault" if detail.get("signal") == SIGSEGV else "other_crash"
    if symptom == "mismatch":
        return "mismatch"
    return "other"


def _finding_meta(trial_dir: Path, signature: str, stored_dir: str) -> dict[str, Any] | None:
    for cand in (trial_dir / "findings" / signature / META_FILE, Path(stored_dir) / META_FILE):
        try:
            data = json.loads(cand.read_text())
        except (OSError, ValueError):
            continue
        return data if isinstance(data, dict) else None
    return None


def wall_to_elapsed(walls: np.ndarray, snapshots: pd.DataFrame) -> np.ndarray:
    """Map wall-clock times (findings' first_seen) to campaign-elapsed seconds via the snapshots."""
    if snapshots.empty:
        return np.zeros(len(walls))
    order = snapshots.sort_values("wall")
    return np.interp(walls, order["wall"].to_numpy(float), order["time"].to_numpy(float))


def _stage_rows(ident: dict[str, Any], reader: CampaignReader, jobs: int) -> pd.DataFrame:
    """Seconds and shares by stage over a whole trial, from its last snapshot's cumulative timings."""
    total = whole(read_points(reader), jobs)
    shares = total.shares() if total is not None else {}
    rows = [{**ident, "stage": k, "seconds": total.seconds.get(k, 0.0) if total else 0.0, "share": v}
            for k, v in shares.items()]
    return pd.DataFrame(rows, columns=STAGE_COLUMNS)


def _rates(snaps: pd.DataFrame) -> np.ndarray:
    """Executions per second between consecutive snapshots (the first: since the start)."""
    times, execs = snaps["time"].to_numpy(float), snaps["execs"].to_numpy(float)
    dt = np.diff(times, prepend=0.0)
    dn = np.diff(execs, prepend=0.0)
    return np.divide(dn, dt, out=np.zeros_like(dn), where=dt > 0)


def read_trial(ref: TrialRef) -> TrialTables:
    """One trial's snapshots (long rows), findings rows, metadata (budget, status, backend), seconds
    by stage (:data:`STAGE_COLUMNS`), executions and findings by level (``LEVEL_COLUMNS``), mutants
    by mutation (``MUTANT_COLUMNS``), bugs (``BUG_COLUMNS``), the operators it exercised
    (``OPERATOR_COLUMNS``), those its bugs name (``ROOT_OPERATOR_COLUMNS``) and the passes it
    triggered over time (``TRIGGER_COLUMNS``), its allocation over time (``ALLOCATION_COLUMNS``) and the
    TVM API it exercised (``API_COLUMNS``)."""
    ident = {"experiment": ref.experiment, "heuristic": ref.heuristic, "trial": ref.trial}
    with CampaignReader.open(ref.dir / "campaign.db") as reader:
        snaps = pd.DataFrame([asdict(row) for row in reader.snapshots()])
        finds = reader.findings()
        cfg = reader.meta("config", {}) or {}
        elapsed = float(reader.meta("elapsed", 0.0) or 0.0)
        versions = reader.meta("versions", {}) or {}
        stages = _stage_rows(ident, reader, int((cfg.get("fuzz") or {}).get("jobs", 1) or 1))
        execs = execs_by_level(reader, int(snaps["execs"].iloc[-1]) if not snaps.empty else 0)
        mutants, bugs = read_trial_mutations(ident, ref.dir, reader)
        operators, root_operators = read_trial_operators(ident, ref.dir, reader)
        triggers = read_trial_triggers(ident, reader)
        allocation = read_trial_allocation(ident, reader)
        api = read_trial_api(ident, reader)
    status = trial_status(ref.dir)
    frows = []
    first = wall_to_elapsed(np.array([f.first_seen for f in finds], float), snaps)
    for f, t in zip(finds, first, strict=True):
        meta = _finding_meta(ref.dir, f.signature, f.dir)
        frows.append({**ident, "signature": f.signature, "symptom": f.symptom,
                      "category": classify(f.symptom, meta), "stage": f.stage or "",
                      "pass": f.pass_name or "", "status": f.status, "count": f.count,
                      "time": float(t), "message": f.message.splitlines()[0][:200] if f.message else "",
                      "level": finding_level(f.kind)})
    fdf = pd.DataFrame(frows, columns=FINDING_COLUMNS)
    if snaps.empty:
        long = pd.DataFrame(columns=LONG_COLUMNS)
    else:
        long = pd.DataFrame({
            **{k: [v] * len(snaps) for k, v in ident.items()}, "status": status,
            "time": snaps["time"].astype(float), "execs": snaps["execs"].astype(int),
            "coverage": snaps["coverage"].astype(int), "coverage_backend": snaps["coverage_backend"],
            "corpus": snaps["corpus_size"].astype(int), "findings": snaps["findings"].astype(int),
            "unique_findings": snaps["unique_findings"].astype(int), "invalid": snaps["invalid"].astype(int),
        })
        times = long["time"].to_numpy(float)
        for cat in CATEGORIES:
            seen = np.sort(fdf.loc[fdf["category"] == cat, "time"].to_numpy(float))
            long[f"findings_{cat}"] = np.searchsorted(seen, times, side="right")
        long["execs_per_s"] = _rates(snaps)
        long = long[LONG_COLUMNS]
    budget = float((cfg.get("fuzz") or {}).get("minutes", 0.0)) * 60.0
    source, machine = read_source(versions), read_machine(versions)
    info = {**ident, "status": status, "budget": budget, "elapsed": elapsed, "snapshots": len(snaps),
            "dir": str(ref.dir), "source": source.label() if source else "",
            "machine": machine.label() if machine else ""}
    return TrialTables(long, fdf, info, stages, trial_rows(ident, execs, fdf), mutants, bugs, operators,
                       root_operators, triggers, allocation, api)


def build_tables(results: Path, *, warn: Callable[[str], None] | None = None) -> Tables:
    """Read every trial under ``results`` into one long table, one findings table, a trials table and
    the other per-trial tables of :data:`FRAME_COLUMNS`."""
    warnings: list[str] = []
    infos: list[dict[str, Any]] = []
    parts: dict[str, list[pd.DataFrame]] = {name: [] for name in FRAME_COLUMNS}
    for ref in discover(results):
        try:
            got = read_trial(ref)
        except (CampaignError, OSError, ValueError, KeyError) as exc:
            cause = exc.cause if isinstance(exc, UnreadableCampaign) else exc
            msg = f"{ref.dir}: skipped, campaign.db unreadable ({cause})"
            warnings.append(msg)
            if warn:
                warn(msg)
            continue
        infos.append(got.info)
        for name in FRAME_COLUMNS:
            frame = getattr(got, name)
            if not frame.empty:
                parts[name].append(frame)
    frames = {name: pd.concat(parts[name], ignore_index=True) if parts[name] else pd.DataFrame(columns=cols)
              for name, cols in FRAME_COLUMNS.items()}
    trials_df = pd.DataFrame(infos, columns=TRIAL_COLUMNS)
    if frames["long"]["experiment"].nunique() > 1:  # several experiments: keep heuristics apart by experiment
        for df in (*frames.values(), trials_df):
            df["heuristic"] = df["experiment"].astype(str) + ":" + df["heuristic"].astype(str)
    return Tables(frames["long"], frames["findings"], trials_df, warnings, frames["stages"], frames["levels"],
                  frames["mutants"], frames["bugs"], frames["operators"], frames["root_operators"],
                  frames["triggers"], frames["allocation"], frames["api"])
