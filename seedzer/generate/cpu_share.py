"""Keep a process within a share of one core: the CPU-share governor of the epoch generator.

The governor compares the CPU seconds the process tree has used (:func:`process_cpu`: its own, its
children's, and what their children used once reaped, e.g. the load attempts a zygote's fork server
forks) with ``share`` times the wall seconds since it started, and sleeps until the ratio is back
under the share. Called between units of work (a model generated, a model loaded), it bounds the
average, not every instant: one unit may run at a full core.
"""

from __future__ import annotations

import os
import resource
import time
from collections.abc import Callable
from pathlib import Path

Clock = Callable[[], float]


def _children_cpu(pid: int) -> float:
    """CPU seconds of the live children of ``pid`` and of the descendants they have reaped (fields
    utime, stime, cutime and cstime of ``/proc/<child>/stat``); 0 where there is no ``/proc``."""
    total, tick = 0, os.sysconf("SC_CLK_TCK")
    try:
        entries = list(Path("/proc").iterdir())
    except OSError:
        return 0.0
    for entry in entries:
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue  # gone meanwhile
        if int(fields[1]) == pid:
            total += sum(int(f) for f in fields[11:15])
    return total / tick


def process_cpu() -> float:
    """CPU seconds (user + system) of this process, of its reaped children and of its live children
    with what they reaped (a fork server's children)."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime + _children_cpu(os.getpid())


class CpuGovernor:
    """Sleeps so that CPU seconds stay within ``share`` x wall seconds (see the module docstring)."""

    def __init__(self, share: float, cpu: Clock = process_cpu, wall: Clock = time.monotonic,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        if not 0 < share <= 1:
            raise ValueError(f"cpu share must be in (0, 1], got {share}")
        self.share, self._cpu, self._wall, self._sleep = share, cpu, wall, sleep
        self._cpu0, self._wall0 = cpu(), wall()
        self.slept = 0.0

    def used(self) -> float:
        """CPU seconds used since the governor started."""
        return self._cpu() - self._cpu0

    def elapsed(self) -> float:
        """Wall seconds since the governor started."""
        return self._wall() - self._wall0

    def ratio(self) -> float:
        """CPU seconds per wall second so far (0 before any wall time passed)."""
        wall = self.elapsed()
        return self.used() / wall if wall > 0 else 0.0

    def pace(self) -> float:
        """Sleep until CPU seconds <= share x wall seconds; returns the seconds slept."""
        owed = self.used() / self.share - self.elapsed()
        if owed > 0:
            self._sleep(owed)
            self.slept += owed
            return owed
        return 0.0


PRIORITY_STEP = 2
"""How far the generator lowers its priority (``nice``): a little, so a worker wins a tie. Its share of
the processor is the governor's to keep; at nice 10, six busy workers on two cores starved it, and a
campaign's later epochs got none of their models."""


def lower_priority(increment: int = PRIORITY_STEP) -> None:
    """Lower this process's scheduling priority (``nice``) a little, so the fuzzing workers come first
    in a tie (the governor, not the priority, keeps it within its share)."""
    os.nice(increment)
