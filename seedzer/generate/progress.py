"""A rich progress bar for pool generation (a no-op when disabled)."""

from __future__ import annotations

import time

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn


class ProgressBar:
    """Shows models made out of the target, rejections and models/min on stderr."""

    def __init__(self, label: str, total: int, *, enabled: bool = True) -> None:
        self.enabled = enabled
        self._start = time.monotonic()
        self._first: int | None = None
        self._progress: Progress | None = None
        self._task: TaskID | None = None
        if enabled:
            self._progress = Progress(
                TextColumn("[bold]{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.fields[rejected]} rejected"),
                TextColumn("{task.fields[rate]:.0f} models/min"),
                TimeElapsedColumn(),
                console=Console(stderr=True),
                transient=False,
            )
            self._task = self._progress.add_task(label, total=total, rejected=0, rate=0.0)

    def set_total(self, total: int) -> None:
        """Change the target (e.g. when fewer models exist than requested)."""
        if self._progress is not None and self._task is not None:
            self._progress.update(self._task, total=total)

    def update(self, done: int, rejected: int) -> None:
        """Report the models in the pool and the rejections of this run."""
        if self._first is None:
            self._first = done
        if self._progress is None or self._task is None:
            return
        elapsed = max(time.monotonic() - self._start, 1e-6)
        rate = 60.0 * (done - self._first) / elapsed
        self._progress.update(self._task, completed=done, rejected=rejected, rate=rate)

    def __enter__(self) -> ProgressBar:
        if self._progress is not None:
            self._progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._progress is not None:
            self._progress.stop()
