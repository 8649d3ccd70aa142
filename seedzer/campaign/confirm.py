"""Materialization and crash confirmation of findings, in the background.

Every new finding is handed to ``python -m seedzer.triage.materialize FOLDER`` (one at a time, in
a subprocess, so the fuzz loop never waits and never imports TVM): for a low-level finding it
expands the pass sequence in a clean process and writes the standalone ``repro.py``; a loader
finding gets the standalone ``repro.py`` of its original model. For a crash it also runs that
``repro.py`` in another clean process without coverage instrumentation: death by a signal
confirms the crash. A crash that does not reproduce there while the campaign's coverage backend is
``breakpoints`` (int3 breakpoints patched into TVM) is ``instrumentation-suspect``, else
``unconfirmed``.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections import deque
from dataclasses import dataclass
from pathlib import Path

INSTRUMENTED_BACKENDS = frozenset({"breakpoints"})
"""Coverage backends that patch TVM's code, so a crash may be theirs rather than TVM's."""


@dataclass
class Confirmation:
    """The verdict of one background job (``status`` is None when only the repro was written)."""

    signature: str
    status: str | None  # confirmed | unconfirmed | instrumentation-suspect | None
    returncode: int | None
    seconds: float


def crash_status(returncode: int | None, coverage: str) -> str:
    """The status of a crash whose standalone reproducer ended with ``returncode``."""
    if returncode is not None and returncode < 0:
        return "confirmed"
    return "instrumentation-suspect" if coverage in INSTRUMENTED_BACKENDS else "unconfirmed"


class Confirmer:
    """A queue of finding folders to materialize (and, for crashes, confirm); :meth:`poll` returns
    finished verdicts."""

    def __init__(self, timeout: float = 600.0, python: str = sys.executable, coverage: str = "passes") -> None:
        self.timeout = timeout
        self.python = python
        self.coverage = coverage
        self.queue: deque[tuple[str, Path, bool]] = deque()
        self.running: tuple[str, Path, bool, subprocess.Popen[bytes], float] | None = None

    def submit(self, signature: str, folder: Path, confirm: bool = True) -> None:
        """Queue a finding folder; ``confirm`` (crashes) also re-runs its repro.py."""
        self.queue.append((signature, Path(folder), confirm))

    def pending(self) -> int:
        """Jobs not yet finished."""
        return len(self.queue) + (1 if self.running else 0)

    def _start_next(self) -> None:
        if self.running is None and self.queue:
            sig, folder, confirm = self.queue.popleft()
            (folder / "confirm.json").unlink(missing_ok=True)
            cmd = [self.python, "-m", "seedzer.triage.materialize", str(folder)] + (["--confirm"] if confirm else [])
            proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                    stdin=subprocess.DEVNULL)
            self.running = (sig, folder, confirm, proc, time.monotonic())

    def _verdict(self, sig: str, folder: Path, confirm: bool, elapsed: float) -> Confirmation:
        try:
            got = json.loads((folder / "confirm.json").read_text())
        except (OSError, ValueError):
            got = {}
        code = got.get("returncode")
        if not confirm:
            return Confirmation(sig, None, code, elapsed)
        return Confirmation(sig, crash_status(code, self.coverage), code, elapsed)

    def poll(self) -> list[Confirmation]:
        """Advance the queue; return verdicts that became available."""
        out: list[Confirmation] = []
        self._start_next()
        if self.running is None:
            return out
        sig, folder, confirm, proc, started = self.running
        elapsed = time.monotonic() - started
        if proc.poll() is None and elapsed < self.timeout:
            return out
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        out.append(self._verdict(sig, folder, confirm, elapsed))
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
            self.running[3].kill()
            self.running[3].wait()
            self.running = None
        return out
