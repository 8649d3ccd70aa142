"""corpus/: the joint seeds kept by the campaign, as TVMScript text plus a pass-sequence file."""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from seedzer.errors import CampaignError, SeedzerError
from seedzer.level_table import level_entry, level_of_path
from seedzer.seed import JointSeed, PassSpec, passes_from_json, passes_to_json
from seedzer.store.atomic import write_atomic
from seedzer.store.db import CampaignDB, CorpusRow


@dataclass(frozen=True)
class EntryFault:
    """Why a corpus entry read back cannot be fuzzed (one line), and which of its files is at fault."""

    reason: str
    in_sequence: bool = False
    """Whether its sequence file (``<id>.passes.json``: a schedule entry's plan) is at fault rather than
    its script file (``<id><suffix>``)."""


EntryCheck = Callable[[str, str, str], EntryFault | None]
"""``(level, script, sequence JSON) -> why the entry cannot be fuzzed`` (None: it can), asked of every
restored entry."""
CORPUS_DIR = "corpus"
"""A campaign's corpus folder: ``<id><suffix>`` (the entry's script; the suffix is its level's,
:attr:`seedzer.level_table.LevelEntry.suffix`) and ``<id>.passes.json`` per entry."""
PASSES_SUFFIX = ".passes.json"
"""The suffix of an entry's sequence file (``<id>.passes.json``)."""


def entry_id(level: str, script: str, passes: Sequence[PassSpec] = ()) -> str:
    """A corpus entry's identity (16 hex characters): a content hash of its level, script and sequence.
    Two levels may hold one script with one sequence (the TIR and the schedule levels' seeds are one
    PrimFunc with none), and are two entries; an entry's id is read back from campaign.db, never
    computed again, so ids of older campaigns (script and sequence only) stay as they were."""
    content = JointSeed(script, list(passes)).seed_id
    return hashlib.sha256(f"{level}\x1f{content}".encode()).hexdigest()[:16]


@dataclass
class CorpusEntry:
    """A corpus entry in memory: a test case of ``level`` (its script, pass sequence and where it came
    from); the campaign holds scripts as text and never parses them."""

    seed_id: str
    script: str
    passes: str
    origin: str
    parent: str | None = None
    op: str = ""
    failures: int = 0
    executed: bool = False
    worker: int | None = None
    """The worker that ran it (its parsed IR is in that worker's cache); not persisted."""
    cost: float | None = None
    """Measured seconds of a test case made from it (its own run, then its mutants'); not persisted."""
    chosen: int = 0
    """Times the scheduler chose it for mutation in this session; not persisted."""
    triggered: tuple[str, ...] = ()
    """The passes its own run triggered (changed the IR: :mod:`seedzer.coverage.triggers`); not persisted."""
    level: str = field(kw_only=True)
    """The level it lives at (:mod:`seedzer.level_table`)."""


