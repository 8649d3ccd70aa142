"""The head's mailbox for its Ray trial tasks, and the records that travel through it.

A task reports a :class:`TaskReport` every ``report_period`` and learns the head's order; it sends
checkpoints of a shipped trial directory; it returns a :class:`TaskOutcome`. The head fetches a
:class:`MailboxEntry` per task. Plain data and one small actor class (:class:`Mailbox`, wrapped with
``ray.remote`` by :mod:`seedzer.experiment.ray_trials`); no Ray import here.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from seedzer.experiment.progress import Snapshot


@dataclass(frozen=True)
class TaskReport:
    """What a task reports every ``report_period``: where its campaign runs and its latest snapshot."""

    pid: int
    """The task's process on its node (the Ray worker: killing it loses the task)."""
    node: str
    shared: bool
    """True when the campaign runs in the head's own trial directory (a shared file system)."""
    snapshot: Snapshot | None


@dataclass(frozen=True)
class MailboxEntry:
    """One task's box in the :class:`Mailbox`: its last report, the head's order (``stop``, ``kill`` or
    None) and a checkpoint (its number, the trial directory as tar bytes)."""

    report: TaskReport | None = None
    order: str | None = None
    checkpoint: tuple[int, bytes] | None = None


@dataclass(frozen=True)
class TaskOutcome:
    """What a finished task returns: the campaign's exit status, where it ran and, when the files were
    shipped, the final trial directory as tar bytes."""

    returncode: int
    shared: bool
    node: str
    archive: bytes | None


class Mailbox:
    """The head's mailbox for its tasks (a Ray actor): their reports, checkpoints and the head's orders."""

    def __init__(self) -> None:
        self.state: dict[str, MailboxEntry] = {}

    def report(self, key: str, report: TaskReport) -> str | None:
        """A task's news; returns the head's order: ``stop``, ``kill`` or None."""
        entry = dataclasses.replace(self.state.get(key, MailboxEntry()), report=report)
        self.state[key] = entry
        return entry.order

    def checkpoint(self, key: str, seq: int, data: bytes) -> None:
        """Keep the task's latest trial directory archive (number ``seq``)."""
        self.state[key] = dataclasses.replace(self.state.get(key, MailboxEntry()), checkpoint=(seq, data))

    def order(self, key: str, what: str) -> None:
        """The head's order for a task: ``stop`` (graceful) or ``kill`` (a kill is never downgraded)."""
        entry = self.state.get(key, MailboxEntry())
        if entry.order != "kill":
            self.state[key] = dataclasses.replace(entry, order=what)

    def fetch(self, key: str, have: int) -> MailboxEntry:
        """What a task reported, with its checkpoint only if newer than ``have``."""
        entry = self.state.get(key, MailboxEntry())
        newer = entry.checkpoint is not None and entry.checkpoint[0] > have
        return entry if newer else dataclasses.replace(entry, checkpoint=None)

    def forget(self, key: str) -> None:
        """Drop a finished task's state."""
        self.state.pop(key, None)
