"""Where a result came from: the commit of the Seedzer source that ran, and the machine it ran on.

A campaign records both in its ``versions`` meta (:func:`provenance`), so that a published study can
state the exact code and machine of every trial (``seedzer report --publish``). Reading them never
fails: a source that is no git checkout (an installed wheel) has no commit, a machine that hides a
fact leaves it out.
"""

from __future__ import annotations

import os
import platform
import subprocess
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import seedzer


@dataclass(frozen=True)
class SourceCommit:
    """The git commit of the Seedzer checkout that runs (``dirty``: files differ from it)."""

    commit: str
    dirty: bool

    def label(self) -> str:
        """``abc1234`` or ``abc1234+dirty``: the short commit as a report prints it."""
        return self.commit[:7] + ("+dirty" if self.dirty else "")


@dataclass(frozen=True)
class Machine:
    """The machine facts a study states: processor, cores, memory, operating system, Python."""

    processor: str
    cores: int
    memory_gib: float
    system: str
    python: str

    def label(self) -> str:
        """One line: ``2 cores (Intel Xeon ...), 24.0 GiB, Linux-6.1 ..., Python 3.11.2``."""
        return f"{self.cores} cores ({self.processor}), {self.memory_gib:.1f} GiB, {self.system}, Python {self.python}"


def _git(root: Path, *args: str) -> str | None:
    try:
        done = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def source_commit(root: Path | None = None) -> SourceCommit | None:
    """The commit of the checkout holding the ``seedzer`` package (or ``root``); None for an installed
    package or where git is missing. Untracked files do not make it dirty."""
    where = root if root is not None else Path(seedzer.__file__).resolve().parent.parent
    if not (where / ".git").exists():
        return None
    commit = _git(where, "rev-parse", "HEAD")
    if not commit:
        return None
    status = _git(where, "status", "--porcelain", "--untracked-files=no")
    return SourceCommit(commit, bool(status))


def _processor() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _memory_gib() -> float:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) / (1 << 20)
    except (OSError, ValueError, IndexError):
        pass
    return 0.0


def machine() -> Machine:
    """This machine's facts (what /proc and the platform module tell)."""
    return Machine(_processor(), os.cpu_count() or 1, round(_memory_gib(), 1), platform.platform(terse=True),
                   platform.python_version())


def provenance() -> dict[str, Any]:
    """The ``source`` (commit, dirty) and ``machine`` entries a campaign adds to its ``versions`` meta."""
    source = source_commit()
    return {"source": asdict(source) if source is not None else None, "machine": asdict(machine())}


def read_source(versions: dict[str, Any]) -> SourceCommit | None:
    """The source commit a ``versions`` meta records (None: not recorded, e.g. a campaign before it)."""
    data = versions.get("source")
    if not isinstance(data, dict) or not isinstance(data.get("commit"), str):
        return None
    return SourceCommit(data["commit"], bool(data.get("dirty")))


def read_machine(versions: dict[str, Any]) -> Machine | None:
    """The machine a ``versions`` meta records (None: not recorded)."""
    data = versions.get("machine")
    if not isinstance(data, dict):
        return None
    try:
        return Machine(str(data["processor"]), int(data["cores"]), float(data["memory_gib"]), str(data["system"]),
                       str(data["python"]))
    except (KeyError, TypeError, ValueError):
        return None
