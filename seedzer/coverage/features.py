"""Campaign-side coverage as a set of feature strings (no TVM import)."""

from __future__ import annotations

from collections.abc import Iterable

from seedzer.protocols import CoverageBackend


class FeatureSet(CoverageBackend):
    """A growing set of coverage features; implements :class:`~seedzer.protocols.CoverageBackend`."""

    def __init__(self, name: str, initial: Iterable[str] = ()) -> None:
        self.name = name
        self._seen: set[str] = set(initial)
        self._fresh: list[str] = []

    def new_since_last(self, features: Iterable[str]) -> int:
        """Merge one execution's features; return how many were never seen before."""
        return len(self.merge(features))

    def merge(self, features: Iterable[str]) -> set[str]:
        """Merge one execution's features; return those never seen before (one set difference: a
        worker's first results carry every block it reached, hundreds of thousands of them)."""
        new = set(features)
        new.difference_update(self._seen)
        self._seen.update(new)
        self._fresh.extend(new)
        return new

    def __contains__(self, feature: object) -> bool:
        """True when ``feature`` has been seen."""
        return feature in self._seen

    def total(self) -> int:
        """Distinct features seen so far."""
        return len(self._seen)

    def snapshot(self) -> list[str]:
        """All features seen so far, sorted (stable for diffs between trials)."""
        return sorted(self._seen)

    def drain_fresh(self) -> list[str]:
        """Features first seen since the previous call (for incremental persistence)."""
        fresh, self._fresh = self._fresh, []
        return fresh

    def restore(self, features: Iterable[str]) -> None:
        """Re-seed the set from persisted features on ``--resume`` (not counted as fresh)."""
        self._seen.update(features)
