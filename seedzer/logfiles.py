"""Where TVM's own output goes: a process's stdout and stderr redirected to a log file.

TVM's C++ code logs warnings (``codegen_cpu.cc: Warning: Unknown pragma ...``) and crash reports
straight to the process's file descriptors 1 and 2. Every process Seedzer forks to run TVM sends
them to a log file instead (a campaign's ``logs/``), so the terminal shows Seedzer's own lines only.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

ROTATE_BYTES = 8 << 20
"""A log larger than this is rotated (to ``<name>.1``) when a process starts writing it."""


def redirect_output(path: Path | str | None, rotate: int = ROTATE_BYTES) -> None:
    """Send this process's stdout and stderr to ``path`` (appending; rotated when too large).
    ``None`` leaves them alone."""
    if path is None:
        return
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with contextlib.suppress(FileNotFoundError):
        if path.stat().st_size > rotate:
            path.replace(path.with_name(path.name + ".1"))
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.close(fd)
