"""A textual summary of a campaign directory, read from its campaign.db and finding folders (read-only).

``status`` works on a running campaign, a finished one and one on read-only media; it reads
campaign.db through :class:`~seedzer.store.reader.CampaignReader` (never creating, migrating or
writing it), refuses a file that is not a Seedzer campaign in one line, and shows a row holding a
value no row can (a count that is no count) as one line naming it, never as real. Findings are
listed as the filing gate judged them: bugs, one row per root cause (its culprit passes, one-line
message, occurrences and reproducer); candidates the gate has not judged yet; not-a-bug counts by
reason (every candidate with ``--all``, and the pool models that gave no seed and the invalid test
cases by reason: :mod:`seedzer.campaign.invalid`).
Once the campaign has run for at least two windows (``--windows MINUTES``, default 5), a table of
executions per second and the largest stages of the workers' time, window by window, follows the
totals (see :mod:`seedzer.campaign.throughput`). Every summary says how many of TVM's importer's
operators the campaign exercised, which it never did, and its bugs by operator
(:mod:`seedzer.campaign.operators`), and the optimizations it triggered: per level, passes triggered
by at least 1 and 10 test cases of the passes run, and the same over time
(:mod:`seedzer.campaign.trigger_tables`), and for a level that recorded the TVM API it exercises,
"schedule primitives exercised N of M" with each one's refusals and failures
(:mod:`seedzer.campaign.api_table`); a campaign run with ``--epochs`` adds its epochs
(:mod:`seedzer.campaign.epoch_table`). The allocation's weights and yields (where the workers' time went,
:mod:`seedzer.campaign.allocation_table`) follow the mutations, and with a ledger the bug roots new to it
against those seen before come right after the totals.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Group
from rich.text import Text

from seedzer.campaign.allocation_table import allocation_table, weights_over_time_table
from seedzer.campaign.api_table import api_tables
from seedzer.campaign.breakdown import level_table, mutants_by_mutation, mutation_table, oracle_table
from seedzer.campaign.epoch_table import epoch_table
from seedzer.campaign.invalid import invalid_table, rerun_table, unloaded_models_table
from seedzer.campaign.monitor import summary_table
from seedzer.campaign.operators import exercised_operators, operator_bug_table, reach_table
from seedzer.campaign.stats import CampaignStats
from seedzer.campaign.throughput import SnapshotPoint, read_points, throughput_table, windows
from seedzer.campaign.trigger_tables import triggers_over_time_table, triggers_table
from seedzer.campaign.triggers import read_pass_counts, read_trigger_points
from seedzer.console import SafeTable, visible
from seedzer.errors import CampaignError, SeedzerError
from seedzer.finding.known_upstream import upstream_note
from seedzer.finding.meta import BUG, NOT_A_BUG, PENDING, FindingMeta, canonical_kind
from seedzer.finding.store import finding_folder
from seedzer.finding.verdict import reason_code
from seedzer.ledger.records import LedgerRoot
from seedzer.load.importer_ops import operator_reach
from seedzer.store.db import FindingRow
from seedzer.store.reader import CampaignReader

RESTART_EVENTS = ("worker_restart", "worker_killed")
"""The events of a worker that had to be started again."""


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


def _line(campaign: Path, row: FindingRow) -> FindingLine:
    sig, symptom, stage, pass_name, message, status, count = (row.signature, row.symptom, row.stage, row.pass_name,
                                                              row.message, row.status, row.count)
    verdict, reason, root, kind = row.verdict, row.verdict_reason, row.root, row.kind
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


def findings_view(campaign: Path, reader: CampaignReader) -> FindingsView:
    """Every finding of a campaign, read from campaign.db and the verdicts in its finding folders."""
    view = FindingsView()
    for row in reader.findings():
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


def _ledger_line(view: FindingsView, seen: dict[str, LedgerRoot]) -> Text:
    """How many of the campaign's bug roots are new to the ledger and how many it held from other campaigns."""
    before = sum(1 for root in view.bugs if root in seen)
    return Text(visible(f"bug roots: {len(view.bugs) - before} new to the ledger, {before} seen before "
                        "(in other campaigns)"))


def _bug_table(view: FindingsView, seen: dict[str, LedgerRoot] | None, here: str) -> SafeTable:
    table = SafeTable(title="Bugs (one row per root cause; `seedzer status --all` lists every candidate)")
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


