"""What the ledger holds, as typed records (no SQL here)."""

from __future__ import annotations

from dataclasses import dataclass, field

NEW, REPORTED, FIXED, WONT_FIX = "new", "reported", "fixed", "wont-fix"
STATES = (NEW, REPORTED, FIXED, WONT_FIX)
"""The states a user gives a root."""
KNOWN_STATES = (REPORTED, FIXED, WONT_FIX)
"""States that make a campaign count a root as known instead of reporting it again."""
CAMPAIGN, TRIAL, RECHECK, IMPORT = "campaign", "trial", "recheck", "import"
"""What recorded a sighting: a campaign's end, an experiment trial's, ``recheck``, or ``seedzer bugs add``."""


@dataclass(frozen=True)
class RootSighting:
    """One campaign's finding of one root: what it is, where (the campaign directory and a finding folder
    holding its reproducers), how often and when (seconds since the epoch)."""

    root: str
    kind: str
    symptom: str
    culprit: str
    headline: str
    campaign: str
    finding: str
    count: int
    first_seen: float
    last_seen: float


@dataclass(frozen=True)
class VersionVerdict:
    """How a root's plain reproducer ended on one TVM: ``present``, ``fixed``, ``cannot-run``..."""

    version: str
    verdict: str
    detail: str = ""
    checked: float = 0.0


@dataclass(frozen=True)
class Sighting:
    """A campaign that found a root: its directory, what recorded it, the finding folder, the count."""

    campaign: str
    source: str
    finding: str
    count: int
    first_seen: float
    last_seen: float


@dataclass(frozen=True)
class LedgerRoot:
    """One root as the ledger knows it."""

    root: str
    kind: str
    symptom: str
    culprit: str
    headline: str
    first_seen: float
    last_seen: float
    state: str = NEW
    link: str = ""
    note: str = ""
    sightings: tuple[Sighting, ...] = ()
    versions: tuple[VersionVerdict, ...] = field(default_factory=tuple)
    merged_into: str = ""
    """The roots a ``recheck`` re-keyed this one's findings under (comma-separated; empty: none)."""

    @property
    def campaigns(self) -> tuple[str, ...]:
        """The campaign directories that found it."""
        return tuple(dict.fromkeys(s.campaign for s in self.sightings))

    def affected(self) -> tuple[str, ...]:
        """The TVM versions its reproducer shows it in."""
        return tuple(v.version for v in self.versions if v.verdict == "present")
