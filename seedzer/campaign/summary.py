"""A textual summary of a campaign directory, read from its campaign.db and finding folders (read-only).

``status`` works on a running campaign, a finished one and one on read-only media; it never
creates, migrates or writes a database (see :mod:`seedzer.store.readonly`), and refuses a file
that is not a Seedzer campaign in one line. Findings are listed as the filing gate judged them:
bugs, one row per root cause (its culprit passes, one-line message, occurrences and reproducer);
candidates the gate has not judged yet; not-a-bug counts by reason (every candidate with ``--all``,
and the pool models that gave no seed and the invalid test cases by reason:
:mod:`seedzer.campaign.invalid`).
Once the campaign has run for at least two windows (``--windows MINUTES``, default 5), a table of
executions per second and the largest stages of the workers' time, window by window, follows the
totals (see :mod:`seedzer.campaign.throughput`). Every summary says how many of TVM's importer's
operators the campaign exercised, which it never did, and its bugs by operator
(:mod:`seedzer.campaign.operators`), and the optimizations it triggered: per level, passes triggered
by at least 1 and 10 test cases of the passes run, and the same over time
(:mod:`seedzer.campaign.trigger_tables`); a campaign run with ``--epochs`` adds its epochs
(:mod:`seedzer.campaign.epoch_table`).
"""

from __future__ import annotations

import sqlite3
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Group
from rich.table import Table

from seedzer.campaign.breakdown import level_table, mutants_by_mutation, mutation_table, oracle_table
from seedzer.campaign.epoch_table import epoch_table
from seedzer.campaign.invalid import invalid_table, rerun_table, unloaded_models_table
from seedzer.campaign.monitor import summary_table
from seedzer.campaign.operators import exercised_operators, operator_bug_table, reach_table
from seedzer.campaign.stats import CampaignStats
from seedzer.campaign.throughput import SnapshotPoint, read_points, throughput_table, windows
from seedzer.campaign.trigger_tables import triggers_over_time_table, triggers_table
from seedzer.campaign.triggers import read_pass_counts, read_trigger_points
from seedzer.errors import CampaignError, SeedzerError
from seedzer.finding.known_upstream import upstream_note
from seedzer.finding.meta import BUG, NOT_A_BUG, PENDING, FindingMeta, canonical_kind
from seedzer.finding.store import finding_folder
from seedzer.finding.verdict import reason_code
from seedzer.ledger.records import LedgerRoot
from seedzer.load.importer_ops import operator_reach
from seedzer.store.epoch_rows import epoch_rows
from seedzer.store.readonly import corpus_by_level, open_campaign, read_meta


def _rows(conn: sqlite3.Connection, sql: str) -> list[tuple[Any, ...]]:
    try:
        return conn.execute(sql).fetchall()
    except sqlite3.OperationalError as exc:
        if "no such table" in str(exc):  # a campaign that has not created every table yet
            return []
        raise


@dataclass
class FindingLine:
    """One finding as the summary shows it."""

    signature: str
    symptom: str
    where: str
    verdict: str
    reason: str
    root: str | None
    culprit: list[str]
    status: str
    count: int
    message: str
    repro: str
    gate_seconds: float = 0.0
    rule: str = ""
    """The gate rule that decided (``witness``, ``culprit``, ``contract``...; empty for older findings)."""
    kind: str = "tir"
    """The finding kind (the name of its level; ``load`` for the pool's models; older names read as these)."""
    mutators: list[str] = field(default_factory=list)
    """The mutations that made the test case (from its parent)."""
    comparison: str = ""
    """A mismatch's oracle: the two builds or engines that disagree."""
    upstream: str = ""
    """``known upstream apache/tvm#N (...)`` when its root is a known upstream bug (empty: not known)."""

    def decided(self) -> str:
        """The verdict with the rule that decided it, e.g. ``bug (witness)``."""
        return f"{self.verdict} ({self.rule})" if self.rule else self.verdict


@dataclass
class FindingsView:
    """A campaign's findings grouped by verdict: bugs by root signature, pending, not bugs by reason."""

    bugs: dict[str, list[FindingLine]] = field(default_factory=dict)
    pending: list[FindingLine] = field(default_factory=list)
    not_bugs: list[FindingLine] = field(default_factory=list)

    def reasons(self) -> Counter[str]:
        """Not-a-bug counts by reason."""
        return Counter(reason_code(f.reason) for f in self.not_bugs)

    def gate_seconds(self) -> float:
        """Seconds the filing gate spent on every finding, whatever its verdict."""
        return sum(ln.gate_seconds for ln in self.pending + self.not_bugs
                   + [ln for g in self.bugs.values() for ln in g])


