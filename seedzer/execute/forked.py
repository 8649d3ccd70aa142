"""Run one call in a child forked from the current process, surviving its segfaults and hangs.

For helpers that already run in a process forked from the zygote (TVM imported): a plain
``os.fork`` is cheap (docs/measurements.md, 'Workers and isolation') and the child inherits
everything already parsed. The child dies with the process that forked it
(:func:`~seedzer.execute.orphans.die_with_parent`): a gate job killed when its campaign ends left
its forked call building a model-zoo network for minutes, on a core the next campaign needed. The
child publishes its progress (stage, step) in shared memory, so a death or a timeout is attributed
to the step it happened in, as the campaign attributes a worker's.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import pickle
import select
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing import sharedctypes
from typing import Any

from seedzer.execute.death import describe_exit
from seedzer.execute.orphans import die_with_parent

_NAME = 160


class SharedProgress:
    """A shared record of the stage and step a forked child is in (written by the child)."""

    def __init__(self) -> None:
        self._buf = sharedctypes.RawArray(ctypes.c_char, _NAME)
        self.started = sharedctypes.RawValue(ctypes.c_double, 0.0)

    def set(self, stage: str, name: str) -> None:
        """Child: entering ``stage`` at step ``name``."""
        self._buf.value = f"{stage}\x1f{name}".encode()[: _NAME - 1]
        self.started.value = time.time()

    def read(self) -> tuple[str | None, str | None]:
        """Parent: the last stage and step the child reported."""
        raw = self._buf.value.decode(errors="replace")
        if not raw:
            return None, None
        stage, _, name = raw.partition("\x1f")
        return stage, name or None

    def clear(self) -> None:
        """Before a new child starts."""
        self._buf.value = b""


@dataclass
class Forked:
    """How a forked call ended: its value, an exception's text, a death (signal or exit code), or a
    timeout; with the stage and step the child last reported and the seconds it took."""

    value: Any = None
    error: str | None = None
    signal: int | None = None
    exitcode: int | None = None
    timed_out: bool = False
    stage: str | None = None
    step: str | None = None
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        """True when the call returned."""
        return self.error is None and self.signal is None and not self.timed_out and self.exitcode in (None, 0)

    def describe(self) -> str:
        """One line on how the child ended."""
        if self.timed_out:
            return f"no result after {self.seconds:.0f}s"
        if self.signal is not None:
            return describe_exit(-self.signal)
        if self.error is not None:
            return self.error.splitlines()[0] if self.error else "error"
        return describe_exit(self.exitcode)


def _read_all(fd: int, deadline: float) -> bytes | None:
    chunks: list[bytes] = []
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return None
        ready, _, _ = select.select([fd], [], [], left)
        if not ready:
            return None
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)


def call_forked(fn: Callable[..., Any], *args: Any, timeout: float, progress: SharedProgress | None = None) -> Forked:
    """``fn(*args)`` in a forked child (its return value must pickle), bounded by ``timeout`` seconds."""
    if progress is not None:
        progress.clear()
    read_fd, write_fd = os.pipe()
    start = time.monotonic()
    pid = os.fork()
    if pid == 0:  # the child: run, send the pickled outcome, leave without cleanup handlers
        os.close(read_fd)
        die_with_parent()  # a gate job killed at the campaign's end must not leave its call running
        try:
            payload = pickle.dumps(("ok", fn(*args)))
        except BaseException as exc:  # reported to the parent, which decides what it means
            payload = pickle.dumps(("error", f"{type(exc).__name__}: {exc}"))
        with contextlib.suppress(OSError):
            view = memoryview(payload)
            while view:
                view = view[os.write(write_fd, view):]
        os._exit(0)
    os.close(write_fd)
    try:
        data = _read_all(read_fd, start + timeout)
    finally:
        os.close(read_fd)
    out = Forked(seconds=time.monotonic() - start)
    if progress is not None:
        out.stage, out.step = progress.read()
    if data is None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        out.timed_out = True
        return out
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        out.signal = os.WTERMSIG(status)
    elif os.WEXITSTATUS(status) != 0:
        out.exitcode = os.WEXITSTATUS(status)
    if data:
        try:
            outcome, value = pickle.loads(data)
        except Exception as exc:  # a child killed mid-write
            out.error = f"unreadable result ({exc})"
            return out
        if outcome == "ok":
            out.value = value
        else:
            out.error = str(value)
    elif out.signal is None:
        out.error = "the child ended without a result"
    return out
