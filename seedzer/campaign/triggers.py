"""Optimizations triggered, campaign-side: per level and pass, the test cases that ran it and that
triggered it (changed the IR: :mod:`seedzer.coverage.triggers`), and "passes triggered (>= 1, >= 10)
of passes run" per level (TVM-free).

The campaign counts every execution's ``passes_ran`` and ``passes_triggered`` in a
:class:`TriggerCounts` and adds the triggered ones to the execution's coverage features as
``triggered/<level>/<pass>`` (the coverage store, the scheduler and campaign.db's
``coverage_features`` see them like ``onnx-op/<type>``). At each snapshot it adds the new counts to
campaign.db's ``pass_triggers`` table and stores the totals per level in the snapshot (its
``triggers`` column), so the figures are known over time too. ``status``, the end-of-campaign summary
and the experiment report read them back (:func:`read_pass_counts`, :func:`read_trigger_points`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from seedzer.campaign.json_column import json_object
from seedzer.store.reader import CampaignReader

TRIGGERED_FEATURE = "triggered/"
"""Prefix of the coverage feature of a triggered pass: ``triggered/<level>/<pass>``."""
OFTEN = 10
"""A pass triggered by at least this many test cases is triggered *often* (the issue's second threshold)."""


def triggered_feature(level: str, pass_name: str) -> str:
    """The coverage feature saying that a test case of ``level`` triggered ``pass_name``."""
    return f"{TRIGGERED_FEATURE}{level}/{pass_name}"


def parse_triggered(feature: str) -> tuple[str, str] | None:
    """``(level, pass)`` of a ``triggered/<level>/<pass>`` feature, None for any other feature."""
    if not feature.startswith(TRIGGERED_FEATURE):
        return None
    level, _, name = feature[len(TRIGGERED_FEATURE):].partition("/")
    return (level, name) if level and name else None


@dataclass
class PassCount:
    """One pass of one level: the test cases that ran it and those that triggered it."""

    ran: int = 0
    triggered: int = 0


@dataclass(frozen=True)
class TriggerTotals:
    """One level's figures: passes run, passes triggered at least once and at least :data:`OFTEN` times."""

    run: int
    once: int
    often: int

    def text(self) -> str:
        """``a (>= 1), b (>= 10) of c``."""
        return f"{self.once} (≥1), {self.often} (≥{OFTEN}) of {self.run}"

    def to_list(self) -> list[int]:
        """The snapshot column's form: ``[run, once, often]``."""
        return [self.run, self.once, self.often]


def totals_of(counts: Iterable[PassCount]) -> TriggerTotals:
    """The totals of one level's passes."""
    counts = list(counts)
    return TriggerTotals(sum(1 for c in counts if c.ran), sum(1 for c in counts if c.triggered >= 1),
                         sum(1 for c in counts if c.triggered >= OFTEN))


class TriggerCounts:
    """The campaign's counts by ``(level, pass)``, with the increments not yet written to campaign.db."""

    def __init__(self) -> None:
        self.counts: dict[tuple[str, str], PassCount] = {}
        self.fresh: dict[tuple[str, str], PassCount] = {}

    def restore(self, rows: Mapping[tuple[str, str], PassCount]) -> None:
        """Start from the counts a resumed campaign stored."""
        self.counts = {key: PassCount(c.ran, c.triggered) for key, c in rows.items()}

    def record(self, level: str, ran: Iterable[str], triggered: Iterable[str]) -> list[str]:
        """One test case of ``level``: the passes it ran and those it triggered; the coverage features
        of the triggered ones (``triggered/<level>/<pass>``, as the worker's ``onnx-op/<type>``)."""
        hit = set(triggered)
        for name in set(ran) | hit:
            for table in (self.counts, self.fresh):
                count = table.setdefault((level, name), PassCount())
                count.ran += 1
                count.triggered += name in hit
        return [triggered_feature(level, name) for name in sorted(hit)]

    def first(self, level: str, triggered: Iterable[str]) -> int:
        """How many of the passes ``triggered`` no test case of ``level`` has triggered yet (ask before
        :meth:`record`)."""
        return sum(1 for name in set(triggered)
                   if (found := self.counts.get((level, name))) is None or found.triggered == 0)

    def drain(self) -> dict[tuple[str, str], PassCount]:
        """The increments since the last drain (to be added to campaign.db)."""
        fresh, self.fresh = self.fresh, {}
        return fresh

    def triggered_by(self, level: str) -> dict[str, int]:
        """Per pass of ``level``: the test cases that triggered it."""
        return {name: c.triggered for (lv, name), c in self.counts.items() if lv == level}

    def totals(self) -> dict[str, TriggerTotals]:
        """Per level: passes run and triggered (the snapshot's figures)."""
        return level_totals(self.counts)


def level_totals(counts: Mapping[tuple[str, str], PassCount]) -> dict[str, TriggerTotals]:
    """Per level, the totals of its passes' counts."""
    by_level: dict[str, list[PassCount]] = {}
    for (level, _), count in counts.items():
        by_level.setdefault(level, []).append(count)
    return {level: totals_of(found) for level, found in sorted(by_level.items())}


def snapshot_column(totals: Mapping[str, TriggerTotals]) -> str:
    """The snapshot's ``triggers`` JSON: ``{level: [run, once, often]}``."""
    return json.dumps({level: t.to_list() for level, t in totals.items()}, sort_keys=True)


def parse_snapshot_column(text: str | None) -> dict[str, TriggerTotals]:
    """A snapshot's ``triggers`` column read back (empty for older snapshots or unreadable text)."""
    data = json_object(text)
    return {str(level): TriggerTotals(*(int(n) for n in value)) for level, value in data.items()
            if isinstance(value, list) and len(value) == 3}


def read_pass_counts(reader: CampaignReader) -> dict[tuple[str, str], PassCount]:
    """campaign.db's ``pass_triggers`` (empty for a campaign from before the table)."""
    return {(row.level, row.pass_name): PassCount(row.ran, row.triggered) for row in reader.pass_trigger_counts()}


def read_trigger_points(reader: CampaignReader) -> list[tuple[float, dict[str, TriggerTotals]]]:
    """Every snapshot's campaign time and totals per level (empty totals before the ``triggers`` column)."""
    return [(row.time, parse_snapshot_column(row.triggers)) for row in reader.snapshots()]
