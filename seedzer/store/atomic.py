"""Atomic file and folder writes: a reader (or a resumed campaign) never sees a half-written file,
nor a folder without all of its files."""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path

from seedzer.errors import CampaignError


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


_CREATE_MODE = 0o666 & ~_umask()
"""The mode ``open()`` would give a new file: 0644 under the usual umask."""


def write_atomic(path: Path, data: str | bytes) -> None:
    """Write ``data`` to ``path`` via a temporary file in the same directory and ``os.replace``.

    A full disk or a read-only directory becomes a one-line :class:`CampaignError` naming the path;
    the previous content of ``path`` (if any) is left untouched.
    """
    path = Path(path)
    try:
        _write_file(path, data)
    except OSError as exc:
        raise _cannot_write(path, exc) from exc


def _write_file(path: Path, data: str | bytes) -> None:
    """:func:`write_atomic`, its failure the ``OSError`` itself (no temporary file is left)."""
    raw = data.encode() if isinstance(data, str) else data
    fd = -1
    tmp = ""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        with os.fdopen(fd, "wb") as fh:
            fd = -1
            fh.write(raw)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, _CREATE_MODE)  # mkstemp makes 0600; results are shared (e.g. Docker volumes)
        os.replace(tmp, path)
        tmp = ""
    finally:
        if fd >= 0:
            os.close(fd)
        if tmp:
            with contextlib.suppress(OSError):
                os.unlink(tmp)


def _cannot_write(path: Path, exc: OSError) -> CampaignError:
    reason = "disk full" if exc.errno == errno.ENOSPC else (exc.strerror or str(exc))
    return CampaignError(f"{path}: cannot write ({reason})")


STAGING_SUFFIX = ".tmp"
"""How the name of a folder being written (``.<name>.<random>.tmp``, beside its final place) ends."""


def write_folder(folder: Path, files: Mapping[str, str | bytes]) -> Path:
    """Write ``files`` (names relative to the folder -> content) as the folder ``folder``, complete or
    not at all: into a hidden sibling (``.<name>.<random>.tmp``), then renamed into place; a folder
    already there is replaced, and what an earlier writer killed mid-way left beside it is removed.
    A full disk is a one-line :class:`CampaignError` naming the folder, with nothing left behind."""
    folder = Path(folder)
    staging: Path | None = None
    try:
        folder.parent.mkdir(parents=True, exist_ok=True)
        for stale in folder.parent.glob(f".{folder.name}.*{STAGING_SUFFIX}"):
            shutil.rmtree(stale, ignore_errors=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", suffix=STAGING_SUFFIX, dir=folder.parent))
        for name, data in files.items():
            _write_file(staging / name, data)
        os.chmod(staging, 0o777 & ~_umask())  # mkdtemp makes 0700
        if folder.exists() or folder.is_symlink():
            old = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", suffix=STAGING_SUFFIX, dir=folder.parent))
            os.replace(folder, old)  # an empty directory is replaced by the folder moved aside
            shutil.rmtree(old, ignore_errors=True)
        os.rename(staging, folder)
        staging = None
    except OSError as exc:
        raise _cannot_write(folder, exc) from exc
    finally:
        if staging is not None:
            shutil.rmtree(staging, ignore_errors=True)
    return folder
