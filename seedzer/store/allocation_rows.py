"""campaign.db's ``allocation`` table: the weights of levels, mutations and seed models over time.

Every snapshot of a campaign writes one row per arm of every group of its allocation
(:mod:`seedzer.campaign.allocation`): its draw weight then, its reward per worker-minute so far, the test
cases and roots credited to it and its worker-seconds. The table is created by
:data:`seedzer.store.db.SCHEMA` (``CREATE TABLE IF NOT EXISTS``), so a campaign made before it gains it,
empty, when it is opened. The allocation's own state (what ``--resume`` restores) is the meta value
:data:`STATE_META`.
"""

from __future__ import annotations

from dataclasses import dataclass

STATE_META = "allocation_state"
"""The meta key of the allocation's saved state (:meth:`seedzer.campaign.allocation.Allocation.to_json`)."""


@dataclass(frozen=True)
class ArmRow:
    """One arm of one group as the reports show it: its draw weight, its reward per worker-minute so
    far, the test cases and the new roots credited to it, and its worker-seconds."""

    group: str
    arm: str
    weight: float
    reward_per_minute: float
    runs: int
    roots: int
    seconds: float


@dataclass(frozen=True)
class AllocationSnapshot:
    """Every arm's row at one time (campaign seconds since its start, as snapshots count)."""

    time: float
    arms: tuple[ArmRow, ...]