def _line(campaign: Path, row: tuple[Any, ...]) -> FindingLine:
    sig, symptom, stage, pass_name, message, status, count, verdict, reason, root, kind = row
    culprit: list[str] = []
    gate_seconds, rule, mutators, comparison, upstream = 0.0, "", [], "", ""
    try:
        folder = finding_folder(campaign / "findings", str(sig))
        meta = FindingMeta.load(folder)
        culprit, verdict, reason, root = meta.culprit, meta.verdict, meta.verdict_reason, meta.root_signature
        message = meta.observation.headline()
        gate_seconds = float(meta.gate_seconds or 0.0)
        rule = str(meta.extra.get("gate_rule") or "")
        mutators, comparison = list(meta.mutators), meta.observation.comparison or ""
        upstream = upstream_note(meta) or ""
    except SeedzerError:
        pass  # a folder damaged or written by hand: the database row still says what it was
    first = next((ln.strip() for ln in str(message).splitlines() if ln.strip()), "")
    return FindingLine(str(sig), str(symptom), f"{stage or '?'}/{pass_name or '-'}", str(verdict or PENDING),
                       str(reason or ""), root, culprit, str(status), int(count), first,
                       f"findings/{sig}/repro.py", gate_seconds, rule, canonical_kind(kind), mutators, comparison,
                       upstream)


def findings_view(campaign: Path, conn: sqlite3.Connection) -> FindingsView:
    """Every finding of a campaign, read from campaign.db and the verdicts in its finding folders."""
    cols = {r[1] for r in _rows(conn, "PRAGMA table_info(findings)")}
    verdict_cols = "verdict, verdict_reason, root" if "verdict" in cols else "NULL, NULL, NULL"
    verdict_cols += ", kind" if "kind" in cols else ", NULL"
    view = FindingsView()
    for row in _rows(conn, f"SELECT signature, symptom, stage, pass, message, status, count, {verdict_cols} "
                           "FROM findings ORDER BY first_seen"):
        line = _line(campaign, row)
        if line.verdict == BUG:
            view.bugs.setdefault(line.root or line.signature, []).append(line)
        elif line.verdict == NOT_A_BUG:
            view.not_bugs.append(line)
        else:
            view.pending.append(line)
    return view


def _seen(root: str, seen: dict[str, LedgerRoot] | None, here: str) -> str:
    """What the ledger knew of ``root`` from campaigns other than ``here``."""
    if seen is None:
        return "(no ledger)"
    known = seen.get(root)
    if known is None:
        return "new"
    others = [s for s in known.sightings if s.campaign != here]
    first = min(s.first_seen for s in others)
    state = "" if known.state == "new" else f"; {known.state}" + (f" {known.link}" if known.link else "")
    return (f"seen: {len(others)} other campaign(s) since {time.strftime('%Y-%m-%d', time.localtime(first))}"
            f" ({', '.join(Path(s.campaign).name for s in others)}){state}")


def _bug_table(view: FindingsView, seen: dict[str, LedgerRoot] | None, here: str) -> Table:
    table = Table(title="Bugs (one row per root cause; `seedzer status --all` lists every candidate)")
    for col in ("root", "symptom", "culprit", "count", "status", "ledger", "what happened", "reproducer"):
        table.add_column(col, overflow="fold")
    for root, lines in view.bugs.items():
        first = lines[0]
        statuses = sorted({ln.status for ln in lines})
        upstream = next((ln.upstream for ln in lines if ln.upstream), "")
        table.add_row(root, first.symptom, " + ".join(first.culprit) or first.where,
                      str(sum(ln.count for ln in lines)), ", ".join(statuses) + (f"; {upstream}" if upstream else ""),
                      _seen(root, seen, here),
                      first.message[:160], first.repro)
    return table


def _all_table(view: FindingsView) -> Table:
    table = Table(title="Every candidate")
    for col in ("signature", "symptom", "stage / pass", "verdict", "reason", "count", "what happened"):
        table.add_column(col, overflow="fold")
    for line in [ln for group in view.bugs.values() for ln in group] + view.pending + view.not_bugs:
        table.add_row(line.signature, line.symptom, line.where, line.decided(),
                      line.reason[:100] if line.verdict != BUG else f"root {line.root}", str(line.count),
                      line.message[:120])
    return table


def _throughput(points: list[SnapshotPoint], minutes: float, jobs: int) -> list[Table]:
    """The throughput table, when the campaign has at least two windows of ``minutes``."""
    wins = windows(points, minutes, jobs)
    return [throughput_table(wins, f"Throughput over time ({minutes:g}-minute windows)")] if len(wins) >= 2 else []


