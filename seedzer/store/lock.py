"""One writer per directory: an exclusive ``flock`` on ``<dir>/.seedzer.lock``, held for a process's life.

Every command that writes a campaign directory or a seed pool holds a :class:`DirLock` on it from
before its first write until it ends; a second writer is refused at once with one line naming the
holder's pid and command (a :class:`LockError`, i.e. a :class:`~seedzer.errors.SeedzerError`)::

    from seedzer.store.lock import DirLock

    with DirLock(out, what="campaign"):          # creates ``out`` if needed
        ...                                      # the whole campaign, resumes included

    lock = DirLock(pool, what="pool").acquire()  # or held until release() / process exit
    ...
    lock.release()

Why ``flock`` and not a pid file: the kernel drops the lock when the last descriptor of the
holder's open file goes away, i.e. when it exits or is killed (even by SIGKILL). A lock left by a
killed process is therefore simply free; the next writer takes it and overwrites the stale
holder line (pid, command, start time), which is informational only and never trusted. No pid is
ever guessed or signalled.

Details that make it safe to use from anywhere in a process:

* re-entrant within a process: a second ``DirLock`` on the same directory (same real path) in the
  process that holds it nests instead of deadlocking or refusing (the CLI and the campaign loop
  may both take it); the lock is released when the outermost holder releases it;
* not inherited: a child made with ``fork`` (zygote-less helpers, loader children) closes its copy
  of the descriptor right after the fork, so a child that outlives a killed parent never keeps the
  lock; ``exec``'d children never get it (the descriptor is close-on-exec);
* the lock file is a separate file (``.seedzer.lock``), so it never clashes with other locks in the
  same directory, e.g. the ``.lock`` an ``experiment run`` holds on each trial directory while the
  trial's own ``seedzer fuzz`` holds this one.

Errors are one line: a directory that cannot be created or a lock file that cannot be opened
(read-only medium, permissions) names the directory and the reason.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import stat
import sys
import threading
import time
from pathlib import Path
from types import TracebackType

from seedzer.errors import SeedzerError

LOCK_NAME = ".seedzer.lock"
"""Name of the lock file inside a locked directory."""


class LockError(SeedzerError):
    """A directory is locked by another process, or cannot be locked (the message names it)."""


_HELD: dict[str, list[int]] = {}  # real path -> [fd, depth]
_GUARD = threading.Lock()


def _forget_in_child() -> None:
    """After ``fork``, the child drops its copies of the lock descriptors (never unlocks them)."""
    for fd, _depth in list(_HELD.values()):
        with contextlib.suppress(OSError):
            os.close(fd)  # closing a copy keeps the parent's lock; LOCK_UN would release it for both
    _HELD.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_in_child)


def _describe(exc: OSError) -> str:
    if exc.errno == errno.EROFS:
        return "read-only file system"
    return exc.strerror or str(exc)


def read_holder(directory: Path) -> dict[str, str]:
    """The holder line of ``directory``'s lock file (pid, command, since); empty if unreadable."""
    try:
        with open(Path(directory) / LOCK_NAME, encoding="utf-8", errors="replace") as fh:
            text = fh.read(4096)
    except OSError:
        return {}
    out: dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        if sep:
            out[key.strip()] = value.strip()
    return out


def _command_line() -> str:
    name = Path(sys.argv[0]).name if sys.argv and sys.argv[0] else "python"
    if name in ("cli.py", "__main__.py", "-c"):  # python -m seedzer.cli ...: say what the user typed
        name = "seedzer"
    args = [name, *sys.argv[1:]]
    text = " ".join(args)
    return text if len(text) <= 300 else text[:297] + "..."


class DirLock:
    """An exclusive, non-blocking, process-lifetime lock on a directory (see the module docstring).

    ``what`` names the directory's role in messages (``campaign``, ``pool``); ``create`` makes the
    directory (and its parents) when missing; ``command`` is recorded as the holder's command
    (default: this process's command line).
    """

    def __init__(self, directory: Path, *, what: str = "directory", create: bool = True,
                 command: str | None = None) -> None:
        self.directory = Path(directory)
        self.what = what
        self.create = create
        self.command = command
        self._key: str | None = None

    @property
    def path(self) -> Path:
        """The lock file."""
        return self.directory / LOCK_NAME

    @property
    def held(self) -> bool:
        """True while this object holds (or nests in) the lock."""
        return self._key is not None

    def acquire(self) -> DirLock:
        """Take the lock or raise :class:`LockError` at once (never waits)."""
        if self._key is not None:
            return self
        label = f"{self.what} {self.directory}"
        try:
            if self.create:
                self.directory.mkdir(parents=True, exist_ok=True)
            elif not self.directory.is_dir():
                raise LockError(f"{label}: no such directory")
            key = os.path.realpath(self.directory)
        except OSError as exc:
            raise LockError(f"{label}: cannot create the directory ({_describe(exc)})") from None
        with _GUARD:
            held = _HELD.get(key)
            if held is not None:
                held[1] += 1
                self._key = key
                return self
            try:
                fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o644)
            except OSError as exc:
                raise LockError(f"{label}: cannot lock it ({LOCK_NAME}: {_describe(exc)})") from None
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode) or st.st_nlink != 1:  # never truncate someone else's file
                os.close(fd)
                raise LockError(f"{label}: {LOCK_NAME} is not a plain lock file (a link or special file); "
                                "remove it")
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as exc:
                os.close(fd)
                if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                    raise LockError(f"{label}: cannot lock it ({_describe(exc)})") from None
                raise LockError(self._busy_message(label)) from None
            with contextlib.suppress(OSError):  # informational: a killed holder's stale line is overwritten
                os.ftruncate(fd, 0)
                line = (f"pid={os.getpid()}\ncommand={self.command or _command_line()}\n"
                        f"since={time.strftime('%Y-%m-%dT%H:%M:%S')}\n")
                os.pwrite(fd, line.encode("utf-8", "replace"), 0)
            _HELD[key] = [fd, 1]
            self._key = key
        return self

    def _busy_message(self, label: str) -> str:
        holder = read_holder(self.directory)
        pid = holder.get("pid", "")
        who = f"seedzer process {pid}" if pid.isdigit() else "another seedzer process"
        cmd = holder.get("command")
        since = holder.get("since")
        extra = ", ".join(x for x in (f"'{cmd}'" if cmd else "", f"since {since}" if since else "") if x)
        return f"{label} is in use by {who}{f' ({extra})' if extra else ''}; wait for it to end or stop it"

    def release(self) -> None:
        """Release (or un-nest) the lock; a no-op when not held."""
        key, self._key = self._key, None
        if key is None:
            return
        with _GUARD:
            held = _HELD.get(key)
            if held is None:
                return
            held[1] -= 1
            if held[1] > 0:
                return
            del _HELD[key]
            fd = held[0]
        try:
            with contextlib.suppress(OSError):
                fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)

    def __enter__(self) -> DirLock:
        return self.acquire()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.release()


def is_locked(directory: Path) -> bool:
    """True when another process holds ``directory``'s lock (readers may use it to say "running")."""
    path = Path(directory) / LOCK_NAME
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW)
    except OSError:
        return False
    try:
        if os.path.realpath(directory) in _HELD:
            return False
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError:
            return True
        fcntl.flock(fd, fcntl.LOCK_UN)
        return False
    finally:
        os.close(fd)
