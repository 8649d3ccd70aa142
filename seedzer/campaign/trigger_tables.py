"""The tables ``status`` and the end-of-campaign summary show of the optimizations triggered: per level,
passes triggered (>= 1, >= 10 test cases) of passes run with the rarest and the never-triggered ones,
and the same figures over time (read-only; figures from :mod:`seedzer.campaign.triggers`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from seedzer.campaign.triggers import OFTEN, PassCount, TriggerTotals, level_totals
from seedzer.console import SafeTable

RAREST = 5
"""How many of the least-triggered passes a level's row names."""
NEVER_SHOWN = 12
"""How many never-triggered passes a level's row names (the rest are counted)."""


def _names(names: Sequence[str], most: int) -> str:
    shown = ", ".join(names[:most])
    return shown + (f" (+{len(names) - most})" if len(names) > most else "") if names else "-"


def triggers_table(counts: Mapping[tuple[str, str], PassCount]) -> SafeTable | None:
    """Per level: passes triggered at least once and at least :data:`OFTEN` times of those run, the
    rarest triggered ones (with their test cases) and those run but never triggered (None: no counts)."""
    if not counts:
        return None
    table = SafeTable(title="Optimizations triggered (a pass is triggered by a test case when it changed the IR)")
    for col in ("level", "passes run", "triggered ≥1", f"triggered ≥{OFTEN}", "rarest triggered", "never triggered"):
        table.add_column(col, justify="right" if col.startswith(("passes", "triggered")) else "left",
                         overflow="fold")
    for level, totals in level_totals(counts).items():
        mine = {name: c for (lv, name), c in counts.items() if lv == level}
        rare = sorted((c.triggered, name) for name, c in mine.items() if c.triggered)
        never = sorted(name for name, c in mine.items() if not c.triggered)
        table.add_row(level, str(totals.run), str(totals.once), str(totals.often),
                      _names([f"{name} {n}" for n, name in rare], RAREST), _names(never, NEVER_SHOWN))
    return table


def sampled_points(points: Sequence[tuple[float, dict[str, TriggerTotals]]],
                   minutes: float) -> list[tuple[float, dict[str, TriggerTotals]]]:
    """The first snapshot at or after every ``minutes`` of campaign time, and the last one."""
    if minutes <= 0 or not points:
        return []
    out: list[tuple[float, dict[str, TriggerTotals]]] = []
    due = minutes * 60.0
    for point in points:
        if point[0] >= due:
            out.append(point)
            while due <= point[0]:
                due += minutes * 60.0
    if points[-1] not in out:
        out.append(points[-1])
    return out


def triggers_over_time_table(points: Sequence[tuple[float, dict[str, TriggerTotals]]],
                             minutes: float) -> SafeTable | None:
    """Passes triggered (>= 1, >= 10) of passes run per level, every ``minutes`` of campaign time
    (None below two sampled snapshots with figures)."""
    rows = [(t, totals) for t, totals in sampled_points(points, minutes) if totals]
    if len(rows) < 2:
        return None
    levels = sorted({level for _, totals in rows for level in totals})
    table = SafeTable(title=f"Optimizations triggered over time ({minutes:g}-minute steps)",
                  caption=f"passes triggered by ≥1 and ≥{OFTEN} test cases, of passes run")
    table.add_column("minutes", justify="right")
    for level in levels:
        table.add_column(level, justify="right")
    for t, totals in rows:
        table.add_row(f"{t / 60:.1f}", *(totals[lv].text() if lv in totals else "-" for lv in levels))
    return table
