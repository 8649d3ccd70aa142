"""A campaign's executions and bugs broken down: by level, by kind of mutation, by oracle.

The tables ``seedzer status`` shows for a campaign that counted its executions by level (see
:func:`seedzer.campaign.summary.campaign_summary`): a row per registered level (:mod:`seedzer.levels`),
executions from campaign.db's counters, bugs (root causes) from the findings view, each root counted
under its first finding, at the level its kind is named after.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from seedzer.console import SafeTable
from seedzer.finding.meta import canonical_kind
from seedzer.finding.registry import POOL_KIND
from seedzer.level_table import level_names
from seedzer.levels.registry import levels
from seedzer.store.reader import CampaignReader


class BugLine(Protocol):
    """What the breakdown reads of a finding (:class:`seedzer.campaign.summary.FindingLine`)."""

    kind: str
    mutators: list[str]
    comparison: str
    symptom: str


Bugs = Mapping[str, Sequence[BugLine]]
"""Root signature -> its findings, first one first (:attr:`seedzer.campaign.summary.FindingsView.bugs`)."""


@dataclass(frozen=True)
class RootOrigin:
    """Where a bug (root cause) came from, read off its first finding: its level, its oracle (a
    mismatch's comparison, e.g. ``mutant-vs-seed``; any other symptom by itself) and the mutations that
    made the test case (none for a seed or pool model as loaded)."""

    level: str
    oracle: str
    mutations: frozenset[str]


def origin(lines: Sequence[BugLine]) -> RootOrigin:
    """The origin of one root from its findings, first one first (the rule ``status`` and the
    experiment report both count bugs by)."""
    first = lines[0]
    return RootOrigin(canonical_kind(first.kind), first.comparison or first.symptom, frozenset(first.mutators))


def origins(bugs: Bugs) -> dict[str, RootOrigin]:
    """Every root's :func:`origin`."""
    return {root: origin(lines) for root, lines in bugs.items() if lines}


def mutation_levels() -> dict[str, str]:
    """Mutation name -> the level whose mutators make it (:attr:`seedzer.levels.level.Level.mutations`)."""
    return {mutation: found.name for found in levels() for mutation in found.mutations}


def mutation_order(name: str, made_by: dict[str, str]) -> tuple[int, str]:
    """Sort key of mutation names: by the level that makes them (table order; others last), then by name."""
    order = level_names()
    level = made_by.get(name)
    return (order.index(level) if level in order else len(order)), name


def _table(title: str, columns: tuple[str, ...]) -> SafeTable:
    table = SafeTable(title=title)
    for i, col in enumerate(columns):
        table.add_column(col, justify="left" if i == 0 else "right")
    return table


def level_table(bugs: Bugs, execs: dict[str, int], corpus: dict[str, int]) -> SafeTable:
    """Executions, corpus entries and bugs (root causes) by level, a row per registered level; bugs
    found while loading the pool (the importer's, :data:`~seedzer.finding.registry.POOL_KIND`) are a
    row of their own."""
    roots: Counter[str] = Counter(canonical_kind(lines[0].kind) for lines in bugs.values())
    table = _table("By level", ("level", "executions", "corpus entries", "bugs (root causes)"))
    for name in level_names():
        table.add_row(name, str(execs.get(name, 0)), str(corpus.get(name, 0)), str(roots.get(name, 0)))
    if roots.get(POOL_KIND):
        table.add_row(f"{POOL_KIND} (pool models)", "-", "-", str(roots[POOL_KIND]))
    return table


def mutation_table(bugs: Bugs, execs: dict[str, int]) -> SafeTable:
    """Mutants made and bugs (root causes whose first finding it made) by mutation, grouped by the level
    whose mutators make it (e.g. the TIR level's IR and pass mutators, the graph level's model
    mutations ``model_*`` and step mutators ``relax_*``)."""
    roots: Counter[str] = Counter(m for o in origins(bugs).values() for m in o.mutations)
    made_by = mutation_levels()
    table = _table("By mutation", ("mutation", "level", "mutants run", "bugs (root causes)"))
    for name in sorted(set(execs) | set(roots), key=lambda n: mutation_order(n, made_by)):
        table.add_row(name, made_by.get(name, "-"), str(execs.get(name, 0)), str(roots.get(name, 0)))
    return table


def oracle_table(bugs: Bugs) -> SafeTable:
    """Bugs (root causes) by oracle: a mismatch by the two sides that disagree (``mutant-vs-seed``:
    metamorphic; ``model-vs-onnxruntime``; ``opt-vs-reference``: a fuzzed sequence against TVM's
    default pipeline...), every other symptom by itself (crash, exception, ill-formed IR...)."""
    roots: Counter[tuple[str, str]] = Counter((o.level, o.oracle) for o in origins(bugs).values())
    table = _table("Bugs by oracle", ("level", "oracle", "bugs (root causes)"))
    for (level, oracle), count in sorted(roots.items()):
        table.add_row(level, oracle, str(count))
    return table


def mutants_by_mutation(reader: CampaignReader) -> dict[str, int]:
    """Mutants run by mutation, summed over symptoms, by mutation name; empty for a campaign.db from
    before the mutation counters."""
    counts: Counter[str] = Counter()
    for row in reader.mutation_counts():
        counts[row.mutation] += row.count
    return dict(sorted(counts.items()))
