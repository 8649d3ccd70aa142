"""The epochs table of ``status`` and the end-of-campaign summary (campaigns run with ``--epochs``)."""

from __future__ import annotations

from seedzer.console import SafeTable
from seedzer.generate.bandit import top_weights
from seedzer.store.epoch_rows import EpochRow

TOP = 3
"""Operators shown per epoch, the most weighted first."""


def _minutes(seconds: float | None) -> str:
    return "" if seconds is None else f"{seconds / 60:.1f}"


def epoch_table(rows: list[EpochRow]) -> SafeTable | None:
    """One row per epoch: when it started and ended (campaign minutes), models made and loaded, its
    most weighted NNSmith operators (and importer operators, when it inserted some, and attribute values)
with their weights,
    and coverage and bug roots at its end (so far, for the epoch running); None without epochs."""
    if not rows:
        return None
    table = SafeTable(title="Generation epochs (weights: epochs/epoch-<k>/weights.json)")
    for name in ("epoch", "minutes", "models made/loaded", "top weighted operators", "coverage at end",
                 "bug roots at end"):
        table.add_column(name)
    for row in rows:
        tops = ", ".join(f"{op} {w:.2f}" for op, w in top_weights(row.weights, TOP))
        inserted = ", ".join(f"{op} {w:.2f}" for op, w in top_weights(row.onnx_weights, TOP))
        shown = tops if row.epoch else "(the pool given)"
        if inserted and row.epoch:
            shown += f"; inserted: {inserted}"
        attributes = ", ".join(f"{a} {w:.2f}" for a, w in top_weights(row.attribute_weights, TOP))
        if attributes and row.epoch:
            shown += f"; attributes: {attributes}"
        span = f"{_minutes(row.started)}-{_minutes(row.ended)}" if row.started is not None else "not started"
        table.add_row(str(row.epoch), span, f"{row.made}/{row.loaded}", shown or "(uniform)",
                      "" if row.coverage is None else str(row.coverage), "" if row.roots is None else str(row.roots))
    return table
