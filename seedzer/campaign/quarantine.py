"""Corpus entries a campaign stops fuzzing: those its workers keep dying on, and those a resumed
campaign cannot read back as they were written.

A worker that exits by itself while running a test case of an entry (an uncaught exception in
Seedzer's own code: an unreadable model, a mutator's bug) is restarted; on the
:data:`QUARANTINE_DEATHS`-th such death on one entry the entry is *quarantined*: one line says so, it
is never chosen again (nor run again as a seed), and campaign.db remembers it (meta ``quarantined``)
so a resumed campaign leaves it out too. A campaign whose every entry is quarantined cannot fuzz: it
stops with a one-line error (exit status 2), never by spending its budget on restarts.

On ``--resume`` every entry read back is asked of its level (:meth:`seedzer.levels.level.Level.check_entry`:
a graph entry must name one of the pool's models, the manifest's containment; a schedule entry's plan
must be a trace); one it refuses is skipped with one line, and a campaign none of whose entries can be
fuzzed cannot be resumed.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path

from seedzer.errors import CampaignError, SeedzerError
from seedzer.levels.registry import level
from seedzer.store.corpus import Corpus, CorpusEntry, EntryCheck, EntryFault
from seedzer.store.db import CampaignDB

QUARANTINE_DEATHS = 3
"""Deaths of a worker on test cases of one corpus entry that quarantine it (one or two may be chance:
a worker killed by an operator, a machine short of memory)."""
QUARANTINE_META = "quarantined"
"""campaign.db meta key: corpus entry id -> why it was quarantined."""


class Quarantine:
    """The quarantined entries of one campaign and the deaths counted towards it (module docstring)."""

    def __init__(self, db: CampaignDB, corpus: Corpus, say: Callable[[str], None]) -> None:
        self.db, self.corpus, self.say = db, corpus, say
        stored = db.get_meta(QUARANTINE_META, {})
        self.entries: dict[str, str] = {str(k): str(v) for k, v in stored.items()} if isinstance(stored, dict) else {}
        """Quarantined entry id -> the reason."""
        self.deaths: Counter[str] = Counter()

    def __contains__(self, seed_id: object) -> bool:
        return seed_id in self.entries

    def death(self, entry: CorpusEntry, how: str) -> bool:
        """A worker exited by itself on a test case of ``entry`` (``how``: its exit, one line); True when
        that quarantines the entry."""
        if entry.seed_id in self.entries:
            return False
        self.deaths[entry.seed_id] += 1
        if self.deaths[entry.seed_id] < QUARANTINE_DEATHS:
            return False
        reason = f"a worker died on it {QUARANTINE_DEATHS} times ({how})"
        self.entries[entry.seed_id] = reason
        self.db.set_meta(QUARANTINE_META, self.entries)
        self.db.add_event("quarantine", {"entry": entry.seed_id, "level": entry.level, "reason": reason})
        self.corpus.withdraw(entry.seed_id)
        self.say(f"corpus entry {entry.seed_id} ({entry.level}, from {entry.origin}): quarantined, {reason}; "
                 "it is not chosen again")
        return True

    def check_left(self) -> None:
        """A one-line error when no entry is left to fuzz (every one quarantined)."""
        if self.entries and not any(self.corpus.levels.values()):
            raise CampaignError(f"{self.corpus.root}: cannot fuzz: every corpus entry is quarantined "
                                f"({len(self.entries)}, e.g. {next(iter(self.entries.values()))})")

    def entry_check(self, models: Sequence[Path]) -> EntryCheck:
        """The check of an entry read back on ``--resume`` (:meth:`Corpus.restore`): not quarantined, and
        accepted by its level for a pool of ``models``."""
        resolved = [Path(m).resolve() for m in models]

        def check(level_name: str, script: str, passes: str) -> EntryFault | None:
            try:
                return level(level_name).check_entry(script, passes, resolved)
            except SeedzerError as exc:  # a level this Seedzer does not know
                return EntryFault(str(exc))

        return check

    def restored(self, skipped: dict[str, str]) -> None:
        """Report what :meth:`Corpus.restore` left out: one line per refused entry, one for those
        quarantined before (which are withdrawn now)."""
        for seed_id in self.entries:
            self.corpus.withdraw(seed_id)
        for seed_id, reason in skipped.items():
            self.say(f"warning: corpus entry {seed_id} skipped: {reason}")
            self.db.add_event("corpus_skipped", {"entry": seed_id, "reason": reason})
        if self.entries:
            self.say(f"{len(self.entries)} corpus entr{'y stays' if len(self.entries) == 1 else 'ies stay'} "
                     "quarantined (campaign.db meta 'quarantined')")
