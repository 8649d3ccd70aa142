"""Campaign-side coverage over every backend at once (TVM-free).

Every execution record carries the ``passes`` features; with a native backend (``breakpoints``,
``sancov``) it also carries that backend's prefixed features. :class:`CoverageTracker` keeps one
:class:`FeatureSet` per family so snapshots can store every total, while ``new_since_last`` and
``total`` answer for the *chosen* backend only (what decides whether a test case is kept, and what
``snapshots.coverage`` means).
"""

from __future__ import annotations

from collections.abc import Iterable

from seedzer.coverage.features import FeatureSet

PREFIXES: dict[str, str] = {"breakpoints": "bp:", "sancov": "sc:"}
"""Feature prefix of each native backend; anything without one of them is a ``passes`` feature."""

SPLITS: dict[str, tuple[str, ...]] = {"breakpoints": ("tvm", "llvm")}
"""Sub-totals kept per backend: the second field of the feature (``bp:tvm:...`` / ``bp:llvm:...``)."""


def family_of(feature: str) -> str:
    """The backend a feature belongs to (``passes`` unless it has a native prefix)."""
    for name, prefix in PREFIXES.items():
        if feature.startswith(prefix):
            return name
    return "passes"


class CoverageTracker:
    """Implements :class:`~seedzer.protocols.CoverageBackend` for ``chosen``, tracking every family."""

    def __init__(self, chosen: str) -> None:
        self.name = chosen
        self.sets: dict[str, FeatureSet] = {"passes": FeatureSet("passes")}
        if chosen != "passes":
            self.sets[chosen] = FeatureSet(chosen)
        self._split: dict[str, int] = {f"{chosen}_{part}": 0 for part in SPLITS.get(chosen, ())}

    def _by_family(self, features: Iterable[str]) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {name: [] for name in self.sets}
        for f in features:
            fam = family_of(f)
            if fam in out:
                out[fam].append(f)
        return out

    def _count_split(self, features: Iterable[str]) -> None:
        for f in features:
            key = f"{self.name}_{f.split(':', 2)[1]}" if f.count(":") >= 2 else ""
            if key in self._split:
                self._split[key] += 1

    def new_since_last(self, features: Iterable[str]) -> int:
        """Merge one execution's features; return how many of the chosen backend's were new."""
        gains = {}
        for fam, feats in self._by_family(features).items():
            fs = self.sets[fam]
            if fam == self.name and fam != "passes":
                self._count_split({f for f in feats if f not in fs})
            gains[fam] = fs.new_since_last(feats)
        return gains[self.name]

    def total(self) -> int:
        """Distinct features of the chosen backend."""
        return self.sets[self.name].total()

    def detail(self) -> dict[str, int]:
        """Every total: per family (``passes``, ``breakpoints``...) and the chosen backend's split."""
        return {**{name: fs.total() for name, fs in self.sets.items()}, **self._split}

    def snapshot(self) -> list[str]:
        """All features of every family, sorted."""
        return sorted(f for fs in self.sets.values() for f in fs.snapshot())

    def drain_fresh(self) -> list[str]:
        """Features of every family first seen since the previous call."""
        return [f for fs in self.sets.values() for f in fs.drain_fresh()]

    def restore(self, features: Iterable[str]) -> None:
        """Re-seed from persisted features (``--resume``); features of other backends are ignored."""
        for fam, feats in self._by_family(features).items():
            if fam == self.name and fam != "passes":
                self._count_split({f for f in feats if f not in self.sets[fam]})
            self.sets[fam].restore(feats)