def _all_table(view: FindingsView) -> SafeTable:
    table = SafeTable(title="Every candidate")
    for col in ("signature", "symptom", "stage / pass", "verdict", "reason", "count", "what happened"):
        table.add_column(col, overflow="fold")
    for line in [ln for group in view.bugs.values() for ln in group] + view.pending + view.not_bugs:
        table.add_row(line.signature, line.symptom, line.where, line.decided(),
                      line.reason[:100] if line.verdict != BUG else f"root {line.root}", str(line.count),
                      line.message[:120])
    return table


def _throughput(points: list[SnapshotPoint], minutes: float, jobs: int) -> list[SafeTable]:
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
    with CampaignReader.open(path) as reader, reader.unreadable():
        last = reader.last_snapshot()
        summary = reader.exec_counts()
        config = reader.meta("config") or {}
        fuzz = (config.get("fuzz") or {}) if isinstance(config, dict) else {}
        elapsed = float(reader.meta("elapsed", 0.0) or 0.0)
        view = findings_view(Path(campaign), reader)
        points = read_points(reader)
        by_level: Counter[str] = Counter()
        for counted in reader.level_counts():
            by_level[counted.level] += counted.count
        models = Counter(model.status for model in reader.models())
        invalid_tables = [t for t in (unloaded_models_table(reader), invalid_table(reader), rerun_table(reader))
                          if t is not None] if show_all or show_invalid else []
        st = CampaignStats(
            execs=sum(c.count for c in summary), coverage=last.coverage if last else 0,
            corpus=reader.corpus_size(), elapsed=elapsed,
            budget=float(fuzz.get("minutes", 0) or 0) * 60,
            invalid=sum(c.count for c in summary if c.symptom == "invalid"),
            slow=sum(c.count for c in summary if c.symptom == "slow"),
            unique=Counter(lines[0].symptom for lines in view.bugs.values()),
            not_a_bug=view.reasons(), pending=len(view.pending), restarts=reader.event_count(RESTART_EVENTS),
            jobs=int(fuzz.get("jobs", 1) or 1),
        )
        corpus_levels, by_mutator = reader.corpus_levels(), mutants_by_mutation(reader)
        operators = exercised_operators(reader)
        pass_counts, trigger_points = read_pass_counts(reader), read_trigger_points(reader)
        epochs = epoch_table(reader.epochs())
        allocation = reader.allocation()
        apis = api_tables(reader)
        adaptive = bool(((config.get("allocation") or {}) if isinstance(config, dict) else {}).get("adaptive", True))
    last_timings = points[-1].timings if points else {}
    # the gate's processor seconds, as the campaign's share limit counts them (older campaigns: the
    # wall seconds of their verdicts, which also count the time a gate run waited for a processor)
    st.timings["gate"] = last_timings["gate"] if "gate" in last_timings else view.gate_seconds()
    st.findings = Counter({s: sum(ln.count for g in view.bugs.values() for ln in g if ln.symptom == s)
                           for s in st.unique})
    st.loaded_models, st.failed_models = int(models.get("ok", 0)), int(models.get("failed", 0))
    st.session_execs, st.session_seconds = st.execs, st.elapsed
    parts: list[Any] = [summary_table(st, str(campaign))]
    if view.bugs and seen is not None:
        parts.append(_ledger_line(view, seen))
    if any(by_level.values()):  # a campaign that counted its executions by level
        parts.append(level_table(view.bugs, dict(sorted(by_level.items())), corpus_levels))
        parts.append(mutation_table(view.bugs, by_mutator))
        parts.append(oracle_table(view.bugs))
    parts.extend(t for t in (allocation_table(allocation, adaptive), weights_over_time_table(allocation))
                 if t is not None)
    parts.append(reach_table(operator_reach(operators, importer)))
    if view.bugs:
        parts.append(operator_bug_table(view.bugs))
    parts.extend(t for t in (triggers_table(pass_counts), triggers_over_time_table(trigger_points, window_minutes))
                 if t is not None)
    parts.extend(apis)
    if epochs is not None:
        parts.append(epochs)
    parts.extend(_throughput(points, window_minutes, st.jobs))
    if view.bugs:
        parts.append(_bug_table(view, seen, str(Path(campaign).resolve())))
    parts.extend(invalid_tables)
    if show_all and (view.pending or view.not_bugs or view.bugs):
        parts.append(_all_table(view))
    parts.extend(Text(visible(row.line())) for row in reader.corrupt)
    return Group(*parts)
