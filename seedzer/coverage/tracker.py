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
from seedzer.protocols import CoverageBackend

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


class CoverageTracker(CoverageBackend):
    """Implements :class:`~seedzer.protocols.CoverageBackend` for ``chosen``, tracking every family."""

    def __init__(self, chosen: str) -> None:
        self.name = chosen
        self.sets: dict[str, FeatureSet] = {"passes": FeatureSet("passes")}
        if chosen != "passes":
            self.sets[chosen] = FeatureSet(chosen)
        self._split: dict[str, int] = {f"{chosen}_{part}": 0 for part in SPLITS.get(chosen, ())}

    def _by_family(self, features: Iterable[str]) -> dict[str, list[str]]:
        """The features of each tracked family (one prefix test per feature and native family;
        the rest are ``passes`` features)."""
        features = features if isinstance(features, list | tuple | set | frozenset) else list(features)
        out: dict[str, list[str]] = {}
        for name in self.sets:
            prefix = PREFIXES.get(name)
            if prefix is not None:
                out[name] = [f for f in features if f.startswith(prefix)]
        native = tuple(PREFIXES.values())
        out["passes"] = [f for f in features if not f.startswith(native)]
        return out

    def _count_split(self, family: str, new: set[str]) -> None:
        """Count the chosen backend's new features into its sub-totals."""
        if family != self.name or family == "passes" or not new:
            return
        for part in SPLITS.get(family, ()):
            start = f"{PREFIXES[family]}{part}:"
            self._split[f"{family}_{part}"] += sum(1 for f in new if f.startswith(start))

    def new_since_last(self, features: Iterable[str]) -> int:
        """Merge one execution's features; return how many of the chosen backend's were new."""
        gain = 0
        for fam, feats in self._by_family(features).items():
            new = self.sets[fam].merge(feats)
            self._count_split(fam, new)
            gain = len(new) if fam == self.name else gain
        return gain

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
            fs = self.sets[fam]
            self._count_split(fam, {f for f in feats if f not in fs})
            fs.restore(feats)
