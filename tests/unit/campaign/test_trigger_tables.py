"""The tables of optimizations triggered: per level (rarest and never-triggered passes named) and over time."""

from __future__ import annotations

from rich.console import Console

from seedzer.campaign.trigger_tables import sampled_points, triggers_over_time_table, triggers_table
from seedzer.campaign.triggers import PassCount, TriggerTotals


def _text(table: object) -> str:
    console = Console(record=True, width=200)
    console.print(table)
    return console.export_text()


def test_the_level_table_names_the_rarest_triggered_and_the_never_triggered_passes() -> None:
    counts = {("tir", "tirx.Simplify"): PassCount(30, 12), ("tir", "s_tir.LoopPartition"): PassCount(30, 2),
              ("tir", "tirx.LowerIntrin"): PassCount(30, 0), ("graph", "FoldConstant"): PassCount(4, 1)}
    shown = _text(triggers_table(counts))
    assert "s_tir.LoopPartition 2, tirx.Simplify 12" in shown and "tirx.LowerIntrin" in shown
    tir_row = next(line for line in shown.splitlines() if "│ tir" in line)
    assert [cell.strip() for cell in tir_row.split("│")[2:5]] == ["3", "2", "1"]
    assert triggers_table({}) is None


def test_points_are_sampled_every_step_with_the_last_one() -> None:
    points = [(float(t), {"tir": TriggerTotals(t, t // 2, 0)}) for t in (0, 30, 61, 90, 125, 130)]
    assert [t for t, _ in sampled_points(points, 1.0)] == [61.0, 125.0, 130.0]
    assert sampled_points(points, 0) == []


def test_the_over_time_table_needs_two_points_with_figures() -> None:
    points = [(60.0, {"tir": TriggerTotals(10, 4, 1)}), (120.0, {"tir": TriggerTotals(12, 6, 2)})]
    shown = _text(triggers_over_time_table(points, 1.0))
    assert "6 (≥1), 2 (≥10) of 12" in shown and "2.0" in shown
    assert triggers_over_time_table([(60.0, {}), (120.0, {})], 1.0) is None
