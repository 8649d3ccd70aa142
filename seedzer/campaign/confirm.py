"""Crash confirmation: every new crash is re-run from its repro.py in a clean process.

Runs one reproducer at a time in the background (``subprocess``) so the fuzz loop never waits.
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections import deque
from dataclasses import dataclass
from pathlib import Path


@dataclass
class Confirmation:
    """The verdict of one re-run."""

    signature: str
    status: str  # confirmed | unconfirmed
    returncode: int | None
    seconds: float


class Confirmer:
    """A queue of reproducers to re-run; :meth:`poll` returns finished verdicts."""

    def __init__(self, timeout: float = 120.0, python: str = sys.executable) -> None:
        self.timeout = timeout
        self.python = python
        self.queue: deque[tuple[str, Path]] = deque()
        self.running: tuple[str, Path, subprocess.Popen[bytes], float] | None = None

    def submit(self, signature: str, folder: Path) -> None:
        """Queue a finding folder whose repro.py should die by a signal."""
        self.queue.append((signature, folder))

    def pending(self) -> int:
        """Reproducers not yet judged."""
        return len(self.queue) + (1 if self.running else 0)

    def _start_next(self) -> None:
        if self.running is None and self.queue:
            sig, folder = self.queue.popleft()
            log = open(folder / "confirm.log", "wb")  # noqa: SIM115 - closed when the process ends
            proc = subprocess.Popen([self.python, "repro.py"], cwd=folder, stdout=log,
                                    stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
            log.close()
            self.running = (sig, folder, proc, time.monotonic())

    def poll(self) -> list[Confirmation]:
        """Advance the queue; return verdicts that became available."""
        out: list[Confirmation] = []
        self._start_next()
        if self.running is None:
            return out
        sig, _folder, proc, started = self.running
        code = proc.poll()
        elapsed = time.monotonic() - started
        if code is None and elapsed < self.timeout:
            return out
        if code is None:
            proc.kill()
            proc.wait()
        out.append(Confirmation(sig, "confirmed" if code is not None and code < 0 else "unconfirmed",
                                code, elapsed))
        self.running = None
        self._start_next()
        return out

    def drain(self, budget: float) -> list[Confirmation]:
        """Wait up to ``budget`` seconds for outstanding verdicts (at campaign end)."""
        out: list[Confirmation] = []
        end = time.monotonic() + budget
        while self.pending() and time.monotonic() < end:
            out.extend(self.poll())
            time.sleep(0.1)
        if self.running is not None:
            self.running[2].kill()
            self.running[2].wait()
            self.running = None
        return out