class Corpus:
    """The in-memory corpus, persisted entry by entry (files first, then the database row)."""

    def __init__(self, root: Path, db: CampaignDB) -> None:
        self.root = Path(root)
        self.db = db
        self.entries: list[CorpusEntry] = []
        self.by_id: dict[str, CorpusEntry] = {}
        self.levels: dict[str, list[CorpusEntry]] = {}
        """The entries of each level, in the order they were kept."""

    def __len__(self) -> int:
        return len(self.entries)

    def add(self, entry: CorpusEntry, coverage_gain: int, mutators: list[str] | None = None) -> bool:
        """Persist and keep ``entry``; False if an entry with the same id already exists."""
        if entry.seed_id in self.by_id:
            return False
        path = self.root / f"{entry.seed_id}{level_entry(entry.level).suffix}"
        write_atomic(self.root / f"{entry.seed_id}{PASSES_SUFFIX}", entry.passes)
        write_atomic(path, entry.script)
        self.db.add_corpus(CorpusRow(entry.seed_id, entry.parent, entry.origin, entry.passes, coverage_gain,
                                     time.time(), str(path.relative_to(self.root.parent)), entry.op,
                                     json.dumps(mutators or []), entry.level))
        self._keep(entry)
        return True

    def withdraw(self, seed_id: str) -> None:
        """Stop choosing the entry ``seed_id`` (quarantined): it leaves the entries of its level, and stays
        known by id (so it is never added again); its files and database row stay."""
        entry = self.by_id.get(seed_id)
        if entry is None:
            return
        self.entries = [e for e in self.entries if e.seed_id != seed_id]
        if entry.level in self.levels:
            self.levels[entry.level] = [e for e in self.levels[entry.level] if e.seed_id != seed_id]

    def _keep(self, entry: CorpusEntry) -> None:
        self.entries.append(entry)
        self.by_id[entry.seed_id] = entry
        self.levels.setdefault(entry.level, []).append(entry)

    def restore(self, check: EntryCheck | None = None, skipped: dict[str, str] | None = None) -> int:
        """Reload every entry recorded in campaign.db whose files exist (used by ``--resume``).

        A campaign whose recorded entries have all lost their files is a one-line error naming the
        corpus folder. An entry kept from a run (it has a parent) or one that has children was executed; only
        seeds loaded but not yet run before the stop are executed again (re-running the whole
        corpus would spend minutes of a resumed campaign without a single mutation).

        ``check`` judges each entry read back (its files may have been edited since: its script, and its
        sequence, read from ``<id>.passes.json`` before campaign.db's copy): an entry it refuses, or whose
        sequence is not one, is left out, its id and reason, after the file at fault, put into ``skipped``;
        when it refuses every entry, the campaign cannot be resumed (a one-line error).
        """
        restored = 0
        refused: dict[str, str] = {} if skipped is None else skipped
        rows = self.db.corpus_rows()
        parents = {row.parent for row in rows}
        for row in rows:
            path = self.root.parent / row.path
            try:
                script = path.read_text()
                level = row.level or level_of_path(row.path)
            except (OSError, UnicodeDecodeError, SeedzerError):
                continue
            sequence = self._sequence(row)
            try:
                passes = passes_to_json(passes_from_json(sequence))
            except (ValueError, KeyError, TypeError, AttributeError) as exc:
                where = self.root / f"{row.id}{PASSES_SUFFIX}"
                refused[row.id] = f"{where}: not a sequence ({type(exc).__name__}: {exc})"
                continue
            fault = check(level, script, passes) if check is not None else None
            if fault is not None:
                where = self.root / f"{row.id}{PASSES_SUFFIX}" if fault.in_sequence else path
                refused[row.id] = f"{where}: {fault.reason}"
                continue
            executed = row.parent is not None or row.id in parents
            self._keep(CorpusEntry(row.id, script, passes, row.origin_model, row.parent, row.op, executed=executed,
                                   level=level))
            restored += 1
        if rows and not restored and refused:
            raise CampaignError(f"{self.root}: none of the {len(rows)} corpus entries campaign.db records can be "
                                f"fuzzed (e.g. {next(iter(refused.values()))}); this campaign cannot be resumed")
        if rows and not restored:  # a few lost files are skipped; all of them is a damaged campaign
            raise corpus_lost(self.root, len(rows))
        return restored


    def _sequence(self, row: CorpusRow) -> str:
        """An entry's sequence as its file ``<id>.passes.json`` holds it (edited by hand, perhaps), else as
        campaign.db recorded it."""
        try:
            return (self.root / f"{row.id}{PASSES_SUFFIX}").read_text()
        except (OSError, UnicodeDecodeError):
            return str(row.passes)


def corpus_lost(root: Path, recorded: int) -> CampaignError:
    """The error of a campaign none of whose ``recorded`` corpus entries has its file under ``root``."""
    return CampaignError(f"{root}: none of the {recorded} corpus entries campaign.db records has its file "
                         "(deleted?); this campaign cannot be resumed, start a new one")


def lost_corpus_files(campaign: Path, paths: list[str]) -> bool:
    """Whether every recorded corpus file (``paths`` relative to ``campaign``) is gone (False if none recorded)."""
    return bool(paths) and not any((Path(campaign) / p).is_file() for p in paths)
