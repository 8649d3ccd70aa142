"""What happened to one test case once the campaign took in its worker's event (after LibAFL's
``ExecuteInputResult``).

Taking an event in (:mod:`seedzer.campaign.intake` for a result, :mod:`seedzer.campaign.deaths` for a
worker's death) judges and counts it, merges its coverage and updates its parent at once; what must
be written (a corpus entry, a finding, a filtered sample) is the :class:`Outcome`'s payload, which the
loop acts on after it fed the idle workers (:meth:`seedzer.campaign.loop.Campaign.act`): the worker
gets its next test case before the campaign writes to disk.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from seedzer.campaign.filing import Candidate
from seedzer.execute.records import TestCaseInfo
from seedzer.kernel.common import Observation
from seedzer.store.corpus import CorpusEntry


class Fate(enum.Enum):
    """What happened to a test case."""

    NOTHING = "nothing"
    """No test case ended: an announcement, or a worker's death between test cases (or before it
    announced the one it ran)."""
    NOT_INTERESTING = "not interesting"
    """It ran cleanly and reached nothing new (a seed's own run included): not kept."""
    KEPT = "kept"
    """It reached coverage never seen before, cleanly: it joins the corpus."""
    NEW_CANDIDATE = "new candidate"
    """A bug observation of a raw signature never seen: filed, it waits for the gate."""
    REPEAT = "repeat"
    """A bug observation of a raw signature filed before: one more occurrence of that finding."""
    FILTERED = "filtered"
    """Turned away before the gate (invalid, slow, out of memory, killed from outside): counted by
    reason and pass, sampled (:mod:`seedzer.campaign.filtered`)."""
    INVALID = "invalid"
    """Judged invalid where no sample is kept: a crash or hang of a worker whose oracle is off."""


@dataclass(frozen=True)
class Keep:
    """A test case that joins the corpus: its entry and what the campaign learns with it."""

    entry: CorpusEntry
    gain: int
    """Coverage features it reached first."""
    mutations: tuple[str, ...]
    seconds: float
    """What running it cost (the worker's busy seconds)."""
    features: tuple[str, ...]
    triggered: tuple[str, ...]
    """The passes it triggered (changed the IR)."""


@dataclass(frozen=True)
class Turned:
    """A test case turned away before the gate: the verdict it was turned away with and, when an oracle
    turned it invalid, what the worker observed (``raw``: the sample reproduces that)."""

    observation: Observation
    tc: TestCaseInfo
    worker: int
    raw: Observation | None = None


@dataclass(frozen=True)
class Outcome:
    """One test case's fate and what acting on it needs (see the module docstring)."""

    fate: Fate
    keep: Keep | None = None
    candidate: Candidate | None = None
    turned: Turned | None = None

    @staticmethod
    def nothing() -> Outcome:
        """No test case ended."""
        return Outcome(Fate.NOTHING)

    @staticmethod
    def not_interesting() -> Outcome:
        """Ran cleanly, nothing new."""
        return Outcome(Fate.NOT_INTERESTING)

    @staticmethod
    def invalid() -> Outcome:
        """Judged invalid, nothing to sample."""
        return Outcome(Fate.INVALID)

    @staticmethod
    def kept(keep: Keep) -> Outcome:
        """Joins the corpus."""
        return Outcome(Fate.KEPT, keep=keep)

    @staticmethod
    def bug(candidate: Candidate) -> Outcome:
        """A bug observation: a new candidate or a repeat, as filing classified it."""
        return Outcome(Fate.REPEAT if candidate.repeat else Fate.NEW_CANDIDATE, candidate=candidate)

    @staticmethod
    def filtered(turned: Turned) -> Outcome:
        """Turned away before the gate."""
        return Outcome(Fate.FILTERED, turned=turned)
