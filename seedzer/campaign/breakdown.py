"""A campaign's executions and bugs broken down: by level, by kind of mutation, by oracle.

The tables ``seedzer status`` shows for a campaign that fuzzed the graph level (see
:func:`seedzer.campaign.report.campaign_summary`): executions come from campaign.db's counters, bugs
(root causes) from the findings view, each root counted under its first finding.
"""

from __future__ import annotations

import sqlite3
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from rich.table import Table

from seedzer.finding.registry import level_of_kind


class BugLine(Protocol):
    """What the breakdown reads of a finding (:class:`seedzer.campaign.report.FindingLine`)."""

    kind: str
    mutators: list[str]
    comparison: str
    symptom: str


Bugs = Mapping[str, Sequence[BugLine]]
"""Root signature -> its findings, first one first (:attr:`seedzer.campaign.report.FindingsView.bugs`)."""


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
    return RootOrigin(level_of_kind(first.kind), first.comparison or first.symptom, frozenset(first.mutators))


def origins(bugs: Bugs) -> dict[str, RootOrigin]:
    """Every root's :func:`origin`."""
    return {root: origin(lines) for root, lines in bugs.items() if lines}


def mutation_order(name: str) -> tuple[bool, str]:
    """Sort key of mutation names: the graph level's (``model_*``, ``relax_*``) first, then by name."""
    return not name.startswith(("model_", "relax_")), name


def _table(title: str, columns: tuple[str, ...]) -> Table:
    table = Table(title=title)
    for i, col in enumerate(columns):
        table.add_column(col, justify="left" if i == 0 else "right")
    return table


def level_table(bugs: Bugs, execs: dict[str, int], corpus: int, graph_corpus: int) -> Table:
    """Executions, corpus entries and bugs (root causes) by level; bugs found while loading the pool
    (the importer's) are their own row."""
    roots: Counter[str] = Counter(level_of_kind(lines[0].kind) for lines in bugs.values())
    table = _table("By level", ("level", "executions", "corpus entries", "bugs (root causes)"))
    table.add_row("tir", str(execs.get("tir", 0)), str(corpus - graph_corpus), str(roots.get("tir", 0)))
    table.add_row("graph", str(execs.get("graph", 0)), str(graph_corpus), str(roots.get("graph", 0)))
    if roots.get("load"):
        table.add_row("load (pool models)", "-", "-", str(roots["load"]))
    return table


def mutation_table(bugs: Bugs, execs: dict[str, int]) -> Table:
    """Mutants made and bugs (root causes whose first finding it made) by mutation: the graph level's
    model mutations (``model_uoc``, ``model_pioc``, ``model_edge``) and step mutators (``relax_*``),
    the TIR level's IR and pass mutators."""
    roots: Counter[str] = Counter(m for o in origins(bugs).values() for m in o.mutations)
    table = _table("By mutation", ("mutation", "mutants run", "bugs (root causes)"))
    for name in sorted(set(execs) | set(roots), key=mutation_order):
        table.add_row(name, str(execs.get(name, 0)), str(roots.get(name, 0)))
    return table


def oracle_table(bugs: Bugs) -> Table:
    """Bugs (root causes) by oracle: a mismatch by the two sides that disagree (``mutant-vs-seed``:
    metamorphic; ``model-vs-onnxruntime``; ``opt-vs-reference``: a fuzzed sequence against TVM's
    default pipeline...), every other symptom by itself (crash, exception, ill-formed IR...)."""
    roots: Counter[tuple[str, str]] = Counter((o.level, o.oracle) for o in origins(bugs).values())
    table = _table("Bugs by oracle", ("level", "oracle", "bugs (root causes)"))
    for (level, oracle), count in sorted(roots.items()):
        table.add_row(level, oracle, str(count))
    return table


def mutants_by_mutation(conn: sqlite3.Connection) -> dict[str, int]:
    """Mutants run by mutation, summed over symptoms; empty for a campaign.db without ``mutator_summary``."""
    try:
        rows = conn.execute("SELECT mutator, SUM(count) FROM mutator_summary GROUP BY mutator").fetchall()
    except sqlite3.OperationalError as exc:
        if "no such table" in str(exc):  # a campaign.db from before the mutation counters
            return {}
        raise
    return {str(name): int(n or 0) for name, n in rows}
