"""Crash confirmation: a crash the gate judged a bug is re-run from its ``repro.py`` in a clean interpreter.

``python -I repro.py`` in the finding's folder, one at a time, in the background: the reproducer needs
only TVM and numpy, so a crash that kills it by a signal (never SIGKILL, which is the OOM killer or an
operator) is confirmed independently of Seedzer and of coverage instrumentation.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from collections import deque
from dataclasses import dataclass
from pathlib import Path


@dataclass
class Confirmation:
    """The verdict of one clean re-run: ``confirmed`` or ``unconfirmed``."""

    signature: str
    status: str
    returncode: int | None
    seconds: float


def crash_status(returncode: int | None) -> str:
    """``confirmed`` when the reproducer died by a signal other than SIGKILL."""
    if returncode is not None and returncode < 0 and -returncode != signal.SIGKILL:
        return "confirmed"
    return "unconfirmed"


class Confirmer:
    """A queue of reproducers to re-run; :meth:`poll` returns finished confirmations."""

    def __init__(self, python: str = sys.executable) -> None:
        self.python = python
        self.queue: deque[tuple[str, Path, float]] = deque()
        self.running: tuple[str, subprocess.Popen[bytes], float, float] | None = None

    def submit(self, signature: str, repro: Path, timeout: float) -> None:
        """Queue ``repro`` (a finding's repro.py) for a clean re-run bounded by ``timeout`` seconds."""
        self.queue.append((signature, Path(repro), timeout))

    def pending(self) -> int:
        """Re-runs not finished yet."""
        return len(self.queue) + (self.running is not None)

    def _start(self) -> None:
        if self.running is None and self.queue:
            sig, repro, timeout = self.queue.popleft()
            proc = subprocess.Popen([self.python, "-I", repro.name], cwd=repro.parent, stdin=subprocess.DEVNULL,
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            self.running = (sig, proc, time.monotonic(), timeout)

    def poll(self) -> list[Confirmation]:
        """Advance the queue; return confirmations that finished."""
        self._start()
        if self.running is None:
            return []
        sig, proc, started, timeout = self.running
        elapsed = time.monotonic() - started
        code = proc.poll()
        if code is None and elapsed < timeout:
            return []
        if code is None:
            proc.kill()
            proc.wait()
        self.running = None
        self._start()
        return [Confirmation(sig, crash_status(code), code, elapsed)]

    def drain(self, budget: float) -> list[Confirmation]:
        """Wait up to ``budget`` seconds for outstanding re-runs (the rest stay unconfirmed)."""
        out: list[Confirmation] = []
        end = time.monotonic() + budget
        while self.pending() and time.monotonic() < end:
            out.extend(self.poll())
            time.sleep(0.1)
        if self.running is not None:
            self.running[1].kill()
            self.running[1].wait()
            self.running = None
        return out
