"""What ``seedzer bugs export`` copies, from where, and what it refuses to overwrite.

A root's report is taken from the newest of its sightings whose finding folder holds a ``report.md``
(a later campaign that found the root again but was not triaged does not hide an earlier report).
Every check happens before anything is written: a root asked for by name with no report in any
campaign is an error, and so is a file of an earlier export into the same folder that differs from
what would be copied now (a user's edits to ``report.md``), unless ``--force``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from seedzer.errors import UsageError
from seedzer.finding.layout import REPORT_FILE, REPRO_FILE
from seedzer.finding.minimal.program import MINIMAL_FILE, MINIMAL_RECORD
from seedzer.ledger.records import LedgerRoot
from seedzer.store.atomic import write_atomic

EXPORTED = (REPORT_FILE, MINIMAL_FILE, MINIMAL_RECORD, REPRO_FILE)
"""The files of a root's finding folder ``bugs export`` copies."""


@dataclass(frozen=True)
class RootExport:
    """One root's export: the finding folder its files come from and the folder they go to."""

    root: str
    source: Path
    target: Path

    def files(self) -> list[str]:
        """The names of :data:`EXPORTED` the source folder holds."""
        return [name for name in EXPORTED if (self.source / name).is_file()]

    def changed(self) -> list[Path]:
        """The files already in the target that differ from what would be copied (an earlier export,
        edited or made from another finding since)."""
        return [self.target / name for name in self.files()
                if (self.target / name).exists() and not _same(self.source / name, self.target / name)]


def _same(a: Path, b: Path) -> bool:
    try:
        return b.is_file() and a.read_bytes() == b.read_bytes()
    except OSError:
        return False


def report_folder(root: LedgerRoot) -> Path | None:
    """The finding folder of the root's newest sighting that holds a ``report.md`` (None: none does)."""
    for sighting in sorted(root.sightings, key=lambda s: (s.last_seen, s.first_seen), reverse=True):
        folder = Path(sighting.finding)
        if (folder / REPORT_FILE).is_file():
            return folder
    return None


@dataclass(frozen=True)
class ExportPlan:
    """The roots to export, and those chosen by state that have no report yet (skipped)."""

    exports: list[RootExport]
    unreported: list[LedgerRoot]


def plan_export(chosen: list[LedgerRoot], named: set[str], out: Path, force: bool) -> ExportPlan:
    """The export of ``chosen`` into ``out``, checked before anything is written: a root ``named`` on the
    command line without a report in any campaign, or a file of an earlier export that differs from its
    source (unless ``force``), is a one-line error."""
    exports, unreported = [], []
    for root in chosen:
        folder = report_folder(root)
        if folder is not None:
            exports.append(RootExport(root.root, folder, out / root.root))
        elif root.root in named:
            raise UsageError(f"{root.root}: no report.md in any of the {len(root.sightings)} campaign(s) that "
                             "found it (run `seedzer triage` on one); nothing was exported")
        else:
            unreported.append(root)
    if not force:
        changed = [path for export in exports for path in export.changed()]
        if changed:
            more = f" (and {len(changed) - 1} more file(s))" if len(changed) > 1 else ""
            raise UsageError(f"{changed[0]}: exists and differs from the report it would be replaced by (edited "
                             f"since an earlier export?){more}; nothing was exported (--force replaces them)")
    return ExportPlan(exports, unreported)


def export_root(export: RootExport) -> list[str]:
    """Copy the root's files (each one whole or not at all); the names copied."""
    export.target.mkdir(parents=True, exist_ok=True)
    names = export.files()
    for name in names:
        write_atomic(export.target / name, (export.source / name).read_bytes())
    return names
