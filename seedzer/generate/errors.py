"""Errors of seed generation: per-model rejections (counted) and run-level failures (reported)."""

from __future__ import annotations

from seedzer.errors import SeedzerError


class Rejected(Exception):
    """One attempt produced no usable model. ``reason`` is short and countable; ``detail`` is free."""

    def __init__(self, reason: str, detail: str = "") -> None:
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason = reason
        self.detail = detail


class GenerationError(SeedzerError):
    """A generation run cannot produce models at all (message names the heuristic and reasons)."""