def campaign_summary(campaign: Path, show_all: bool = False, window_minutes: float = 5.0,
                     show_invalid: bool = False, seen: dict[str, LedgerRoot] | None = None,
                     importer: Sequence[str] | None = None) -> Group:
    """The summary of a campaign as recorded so far (bugs only, unless ``show_all``), with its
    throughput by window of ``window_minutes`` when it has at least two (0: never), the importer's
    operators it exercised (of ``importer``, default the installed TVM's) and its bugs by operator,
    with ``show_invalid`` (or ``show_all``) what was turned away before the gate; ``seen``: the roots
    the ledger holds from other campaigns (None: no ledger), marked in the bugs' table."""
    path = Path(campaign) / "campaign.db"
    if not path.exists():
        raise CampaignError(f"{campaign}: not a campaign directory (no campaign.db)")
    conn = open_campaign(path)
    try:
        try:
            last = _rows(conn, "SELECT coverage FROM snapshots ORDER BY time DESC LIMIT 1")
            summary = _rows(conn, "SELECT symptom, count FROM exec_summary")
            corpus = _rows(conn, "SELECT COUNT(*) FROM corpus")
            restarts = _rows(conn, "SELECT COUNT(*) FROM events WHERE kind IN ('worker_restart', 'worker_killed')")
            models = dict(_rows(conn, "SELECT status, COUNT(*) FROM models GROUP BY status"))
            config = read_meta(conn, "config") or {}
            elapsed = float(read_meta(conn, "elapsed", 0.0) or 0.0)
            view = findings_view(Path(campaign), conn)
            points = read_points(conn)
            by_level = dict(_rows(conn, "SELECT level, SUM(count) FROM level_summary GROUP BY level")) \
                if _rows(conn, "SELECT name FROM sqlite_master WHERE name = 'level_summary'") else {}
            corpus_levels = corpus_by_level(conn)
            by_mutator = mutants_by_mutation(conn)
            invalid_tables = [t for t in (unloaded_models_table(conn), invalid_table(conn), rerun_table(conn))
                              if t is not None] if show_all or show_invalid else []
            operators = exercised_operators(conn)
            pass_counts, trigger_points = read_pass_counts(conn), read_trigger_points(conn)
            epochs = epoch_table(epoch_rows(conn))
        except (sqlite3.Error, ValueError, TypeError) as exc:
            raise CampaignError(f"{path}: unreadable campaign database ({exc})") from None
    finally:
        conn.close()
    minutes = (config.get("fuzz") or {}).get("minutes", 0) if isinstance(config, dict) else 0
    st = CampaignStats(
        execs=sum(int(n) for _, n in summary), coverage=int(last[0][0]) if last else 0,
        corpus=int(corpus[0][0]) if corpus else 0, elapsed=elapsed, budget=float(minutes or 0) * 60,
        invalid=sum(int(n) for s, n in summary if s == "invalid"),
        slow=sum(int(n) for s, n in summary if s == "slow"),
        unique=Counter(lines[0].symptom for lines in view.bugs.values()),
        not_a_bug=view.reasons(), pending=len(view.pending),
        restarts=int(restarts[0][0]) if restarts else 0,
        jobs=int((config.get("fuzz") or {}).get("jobs", 1) or 1) if isinstance(config, dict) else 1,
    )
    last_timings = points[-1].timings if points else {}
    # the gate's processor seconds, as the campaign's share limit counts them (older campaigns: the
    # wall seconds of their verdicts, which also count the time a gate run waited for a processor)
    st.timings["gate"] = last_timings["gate"] if "gate" in last_timings else view.gate_seconds()
    st.findings = Counter({s: sum(ln.count for g in view.bugs.values() for ln in g if ln.symptom == s)
                           for s in st.unique})
    st.loaded_models, st.failed_models = int(models.get("ok", 0)), int(models.get("failed", 0))
    st.session_execs, st.session_seconds = st.execs, st.elapsed
    parts: list[Any] = [summary_table(st, str(campaign))]
    if any(by_level.values()):  # a campaign that counted its executions by level
        parts.append(level_table(view.bugs, {str(k): int(v) for k, v in by_level.items()}, corpus_levels))
        parts.append(mutation_table(view.bugs, {str(k): int(v) for k, v in by_mutator.items()}))
        parts.append(oracle_table(view.bugs))
    parts.append(reach_table(operator_reach(operators, importer)))
    if view.bugs:
        parts.append(operator_bug_table(view.bugs))
    parts.extend(t for t in (triggers_table(pass_counts), triggers_over_time_table(trigger_points, window_minutes))
                 if t is not None)
    if epochs is not None:
        parts.append(epochs)
    parts.extend(_throughput(points, window_minutes, st.jobs))
    if view.bugs:
        parts.append(_bug_table(view, seen, str(Path(campaign).resolve())))
    parts.extend(invalid_tables)
    if show_all and (view.pending or view.not_bugs or view.bugs):
        parts.append(_all_table(view))
    return Group(*parts)
