"""Executions counted by symptom and stage, by level and symptom, and mutants by mutation.

Every judged execution (and every slow test case) is one count here and in the live statistics; the
counts since the last snapshot are added to campaign.db's ``exec_summary``, ``level_summary`` and
``mutator_summary`` at the next one (batched: a count costs no write).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from seedzer.campaign.stats import CampaignStats
from seedzer.store.db import CampaignDB


class ExecCounts:
    """The campaign's execution counters and their increments not yet written to campaign.db."""

    def __init__(self, stats: CampaignStats) -> None:
        self.stats = stats
        self.by_symptom: Counter[tuple[str, str]] = Counter()
        """(symptom, stage) -> executions since the last flush."""
        self.by_level: Counter[tuple[str, str]] = Counter()
        """(level, symptom) -> executions since the last flush."""
        self.by_mutation: Counter[tuple[str, str]] = Counter()
        """(mutation, symptom) -> mutants since the last flush (what each kind of mutation yields)."""

    def execution(self, symptom: str, stage: str, level: str) -> None:
        """One more execution of ``level`` that ended with ``symptom`` at ``stage``."""
        self.stats.execs += 1
        self.stats.session_execs += 1
        self.by_symptom[(symptom, stage)] += 1
        self.by_level[(level, symptom)] += 1
        self.stats.level_execs[level] += 1

    def mutants(self, mutations: Iterable[str], symptom: str) -> None:
        """One more mutant made by each of ``mutations`` that ended with ``symptom``."""
        for mutation in mutations:
            self.by_mutation[(mutation, symptom)] += 1

    def flush(self, db: CampaignDB) -> None:
        """Add the counts since the last flush to campaign.db."""
        db.add_exec_counts(dict(self.by_symptom))
        self.by_symptom.clear()
        db.add_level_counts(dict(self.by_level))
        self.by_level.clear()
        db.add_mutator_counts(dict(self.by_mutation))
        self.by_mutation.clear()
