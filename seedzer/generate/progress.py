"""Progress of pool generation: a rich bar on a terminal, plain periodic lines elsewhere."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import TextIO

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn

from seedzer.console import SafeConsole, echo


def _is_terminal(stream: TextIO) -> bool:
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty and isatty())
    except (OSError, ValueError):  # a closed or detached stream
        return False


class ProgressBar:
    """Shows models made out of the target, rejections and models/min on ``stream`` (stderr).

    On a terminal a rich bar is redrawn in place. On a non-terminal (a pipe, a log file,
    ``docker logs``) one plain line is printed at the start, then at most every ``period``
    seconds, and at the end, so a log stays readable and a long generation still shows life.
    Disabled, it prints nothing.
    """

    def __init__(self, label: str, total: int, *, enabled: bool = True, stream: TextIO | None = None,
                 period: float = 15.0, clock: Callable[[], float] = time.monotonic) -> None:
        self.enabled, self.label, self.total, self.period, self.clock = enabled, label, total, period, clock
        self.stream: TextIO = stream if stream is not None else sys.stderr
        self._start = clock()
        self._first: int | None = None
        self._last_line: float | None = None
        self._state = (0, 0)
        self._progress: Progress | None = None
        self._task: TaskID | None = None
        if enabled and _is_terminal(self.stream):
            self._progress = Progress(
                TextColumn("{task.description}", style="bold", markup=False),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.fields[rejected]} rejected", markup=False),
                TextColumn("{task.fields[rate]:.0f} models/min", markup=False),
                TimeElapsedColumn(),
                console=SafeConsole(file=self.stream),
                transient=False,
            )
            self._task = self._progress.add_task(label, total=total, rejected=0, rate=0.0)

    def set_total(self, total: int) -> None:
        """Change the target (e.g. when fewer models exist than requested)."""
        self.total = total
        if self._progress is not None and self._task is not None:
            self._progress.update(self._task, total=total)

    def _rate(self, done: int) -> float:
        elapsed = max(self.clock() - self._start, 1e-6)
        return 60.0 * (done - (self._first or 0)) / elapsed

    def _line(self) -> None:
        done, rejected = self._state
        self._last_line = self.clock()
        echo(f"seedzer: {self.label}: {done}/{self.total} models, {rejected} rejected, "
             f"{self._rate(done):.0f} models/min, {self._last_line - self._start:.0f} s", file=self.stream)

    def update(self, done: int, rejected: int) -> None:
        """Report the models in the pool and the rejections of this run."""
        if self._first is None:
            self._first = done
        self._state = (done, rejected)
        if not self.enabled:
            return
        if self._progress is not None and self._task is not None:
            self._progress.update(self._task, completed=done, rejected=rejected, rate=self._rate(done))
        elif self._last_line is None or self.clock() - self._last_line >= self.period:
            self._line()

    def __enter__(self) -> ProgressBar:
        if self._progress is not None:
            self._progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._progress is not None:
            self._progress.stop()
        elif self.enabled and self._last_line is not None:
            self._line()
