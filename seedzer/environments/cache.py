"""The cache of reproducer environments (``reproducers.venvs``): what it holds, and keeping it bounded.

Each environment holds one TVM and a few packages: 417 MiB for apache-tvm 0.27.0.post1 with numpy, measured
(``docs/findings.md``), and a rebuilt local wheel gets an environment of its own each time. The cache is
listed (name, size, creation, last use) and pruned, least recently used first: by ``seedzer envs
prune`` (``--keep N``, ``--older-than DAYS``, ``--max-gb GB``), and when a new environment is made,
down to ``reproducers.venvs_max_gb`` (:func:`ensure_bounded`).

Pruning never removes an environment being made (its creation lock is held), one a program is running
in (its use lock is held), one used in the last :data:`RECENT` seconds (a program about to start in
it), nor the one just made; a half-made environment (a killed creation: no marker) goes first.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import time
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

from seedzer.environments.venv import MARKER, Environment, EnvSpec, creation_lock, ensure_env, ready, use_lock

RECENT = 300.0
"""Seconds after its last use during which an environment is never pruned."""
GB = 1 << 30


@dataclass(frozen=True)
class CachedEnv:
    """One directory of the cache: its size in bytes, when it was made and last used (seconds since the
    epoch; a half-made one: both its directory's time), whether it is finished, and what it holds."""

    path: Path
    size: int
    created: float
    last_used: float
    finished: bool
    tvm: str = ""
    packages: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        """Its directory name."""
        return self.path.name


def _size(path: Path) -> int:
    """Bytes the files under ``path`` take on disk (links not followed; what removing it frees)."""
    total = 0
    for folder, dirs, files in os.walk(path):
        for name in (*dirs, *files):
            try:
                total += os.lstat(os.path.join(folder, name)).st_blocks * 512
            except OSError:
                continue
    return total


def _created(record: dict[str, object], fallback: float) -> float:
    """When the marker says the environment was made (``2026-05-01T12:00:00``, local time)."""
    try:
        return time.mktime(time.strptime(str(record["created"]), "%Y-%m-%dT%H:%M:%S"))
    except (KeyError, ValueError, OverflowError):
        return fallback


def _entry(path: Path) -> CachedEnv:
    if not ready(path):
        when = path.stat().st_mtime
        return CachedEnv(path, _size(path), when, when, False)
    marker = path / MARKER
    used = marker.stat().st_mtime
    try:
        record = json.loads(marker.read_text())
    except (OSError, ValueError):
        record = {}
    record = record if isinstance(record, dict) else {}
    packages = record.get("packages")
    return CachedEnv(path, _size(path), _created(record, used), used, True,
                     str(record.get("tvm_version") or record.get("tvm") or ""),
                     tuple(str(p) for p in packages) if isinstance(packages, list) else ())


def cached_envs(root: Path) -> list[CachedEnv]:
    """Every environment directory under ``root`` (finished or half-made), least recently used first."""
    root = Path(root).expanduser()
    if not root.is_dir():
        return []
    found = []
    for path in root.glob("tvm-*"):
        try:
            if path.is_dir() and not path.is_symlink():
                found.append(_entry(path))
        except OSError:  # removed meanwhile
            continue
    return sorted(found, key=lambda e: (e.finished, e.last_used, e.name))


@contextmanager
def _exclusive(env: CachedEnv) -> Iterator[bool]:
    """Both of the environment's locks, taken without waiting: True when nobody makes or uses it."""
    with ExitStack() as stack:
        for lock in (creation_lock(env.path), use_lock(env.path)):
            try:
                handle = stack.enter_context(open(lock, "a"))
                fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                yield False
                return
        yield True


@dataclass(frozen=True)
class Pruned:
    """What a pruning removed, and the environments it would have removed but could not (busy or just
    used)."""

    removed: list[CachedEnv]
    busy: list[CachedEnv]

    def freed(self) -> int:
        """Bytes removed."""
        return sum(e.size for e in self.removed)


def prune(root: Path, *, keep: int | None = None, older_than: float | None = None, max_bytes: int | None = None,
          spare: Sequence[Path] = (), now: float | None = None) -> Pruned:
    """Remove environments under ``root``, least recently used first (a half-made one first of all): all
    but the ``keep`` most recently used, those not used for ``older_than`` seconds, and as many as it takes
    to bring the cache down to ``max_bytes``; never one in ``spare``, being made, in use or used in the
    last :data:`RECENT` seconds (see the module docstring). With no bound given, only half-made ones."""
    now = time.time() if now is None else now
    envs = cached_envs(root)
    finished = [e for e in envs if e.finished]
    total = sum(e.size for e in envs)
    spared = {Path(p) for p in spare}
    removed: list[CachedEnv] = []
    busy: list[CachedEnv] = []
    for env in envs:
        wanted = (not env.finished
                  or (keep is not None and finished.index(env) < len(finished) - keep)
                  or (older_than is not None and now - env.last_used > older_than)
                  or (max_bytes is not None and total > max_bytes))
        if not wanted or env.path in spared:
            continue
        if env.finished and now - env.last_used < RECENT:
            busy.append(env)
            continue
        with _exclusive(env) as free:
            if not free:
                busy.append(env)
                continue
            shutil.rmtree(env.path, ignore_errors=True)
        if not env.path.exists():
            removed.append(env)
            total -= env.size
    return Pruned(removed, busy)


def ensure_bounded(spec: EnvSpec, root: Path, pip_args: Sequence[str] = (), max_gb: float = 0.0,
                   timeout: float = 1800.0) -> tuple[Environment, Pruned | None]:
    """:func:`~seedzer.environments.venv.ensure_env`, then, when it made a new environment and ``max_gb``
    is set (> 0), the cache pruned down to ``max_gb`` GiB (the new one kept); what was pruned (None: nothing
    was tried)."""
    env = ensure_env(spec, root, pip_args, timeout)
    if not env.created or max_gb <= 0:
        return env, None
    return env, prune(root, max_bytes=int(max_gb * GB), spare=[env.path])


__all__ = ["GB", "RECENT", "CachedEnv", "Pruned", "cached_envs", "ensure_bounded", "prune"]
