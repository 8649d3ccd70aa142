"""A campaign's executions and bugs broken down: by level, by kind of mutation, by oracle.

The tables ``seedzer status`` shows for a campaign that fuzzed the graph level (see
:func:`seedzer.campaign.report.campaign_summary`): executions come from campaign.db's counters, bugs
(root causes) from the findings view, each root counted under its first finding.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
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
    roots: Counter[str] = Counter(m for lines in bugs.values() for m in set(lines[0].mutators))
    table = _table("By mutation", ("mutation", "mutants run", "bugs (root causes)"))
    for name in sorted(set(execs) | set(roots), key=lambda n: (not n.startswith(("model_", "relax_")), n)):
        table.add_row(name, str(execs.get(name, 0)), str(roots.get(name, 0)))
    return table


def oracle_table(bugs: Bugs) -> Table:
    """Bugs (root causes) by oracle: a mismatch by the two sides that disagree (``mutant-vs-seed``:
    metamorphic; ``model-vs-onnxruntime``; ``opt-vs-reference``: a fuzzed sequence against TVM's
    default pipeline...), every other symptom by itself (crash, exception, ill-formed IR...)."""
    roots: Counter[tuple[str, str]] = Counter(
        (level_of_kind(lines[0].kind), lines[0].comparison or lines[0].symptom) for lines in bugs.values())
    table = _table("Bugs by oracle", ("level", "oracle", "bugs (root causes)"))
    for (level, oracle), count in sorted(roots.items()):
        table.add_row(level, oracle, str(count))
    return table
