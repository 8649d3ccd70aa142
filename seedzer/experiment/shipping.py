"""Moving a trial between machines that share no file system: directories as tar bytes, paths rewritten.

A trial directory is packed with its SQLite databases copied through SQLite's backup API (a
consistent copy even while the campaign writes; their ``-wal``/``-shm`` files are left out) and
unpacked over the destination as a mirror: entries the archive lacks are removed (a stale
``campaign.db-wal`` next to a newer ``campaign.db`` would corrupt it), except the names the
destination keeps for itself (its lock, its ``trial.json``). Each entry is unpacked beside the
destination first and moved into place with ``os.replace``.
"""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import sqlite3
import tarfile
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path

KEEP = frozenset({".lock", ".ray-token", "trial.json"})
"""Names in a trial directory that belong to the machine holding it: never packed, never replaced."""

SQLITE_SIDE_FILES = ("-wal", "-shm", "-journal")


def _is_sqlite(path: Path) -> bool:
    try:
        with open(path, "rb") as fh:
            return fh.read(16) == b"SQLite format 3\x00"
    except OSError:
        return False


def sqlite_copy(src: Path, dest: Path) -> None:
    """A consistent copy of the SQLite database ``src`` (WAL included) into the new file ``dest``."""
    source = sqlite3.connect(f"file:{src}?mode=ro", uri=True, timeout=30)
    try:
        target = sqlite3.connect(dest)
        try:
            source.backup(target)
        finally:
            target.close()
    finally:
        source.close()


def pack_dir(root: Path, exclude: Iterable[str] = KEEP) -> bytes:
    """``root``'s files as gzip'd tar bytes (paths relative to ``root``), SQLite databases copied
    consistently; files that vanish or cannot be read while packing are left out."""
    root, skip = Path(root), set(exclude)
    buf = io.BytesIO()
    with tempfile.TemporaryDirectory(prefix="seedzer-pack-") as tmp, \
            tarfile.open(fileobj=buf, mode="w:gz", compresslevel=1) as tar:
        for dirpath, dirnames, filenames in os.walk(root):
            rel_dir = Path(dirpath).relative_to(root)
            if rel_dir == Path("."):
                dirnames[:] = [d for d in dirnames if d not in skip]
                filenames = [f for f in filenames if f not in skip]
            dirnames.sort()
            for d in dirnames:
                with contextlib.suppress(OSError):
                    tar.add(Path(dirpath) / d, arcname=str(rel_dir / d), recursive=False)
            dbs = {f for f in filenames if _is_sqlite(Path(dirpath) / f)}
            for name in sorted(filenames):
                path, arc = Path(dirpath) / name, str(rel_dir / name)
                if any(name == db + side for db in dbs for side in SQLITE_SIDE_FILES):
                    continue
                try:
                    if name in dbs:
                        copy = Path(tmp) / "db"
                        copy.unlink(missing_ok=True)
                        sqlite_copy(path, copy)
                        tar.add(copy, arcname=arc)
                    elif not path.is_symlink():
                        tar.add(path, arcname=arc)
                except (OSError, sqlite3.Error, tarfile.TarError):
                    continue  # written or removed while we read it: the next checkpoint has it
    return buf.getvalue()


def unpack_dir(data: bytes, dest: Path, keep: Iterable[str] = KEEP) -> None:
    """Make ``dest`` hold what :func:`pack_dir` packed (``keep`` names in ``dest`` stay untouched)."""
    dest, kept = Path(dest), set(keep)
    dest.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{dest.name}.incoming-", dir=dest.parent))
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:*") as tar:
            tar.extractall(staging, filter="data")
        incoming = {p.name for p in staging.iterdir()} - kept
        for old in dest.iterdir():
            if old.name not in kept and old.name not in incoming:
                _remove(old)
        for name in sorted(incoming):
            target = dest / name
            if target.is_dir() and not target.is_symlink():
                _remove(target)
            os.replace(staging / name, target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    else:
        path.unlink(missing_ok=True)


def rewrite_argv(argv: list[str], paths: Mapping[str, str]) -> list[str]:
    """``argv`` with every argument that is one of ``paths`` (or lies under one) moved to its new place;
    ``--opt=PATH`` forms too. The longest matching path wins."""
    order = sorted(paths, key=len, reverse=True)

    def move(value: str) -> str:
        for old in order:
            if value == old:
                return paths[old]
            if value.startswith(old.rstrip("/") + "/"):
                return paths[old].rstrip("/") + value[len(old.rstrip("/")):]
        return value

    out = []
    for arg in argv:
        if arg.startswith("--") and "=" in arg:
            opt, _, value = arg.partition("=")
            out.append(f"{opt}={move(value)}")
        else:
            out.append(move(arg))
    return out


def absolute_paths(paths: Iterable[Path]) -> dict[str, str]:
    """``{str(p): absolute p}`` for the relative ones: an argv a node runs must not depend on our cwd."""
    return {str(p): str(Path(p).absolute()) for p in paths if not Path(p).is_absolute()}
