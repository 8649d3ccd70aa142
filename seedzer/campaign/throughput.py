"""Where a campaign's time goes, window by window, from the cumulative stage seconds of its snapshots.

Every snapshot row holds the seconds spent so far by stage (:func:`stage_totals` names them), so the
cost of any window of campaign time is the difference of two snapshots. Stages:

* worker side (summed over workers): ``mutate``; ``passes`` (lowering the fuzzed, optimized
  program); ``reference`` (lowering the reference and minimal programs the oracles compare with);
  ``build`` (LLVM code generation of what is new, one JIT); ``run`` (kernel runs); ``perf`` (the
  perf oracle's O3 builds and timing); ``other`` (the rest of a test case in a worker: parsing,
  inputs, comparison, pipes); ``busy`` is the workers' time on test cases (all of the above) and
  ``cpu`` how much of it they had a processor;
* campaign side: ``bookkeeping`` (judging, coverage merge, corpus and findings I/O, snapshots) and
  ``gate`` (the filing gate's processor time in its children);
* counts, not seconds: ``reused_builds`` (builds of a program equal to one a worker built before),
  ``reused_folds`` (``FoldConstant``'s builds of a PrimFunc a graph worker built before) and
  ``reused_codegen`` (LLVM code of a host module a graph worker generated before). Keys not known
  here keep their own name.

A window's shares are of the workers' capacity (window seconds x jobs); ``idle`` is what the
workers did not spend on test cases (waiting for the campaign, restarts).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from seedzer.campaign.json_column import json_object
from seedzer.console import SafeTable
from seedzer.store.reader import CampaignReader

RENAMED = {"worker_busy": "busy", "worker_cpu": "cpu", "codegen": "build", "jit": "build"}
"""Keys of the workers' and the campaign's timings whose stable name differs."""
WORKER_STAGES = ("mutate", "schedule", "passes", "reference", "build", "run", "perf")
"""Worker-side stages in the order a test case spends them."""
CAMPAIGN_STAGES = ("bookkeeping", "gate")
"""Stages spent outside the workers (the campaign process, the filing gate's children)."""
COUNTS = frozenset({"reused_builds", "reused_folds", "reused_codegen"})
"""Keys that count events rather than seconds."""
NOT_STAGES = frozenset({"busy", "cpu", "other"}) | COUNTS
"""Keys that are totals, derived values or counts rather than a stage's own seconds."""


def stage_totals(timings: Mapping[str, float]) -> dict[str, float]:
    """The campaign's summed timings under stable stage names, with ``other`` (worker time no stage
    accounts for) derived from ``busy``; rounded to milliseconds for the snapshot's JSON column."""
    out: dict[str, float] = {}
    for key, value in timings.items():
        name = RENAMED.get(key, key)
        out[name] = out.get(name, 0.0) + float(value)
    out.pop("other", None)  # derived again below (a resumed campaign restores it with the rest)
    if "busy" in out:
        staged = sum(v for k, v in out.items() if k not in NOT_STAGES and k not in CAMPAIGN_STAGES)
        out["other"] = max(0.0, out["busy"] - staged)
    return {k: round(v, 3) for k, v in sorted(out.items())}


def parse_timings(text: str | None) -> dict[str, float]:
    """A snapshot's ``timings`` column as a dict (empty for older snapshots or unreadable text)."""
    data = json_object(text)
    return {str(k): float(v) for k, v in data.items() if isinstance(v, int | float)}


@dataclass(frozen=True)
class SnapshotPoint:
    """What a window needs of one snapshot: campaign time, executions and cumulative stage seconds."""

    time: float
    execs: int
    timings: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class Window:
    """One window of campaign time: its executions and the seconds spent by stage within it."""

    start: float
    end: float
    execs: int
    seconds: dict[str, float]
    jobs: int = 1

    @property
    def rate(self) -> float:
        """Executions per second of campaign time."""
        span = self.end - self.start
        return self.execs / span if span > 0 else 0.0

    @property
    def capacity(self) -> float:
        """Worker-seconds available in the window (its length x jobs)."""
        return max(self.end - self.start, 0.0) * max(self.jobs, 1)

    @property
    def timed(self) -> bool:
        """True when the snapshots recorded stage seconds (older campaigns did not)."""
        return bool(self.seconds)

    def shares(self) -> dict[str, float]:
        """Share of the workers' capacity by stage (counts left out), with ``idle`` and ``busy``."""
        cap = self.capacity
        if cap <= 0 or not self.timed:
            return {}
        out = {k: v / cap for k, v in self.seconds.items() if k != "cpu" and k not in COUNTS}
        if "busy" in self.seconds:
            out["idle"] = max(0.0, 1.0 - self.seconds["busy"] / cap)
        return out

    def top(self, n: int = 4) -> list[tuple[str, float]]:
        """The ``n`` stages with the largest shares (``busy`` and ``idle`` left out)."""
        ranked = [(k, v) for k, v in self.shares().items() if k not in ("busy", "idle") and v > 0]
        return sorted(ranked, key=lambda kv: -kv[1])[:n]


def window_between(a: SnapshotPoint, b: SnapshotPoint, jobs: int = 1) -> Window:
    """The window from snapshot ``a`` to snapshot ``b`` (stage seconds are their differences; none
    when ``a`` or ``b`` recorded none, unless ``a`` is the campaign's start)."""
    comparable = bool(b.timings) and (bool(a.timings) or a.time <= 0 or a.execs == 0)
    seconds = {k: max(0.0, v - a.timings.get(k, 0.0)) for k, v in b.timings.items()} if comparable else {}
    return Window(a.time, b.time, max(0, b.execs - a.execs), seconds, jobs)


def windows(points: Sequence[SnapshotPoint], minutes: float, jobs: int = 1) -> list[Window]:
    """Consecutive windows of about ``minutes`` of campaign time, each from one snapshot to the first
    snapshot at least that much later (the last window may be shorter); empty below two snapshots."""
    pts = sorted(points, key=lambda p: p.time)
    if len(pts) < 2 or minutes <= 0:
        return []
    span = minutes * 60.0
    out: list[Window] = []
    start = pts[0]
    for i, point in enumerate(pts[1:], start=1):
        if point.time - start.time >= span or i == len(pts) - 1:
            if point.time > start.time:
                out.append(window_between(start, point, jobs))
            start = point
    return out


def whole(points: Sequence[SnapshotPoint], jobs: int = 1) -> Window | None:
    """One window over all of ``points`` (the whole campaign as recorded), None below two snapshots."""
    pts = sorted(points, key=lambda p: p.time)
    return window_between(SnapshotPoint(0.0, 0), pts[-1], jobs) if len(pts) >= 2 else None


def read_points(reader: CampaignReader) -> list[SnapshotPoint]:
    """Every snapshot of a campaign.db (a database older than the ``timings`` column gives points without
    stage seconds)."""
    return [SnapshotPoint(row.time, row.execs, parse_timings(row.timings)) for row in reader.snapshots()]


def describe(window: Window, n: int = 4) -> str:
    """The window's largest stages as text, e.g. ``build 31%, passes 22%, run 9%, mutate 6%``."""
    if not window.timed:
        return "(not recorded)"
    return ", ".join(f"{k} {100 * v:.0f}%" for k, v in window.top(n)) or "-"


def throughput_table(wins: Sequence[Window], title: str = "Throughput over time") -> SafeTable:
    """Executions per second and where the workers' time went, one row per window."""
    table = SafeTable(title=title,
                      caption="shares of the workers' time (window x jobs); see seedzer.campaign.throughput")
    for col in ("minutes", "execs", "execs/s", "workers busy", "largest stages"):
        table.add_column(col, justify="left" if col in ("minutes", "largest stages") else "right")
    for w in wins:
        shares = w.shares()
        busy = f"{100 * shares['busy']:.0f}%" if "busy" in shares else "-"
        table.add_row(f"{w.start / 60:.1f}-{w.end / 60:.1f}", f"{w.execs:,}", f"{w.rate:.2f}", busy, describe(w))
    return table
