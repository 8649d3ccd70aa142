"""Executions and findings by level (the registered levels; ``load`` for findings made loading the pool).

A campaign records its executions by level in campaign.db's ``level_summary``; a campaign from
before the levels has no such table (or no rows there) and fuzzed the TIR level only, so all its
executions count as ``tir``. A finding's level follows from its ``kind``
(:func:`seedzer.finding.registry.level_of_kind`).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import pandas as pd

from seedzer.finding.meta import OLDEST_KIND, canonical_kind
from seedzer.finding.registry import POOL_KIND
from seedzer.level_table import level_names
from seedzer.store.reader import CampaignReader

OLD_LEVEL = OLDEST_KIND
"""The level of every execution of a campaign without ``level_summary`` (the only level there was)."""
LEVEL_COLUMNS = ["experiment", "heuristic", "trial", "level", "execs", "findings"]
"""One trial's executions and distinct finding signatures at one level."""
ARM_COLUMNS = ["heuristic", "level", "trials", "median_execs", "total_execs", "execs_share", "unique_findings"]


def finding_level(kind: str | None) -> str:
    """The level of a finding of ``kind`` (a finding without one is a TIR-level finding)."""
    return canonical_kind(kind)


def execs_by_level(reader: CampaignReader, last_execs: int) -> dict[str, int]:
    """Executions by level from ``level_summary``; without that table or its rows, ``last_execs``
    (the campaign's last snapshot) all at the TIR level."""
    counts: Counter[str] = Counter()
    for row in reader.level_counts():
        counts[row.level] += row.count
    return dict(sorted(counts.items())) if any(counts.values()) else {OLD_LEVEL: int(last_execs)}


def level_order() -> tuple[str, ...]:
    """Levels in the order tables show them: the registered levels, then the pool's kind (others
    follow, sorted)."""
    return (*level_names(), POOL_KIND)


def _order(levels: Any) -> list[str]:
    names, order = set(levels), level_order()
    return [lv for lv in order if lv in names] + sorted(names - set(order))


def trial_rows(ident: dict[str, Any], execs: dict[str, int], findings: pd.DataFrame) -> pd.DataFrame:
    """One trial's rows of :data:`LEVEL_COLUMNS`: every level it executed or found something at."""
    found = findings.groupby("level")["signature"].nunique() if not findings.empty else pd.Series(dtype=int)
    rows = [{**ident, "level": lv, "execs": int(execs.get(lv, 0)), "findings": int(found.get(lv, 0))}
            for lv in _order([*execs, *found.index])]
    return pd.DataFrame(rows, columns=LEVEL_COLUMNS)


def by_arm(levels: pd.DataFrame, findings: pd.DataFrame, trials: pd.DataFrame) -> pd.DataFrame:
    """Per arm (``heuristic``) and level: its trials, the median and total executions over them (a
    trial without executions at a level counts 0), that level's share (%) of the arm's executions
    and the distinct finding signatures found there over all the arm's trials."""
    if trials.empty:
        return pd.DataFrame(columns=ARM_COLUMNS)
    level_names = _order([*levels["level"], *(findings["level"] if not findings.empty else [])])
    rows = []
    for arm, arm_trials in trials.groupby("heuristic", sort=True):
        n = arm_trials["trial"].nunique()
        mine = levels[levels["heuristic"] == arm]
        total_all = int(mine["execs"].sum())
        arm_finds = findings[findings["heuristic"] == arm] if not findings.empty else findings
        for lv in level_names:
            at = mine[mine["level"] == lv]
            per_trial = at.groupby("trial")["execs"].sum().reindex(arm_trials["trial"].unique(), fill_value=0)
            total = int(at["execs"].sum())
            uniq = int(arm_finds.loc[arm_finds["level"] == lv, "signature"].nunique()) if not arm_finds.empty else 0
            if total == 0 and uniq == 0 and lv not in set(mine["level"]):
                continue
            rows.append({"heuristic": arm, "level": lv, "trials": n, "median_execs": float(per_trial.median()),
                         "total_execs": total, "execs_share": round(100.0 * total / total_all, 1) if total_all else 0.0,
                         "unique_findings": uniq})
    return pd.DataFrame(rows, columns=ARM_COLUMNS)
