"""Atomic file writes: a reader (or a resumed campaign) never sees a half-written file."""

from __future__ import annotations

import contextlib
import errno
import os
import tempfile
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
    except OSError as exc:
        reason = "disk full" if exc.errno == errno.ENOSPC else (exc.strerror or str(exc))
        raise CampaignError(f"{path}: cannot write ({reason})") from exc
    finally:
        if fd >= 0:
            os.close(fd)
        if tmp:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
