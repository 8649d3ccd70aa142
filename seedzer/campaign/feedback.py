"""What the campaign has seen its test cases reach: coverage features and the passes they triggered.

One execution's features (the worker's, plus ``triggered/<level>/<pass>`` for every pass that changed
the IR: :mod:`seedzer.campaign.triggers`) are merged into the coverage backend's totals; how many it
had never seen is the execution's *gain*, what the keep rule reads. A snapshot writes what is new
since the last one; a resumed campaign starts from what campaign.db holds.
"""

from __future__ import annotations

from dataclasses import dataclass

from seedzer.campaign.triggers import PassCount, TriggerCounts, TriggerTotals
from seedzer.execute.records import ExecResult
from seedzer.protocols import CoverageBackend
from seedzer.store.db import CampaignDB


@dataclass(frozen=True)
class Gain:
    """What one execution reached first: coverage features (its triggered passes' included) and passes
    no test case of its level had triggered."""

    features: int
    first_triggers: int


class Feedback:
    """The campaign's coverage totals and pass-trigger counts."""

    def __init__(self, coverage: CoverageBackend) -> None:
        self.coverage = coverage
        self.triggers = TriggerCounts()
        """Per level and pass: test cases that ran it and that triggered it (changed the IR)."""

    def merge(self, level: str, result: ExecResult) -> Gain:
        """Merge one execution of ``level``: its triggered passes join its features (``result.features``
        grows by them), the features join the totals; what was new."""
        first = self.triggers.first(level, result.passes_triggered)
        result.features.extend(self.triggers.record(level, result.passes_ran, result.passes_triggered))
        return Gain(self.coverage.new_since_last(result.features), first)

    def total(self) -> int:
        """Distinct coverage features seen so far."""
        return self.coverage.total()

    def detail(self) -> dict[str, int]:
        """The backend's totals beside :meth:`total` (what a snapshot records)."""
        return self.coverage.detail()

    def trigger_totals(self) -> dict[str, TriggerTotals]:
        """Per level: passes run and triggered."""
        return self.triggers.totals()

    def restore(self, db: CampaignDB) -> None:
        """Start from what a resumed campaign stored."""
        self.coverage.restore(db.features())
        self.triggers.restore({key: PassCount(*counts) for key, counts in db.pass_triggers().items()})

    def flush(self, db: CampaignDB, when: float) -> None:
        """Add the features first seen (at ``when``, wall time) and the trigger counts since the last
        flush to campaign.db."""
        db.add_features(self.coverage.drain_fresh(), when)
        db.add_pass_triggers((lv, name, c.ran, c.triggered) for (lv, name), c in self.triggers.drain().items())
