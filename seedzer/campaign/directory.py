"""A campaign directory's layout: checking it, creating it, and taking back a new one that could not
be made (a full disk, a read-only medium) so that it holds no half-made state.

``prepare_dir`` probes that the directory can be written (a ``.write-probe`` file written, synced
and removed, also when the write fails) before it makes any folder, and removes the folders it made
when a later one cannot be made; :func:`discard_new` removes what a new campaign made before its
database could be written (its ``campaign.db`` files and the empty folders), so the next ``seedzer
fuzz`` on that directory starts afresh instead of finding a campaign that is none.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from seedzer.errors import CampaignError
from seedzer.store.corpus import CORPUS_DIR

CAMPAIGN_FOLDERS = (CORPUS_DIR, "findings", "logs")
"""The folders a campaign directory holds."""
DB_NAME = "campaign.db"
PROBE_NAME = ".write-probe"


def check_layout(out: Path) -> None:
    """Refuse (one line, read-only) a campaign directory where one of its folders is something else."""
    for sub in CAMPAIGN_FOLDERS:
        if (out / sub).exists() and not (out / sub).is_dir():
            raise CampaignError(f"{out / sub}: exists and is not a directory (the campaign keeps its {sub} there); "
                                "move it away")


def _probe(out: Path) -> None:
    """Write, sync and remove ``out/.write-probe`` (removed whether or not the write worked)."""
    probe = out / PROBE_NAME
    fd = os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC | os.O_NOFOLLOW, 0o644)
    try:
        os.write(fd, b"ok")
        os.fsync(fd)  # a full disk may accept the write into the cache and refuse it only here
    finally:
        os.close(fd)
        with contextlib.suppress(OSError):
            probe.unlink()


def prepare_dir(out: Path, resume: bool) -> list[Path]:
    """Create (or check, with ``resume``) a campaign directory; one-line errors name the path. Returns
    the folders it made (none made when it fails: see the module docstring)."""
    db = out / DB_NAME
    if resume and not db.exists():
        raise CampaignError(f"{out}: nothing to resume (no campaign.db)")
    if not resume and db.exists():
        raise CampaignError(f"{out}: a campaign already exists here (use --resume to continue it)")
    check_layout(out)
    made: list[Path] = []
    try:
        out.mkdir(parents=True, exist_ok=True)
        _probe(out)
        for sub in CAMPAIGN_FOLDERS:
            if not (out / sub).is_dir():
                (out / sub).mkdir()
                made.append(out / sub)
    except OSError as exc:
        _remove_empty(made)
        raise CampaignError(f"{out}: campaign directory is not writable ({exc.strerror or exc})") from exc
    return made


def discard_new(out: Path, made: list[Path]) -> None:
    """Take back a new campaign that could not start: its database files and the (empty) folders
    ``made`` by :func:`prepare_dir`; nothing else is touched."""
    for name in (DB_NAME, f"{DB_NAME}-wal", f"{DB_NAME}-shm", f"{DB_NAME}-journal"):
        with contextlib.suppress(OSError):
            (out / name).unlink()
    _remove_empty(made)


def _remove_empty(folders: list[Path]) -> None:
    for folder in reversed(folders):
        with contextlib.suppress(OSError):  # a folder something was written into stays
            folder.rmdir()
