"""Seed pools on disk: ONNX models, reference .npz files and ``manifest.json``, written atomically.

Every file reaches its final name through a temporary file and ``os.replace``, so a pool never
holds a half-written model or manifest. A pool is written by one process at a time (``.lock``).
The manifest is the source of truth: files it does not list (left by an interrupted run) are
removed when the pool is reopened, and listed files that are missing or altered are dropped from
it, so the next run regenerates them.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import errno
import fcntl
import hashlib
import json
import os
import re
import time
from collections import Counter
from pathlib import Path
from typing import Any

from seedzer.errors import PoolError
from seedzer.protocols import GeneratedModel

MANIFEST = "manifest.json"
FORMAT = 1
LOCK = ".lock"
MODEL_RE = re.compile(r"^model_\d{6}\.(onnx|npz)$")
FLUSH_SECONDS = 2.0


def _now() -> str:
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")


def _describe(exc: OSError) -> str:
    if exc.errno == errno.ENOSPC:
        return "no space left on device"
    return exc.strerror or str(exc)


def atomic_write(path: Path, data: bytes, *, pool_dir: Path, sync: bool = False) -> None:
    """Write ``data`` to ``path`` through a temporary file; OSError becomes a one-line PoolError."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "wb") as fh:
            fh.write(data)
            if sync:
                fh.flush()
                os.fsync(fh.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise PoolError(f"cannot write {path.name} in pool {pool_dir}: {_describe(exc)}") from None


def sha256_file(path: Path) -> str:
    """Hex sha256 of a file's bytes."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def read_manifest(pool_dir: Path) -> dict[str, Any]:
    """The pool's manifest as a dict; PoolError (naming the directory) if missing or unreadable."""
    pool_dir = Path(pool_dir)
    if not pool_dir.is_dir():
        raise PoolError(f"pool {pool_dir}: no such directory")
    path = pool_dir / MANIFEST
    if not path.is_file():
        raise PoolError(f"pool {pool_dir}: no {MANIFEST} (not a seed pool, or never generated)")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise PoolError(f"pool {pool_dir}: unreadable {MANIFEST} ({type(exc).__name__})") from None
    if not isinstance(data, dict) or not isinstance(data.get("models"), list):
        raise PoolError(f"pool {pool_dir}: {MANIFEST} has no models list")
    return data


def pool_models(pool_dir: Path) -> list[Path]:
    """Paths of the models listed in the pool's manifest, in manifest order.

    Raises PoolError naming the directory when it is missing, has no manifest, or lists no models.
    """
    pool_dir = Path(pool_dir)
    data = read_manifest(pool_dir)
    models = [pool_dir / str(e["file"]) for e in data["models"] if isinstance(e, dict) and "file" in e]
    if not models:
        raise PoolError(f"pool {pool_dir}: the manifest lists no models")
    return models


def write_manifest(pool_dir: Path, data: dict[str, Any]) -> None:
    """Atomically (and durably) replace the pool's manifest."""
    data["updated"] = _now()
    body = json.dumps(data, indent=1, sort_keys=False).encode()
    atomic_write(Path(pool_dir) / MANIFEST, body, pool_dir=Path(pool_dir), sync=True)


class PoolLock:
    """An exclusive, non-blocking lock on a pool directory (one writer at a time)."""

    def __init__(self, pool_dir: Path) -> None:
        self.pool_dir = pool_dir
        self._fh: Any = None

    def __enter__(self) -> PoolLock:
        try:
            self.pool_dir.mkdir(parents=True, exist_ok=True)
            self._fh = open(self.pool_dir / LOCK, "a")
        except OSError as exc:
            raise PoolError(f"cannot create pool {self.pool_dir}: {_describe(exc)}") from None
        try:
            fcntl.flock(self._fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            self._fh.close()
            raise PoolError(f"pool {self.pool_dir} is being written by another seedzer process") from None
        return self

    def __exit__(self, *exc: object) -> None:
        if self._fh is not None:
            fcntl.flock(self._fh, fcntl.LOCK_UN)
            self._fh.close()


def clean_stray_files(pool_dir: Path, listed: set[str]) -> None:
    """Remove temporary files and model files the manifest does not list (needs the lock)."""
    for p in pool_dir.iterdir():
        if not p.is_file():
            continue
        if (p.name.startswith(".") and p.name.endswith(".tmp")) or (MODEL_RE.match(p.name) and p.name not in listed):
            with contextlib.suppress(OSError):
                p.unlink()


class PoolWriter:
    """Appends generated models and rejections to a pool, resuming an existing one.

    ``header`` identifies how the pool is made (heuristic, generation options, seed); reopening a
    pool with a different header is refused, so a resumed pool stays one consistent sample.
    """

    IDENTITY_KEYS = ("heuristic", "generation", "seed")

    def __init__(self, pool_dir: Path, header: dict[str, Any]) -> None:
        self.pool_dir = Path(pool_dir)
        self._lock = PoolLock(self.pool_dir)
        self._lock.__enter__()
        try:
            self.data = self._open(header)
        except BaseException:
            self._lock.__exit__()
            raise
        self.tried: set[int] = {int(e["index"]) for e in self.data["models"]}
        self.tried |= {int(r["index"]) for r in self.data["rejected"]}
        self.hashes: set[str] = {str(e["graph_hash"]) for e in self.data["models"]}
        self._last_flush = time.monotonic()
        self._dirty = False

    def _open(self, header: dict[str, Any]) -> dict[str, Any]:
        if not (self.pool_dir / MANIFEST).exists():
            clean_stray_files(self.pool_dir, set())
            return {"format": FORMAT, **header, "created": _now(), "models": [], "rejected": []}
        data = read_manifest(self.pool_dir)
        if "selected_from" in data:
            raise PoolError(f"pool {self.pool_dir} holds a selection; generate into another directory")
        for key in self.IDENTITY_KEYS:
            if data.get(key) != header.get(key):
                raise PoolError(
                    f"pool {self.pool_dir} was made with different {key} settings; "
                    "re-run with the original options or use another directory"
                )
        data.setdefault("rejected", [])
        kept = []
        for entry in data["models"]:  # drop entries whose files vanished or changed
            path = self.pool_dir / entry["file"]
            ref = self.pool_dir / entry.get("reference", "")
            if path.is_file() and ref.is_file() and sha256_file(path) == entry["sha256"]:
                kept.append(entry)
        data["models"] = kept
        listed = {e["file"] for e in kept} | {e["reference"] for e in kept}
        clean_stray_files(self.pool_dir, listed)
        data.update({k: v for k, v in header.items() if k not in self.IDENTITY_KEYS})
        return data

    @property
    def count(self) -> int:
        """Models currently in the pool."""
        return len(self.data["models"])

    def add_model(self, index: int, seed: int, model: GeneratedModel) -> dict[str, Any] | None:
        """Write one model and its reference file; None (recorded as rejected) for a duplicate."""
        meta = dict(model.meta)
        ref_bytes: bytes = meta.pop("reference_npz")
        if meta["graph_hash"] in self.hashes:
            self.add_rejected(index, seed, "duplicate", f"same graph as an earlier model ({meta['graph_hash'][:12]})")
            return None
        name = f"model_{index:06d}"
        atomic_write(self.pool_dir / f"{name}.npz", ref_bytes, pool_dir=self.pool_dir)
        atomic_write(self.pool_dir / f"{name}.onnx", model.onnx_bytes, pool_dir=self.pool_dir)
        entry = {
            "file": f"{name}.onnx",
            "index": index,
            "sha256": hashlib.sha256(model.onnx_bytes).hexdigest(),
            "reference": f"{name}.npz",
            **meta,
        }
        self.data["models"].append(entry)
        self.hashes.add(meta["graph_hash"])
        self.tried.add(index)
        self._touch()
        return entry

    def add_rejected(self, index: int, seed: int, reason: str, detail: str = "") -> None:
        """Record a rejected attempt (so a resumed run does not try its seed again)."""
        self.data["rejected"].append({"index": index, "seed": seed, "reason": reason, "detail": detail[:300]})
        self.tried.add(index)
        self._touch()

    def rejected_counts(self) -> dict[str, int]:
        """Rejections so far (all runs), by reason."""
        return dict(Counter(r["reason"] for r in self.data["rejected"]).most_common())

    def _touch(self) -> None:
        self._dirty = True
        if time.monotonic() - self._last_flush >= FLUSH_SECONDS:
            self.flush()

    def flush(self) -> None:
        """Write the manifest now if anything changed."""
        if not self._dirty:
            return
        self.data["models"].sort(key=lambda e: int(e["index"]))
        self.data["rejected"].sort(key=lambda r: int(r["index"]))
        self.data["rejected_counts"] = self.rejected_counts()
        write_manifest(self.pool_dir, self.data)
        self._dirty = False
        self._last_flush = time.monotonic()

    def close(self) -> None:
        """Flush and release the lock."""
        try:
            self.flush()
        finally:
            self._lock.__exit__()

    def __enter__(self) -> PoolWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        if exc[0] is None:
            self.close()
            return
        try:  # keep what was completed; a failing flush must not mask the original error
            self.flush()
        except PoolError:
            pass
        finally:
            self._lock.__exit__()
