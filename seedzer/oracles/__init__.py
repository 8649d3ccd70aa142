"""Oracles: turn an execution record into a bug outcome or nothing (DESIGN.md §7)."""

from seedzer.oracles.registry import ORACLES, judge, make_oracles

__all__ = ["ORACLES", "judge", "make_oracles"]
