"""The allocation's tables of ``status`` and the end-of-campaign summary: where the workers' time went,
what each level and mutation yielded per worker-minute, and their weights over time
(:mod:`seedzer.campaign.allocation`)."""

from __future__ import annotations

from seedzer.console import SafeTable
from seedzer.store.allocation_rows import AllocationSnapshot, ArmRow

TOP_MODELS = 8
"""Seed models shown, the most weighted first (a pool may hold hundreds)."""
MOMENTS = 6
"""Snapshots the weights-over-time table shows at most (evenly spread, the last included)."""


def _group_title(group: str) -> str:
    return "mutation" if group.startswith("mutation:") else group


def allocation_table(snapshots: list[AllocationSnapshot], adaptive: bool) -> SafeTable | None:
    """One row per arm (levels, each level's mutations, the most weighted seed models): its draw weight at
    the start and now, its reward per worker-minute, test cases run and new bug roots credited to it;
    None for a campaign from before the allocation."""
    if not snapshots:
        return None
    first = {(a.group, a.arm): a for a in snapshots[0].arms}
    mode = "adaptive" if adaptive else "fixed"
    table = SafeTable(title=f"Allocation ({mode} weights; reward per worker-minute: new coverage, first triggers, "
                            "roots new to the ledger)")
    for name in ("family", "arm", "weight at start", "weight now", "reward / worker-min", "test cases",
                 "new roots", "worker-min"):
        table.add_column(name, justify="left" if name in ("family", "arm") else "right")
    arms = list(snapshots[-1].arms)
    models = sorted((a for a in arms if a.group == "model"), key=lambda a: -a.weight)[:TOP_MODELS]
    for row in [a for a in arms if a.group != "model"] + models:
        table.add_row(_group_title(row.group) + ("" if ":" not in row.group else f" ({row.group.split(':', 1)[1]})"),
                      row.arm, _share(first.get((row.group, row.arm))), _share(row),
                      f"{row.reward_per_minute:.2f}", str(row.runs), str(row.roots), f"{row.seconds / 60:.1f}")
    return table


def _share(row: ArmRow | None) -> str:
    return "" if row is None else f"{100 * row.weight:.1f}%"


def weights_over_time_table(snapshots: list[AllocationSnapshot]) -> SafeTable | None:
    """The levels' weights at up to :data:`MOMENTS` snapshots (campaign minutes); None with fewer than two."""
    if len(snapshots) < 2:
        return None
    step = max(1, len(snapshots) // MOMENTS)
    chosen = [*snapshots[::step][: MOMENTS - 1], snapshots[-1]]
    levels = sorted({a.arm for s in chosen for a in s.arms if a.group == "level"})
    table = SafeTable(title="Level weights over time")
    table.add_column("minute", justify="right")
    for name in levels:
        table.add_column(name, justify="right")
    for snap in chosen:
        weights = {a.arm: a for a in snap.arms if a.group == "level"}
        table.add_row(f"{snap.time / 60:.1f}", *(_share(weights.get(name)) for name in levels))
    return table
