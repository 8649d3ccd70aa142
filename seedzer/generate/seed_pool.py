"""Seed pools on disk: ONNX models, reference .npz files and ``manifest.json``, written atomically.

Every file reaches its final name through a temporary file and ``os.replace``, so a pool never
holds a half-written model or manifest. A pool is written by one process at a time (a
:class:`~seedzer.store.lock.DirLock`, held for the life of the writing command). The manifest is
the source of truth and is written before the first model: listed files that are missing or
altered (their sha256 differs) are dropped from it when the pool is reopened, so the next run
regenerates them. Nothing is ever deleted: a directory that holds models but no manifest is not a
pool Seedzer writes, and generating or selecting into it is refused.

Every path a manifest names is checked before it is used (:func:`member_path`): an entry that is
absolute, climbs out with ``..`` or resolves (through symlinks) outside its pool is refused with
one line naming the manifest and the entry.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import errno
import hashlib
import json
import os
import re
import time
from collections import Counter
from pathlib import Path, PurePosixPath
from typing import Any

from seedzer.errors import PoolError, shown
from seedzer.protocols import GeneratedModel
from seedzer.store.lock import DirLock

MANIFEST = "manifest.json"
FORMAT = 1
MODEL_RE = re.compile(r"^model_\d{6}\.(onnx|npz)$")
FLUSH_SECONDS = 2.0
SHA256_RE = re.compile(r"^[0-9a-f]{64}$")


def _now() -> str:
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")


def _describe(exc: OSError) -> str:
    if exc.errno == errno.ENOSPC:
        return "no space left on device"
    if exc.errno == errno.EROFS:
        return "read-only file system"
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


def member_path(pool_dir: Path, name: object, where: str) -> Path:
    """``pool_dir / name`` for a file a manifest lists; PoolError unless it stays inside ``pool_dir``.

    ``where`` locates the entry in the manifest (``models[3].file``). The name must be a relative
    path without ``..``; the resolved path (symlinks followed) must be inside the resolved pool.
    """
    label = f"{pool_dir / MANIFEST}: {where}"
    if not isinstance(name, str) or not name.strip():
        raise PoolError(f"{label} must be a file name, got {name!r}")
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        raise PoolError(f"{label} '{shown(name)}' is not valid UTF-8 text") from None
    pure = PurePosixPath(name)
    if "\0" in name or "\\" in name or pure.is_absolute() or ".." in pure.parts or name.startswith("~"):
        raise PoolError(f"{label} {name!r} is outside the pool directory; refusing to use it")
    path = Path(pool_dir) / name
    try:
        inside = path.resolve().is_relative_to(Path(pool_dir).resolve())
    except (OSError, RuntimeError):  # a symlink loop
        inside = False
    if not inside:
        raise PoolError(f"{label} {name!r} leads outside the pool directory (a symlink); refusing to use it")
    return path


def _check_entries(pool_dir: Path, models: list[Any]) -> None:
    seen: set[str] = set()
    for i, entry in enumerate(models):
        if not isinstance(entry, dict):
            raise PoolError(f"{pool_dir / MANIFEST}: models[{i}] must be a mapping, got {type(entry).__name__}")
        member_path(pool_dir, entry.get("file"), f"models[{i}].file")
        if entry.get("reference") is not None:
            member_path(pool_dir, entry["reference"], f"models[{i}].reference")
        for key in ("sha256", "reference_sha256"):
            if key in entry and not (isinstance(entry[key], str) and SHA256_RE.match(entry[key])):
                raise PoolError(f"{pool_dir / MANIFEST}: models[{i}].{key} is not a sha256 digest")
        if entry["file"] in seen:
            raise PoolError(f"{pool_dir / MANIFEST}: models[{i}].file {entry['file']!r} is listed twice")
        seen.add(entry["file"])


def read_manifest(pool_dir: Path) -> dict[str, Any]:
    """The pool's manifest as a dict; PoolError (naming the directory or manifest) if missing or invalid.

    Every entry's ``file`` (and ``reference``) is checked to stay inside the pool (:func:`member_path`).
    """
    pool_dir = Path(pool_dir)
    if not pool_dir.is_dir():
        raise PoolError(f"pool {pool_dir}: no such directory")
    path = pool_dir / MANIFEST
    if not path.is_file():
        raise PoolError(f"pool {pool_dir}: no {MANIFEST} (not a seed pool, or never generated)")
    try:
        data = json.loads(path.read_bytes().decode("utf-8"))
    except OSError as exc:
        raise PoolError(f"pool {pool_dir}: unreadable {MANIFEST} ({_describe(exc)})") from None
    except UnicodeDecodeError:
        raise PoolError(f"pool {pool_dir}: unreadable {MANIFEST} (not UTF-8 text)") from None
    except json.JSONDecodeError as exc:
        raise PoolError(f"pool {pool_dir}: unreadable {MANIFEST} (invalid JSON at line {exc.lineno}, "
                        f"column {exc.colno}: {exc.msg})") from None
    except (ValueError, RecursionError) as exc:
        raise PoolError(f"pool {pool_dir}: unreadable {MANIFEST} ({type(exc).__name__})") from None
    if not isinstance(data, dict) or not isinstance(data.get("models"), list):
        raise PoolError(f"pool {pool_dir}: {MANIFEST} has no models list")
    _check_entries(pool_dir, data["models"])
    return data


def pool_models(pool_dir: Path) -> list[Path]:
    """Paths of the models listed in the pool's manifest, in manifest order.

    Raises PoolError naming the directory when it is missing, has no manifest, or lists no models.
    """
    pool_dir = Path(pool_dir)
    data = read_manifest(pool_dir)
    models = [pool_dir / str(e["file"]) for e in data["models"]]
    if not models:
        raise PoolError(f"pool {pool_dir}: the manifest lists no models")
    return models


def entry_problems(pool_dir: Path, entry: dict[str, Any], *, check_reference: bool = True) -> list[str]:
    """What is wrong with one listed model's files: missing, not a file, or a sha256 that differs."""
    problems = []
    keys = [("file", "sha256"), ("reference", "reference_sha256")] if check_reference else [("file", "sha256")]
    for key, digest in keys:
        name = entry.get(key)
        if not name:
            continue
        path = Path(pool_dir) / name
        if not path.exists():
            problems.append(f"{shown(name)}: missing")
        elif not path.is_file():
            problems.append(f"{shown(name)}: not a regular file")
        elif digest in entry:
            try:
                actual = sha256_file(path)
            except OSError as exc:
                problems.append(f"{shown(name)}: unreadable ({_describe(exc)})")
                continue
            if actual != entry[digest]:
                problems.append(f"{shown(name)}: corrupt (its sha256 differs from the manifest's)")
    return problems


def check_integrity(pool_dir: Path, entries: list[dict[str, Any]], *, check_reference: bool = True) -> None:
    """Raise one PoolError line when any listed file is missing, not a file or altered (by sha256)."""
    problems = [p for e in entries for p in entry_problems(pool_dir, e, check_reference=check_reference)]
    if not problems:
        return
    bad = len({p.split(": ", 1)[0] for p in problems})
    more = f"; and {len(problems) - 3} more" if len(problems) > 3 else ""
    raise PoolError(f"pool {pool_dir}: {bad} listed file(s) missing or corrupt ({'; '.join(problems[:3])}{more})")


def verified_models(pool_dir: Path) -> list[Path]:
    """:func:`pool_models`, after checking every listed model against its recorded sha256."""
    pool_dir = Path(pool_dir)
    data = read_manifest(pool_dir)
    if not data["models"]:
        raise PoolError(f"pool {pool_dir}: the manifest lists no models")
    check_integrity(pool_dir, data["models"], check_reference=False)
    return [pool_dir / str(e["file"]) for e in data["models"]]


def write_manifest(pool_dir: Path, data: dict[str, Any]) -> None:
    """Atomically (and durably) replace the pool's manifest."""
    data["updated"] = _now()
    body = json.dumps(data, indent=1, sort_keys=False).encode()
    atomic_write(Path(pool_dir) / MANIFEST, body, pool_dir=Path(pool_dir), sync=True)


def foreign_files(pool_dir: Path) -> list[str]:
    """Names of model-like files (``*.onnx``, ``*.npz``) in a directory without a manifest, sorted."""
    pool_dir = Path(pool_dir)
    if not pool_dir.is_dir() or (pool_dir / MANIFEST).exists():
        return []
    try:
        return sorted(shown(p.name) for p in pool_dir.iterdir()
                      if p.suffix in (".onnx", ".npz") or MODEL_RE.match(p.name))
    except OSError as exc:
        raise PoolError(f"pool {pool_dir}: cannot list it ({_describe(exc)})") from None


def refuse_foreign(pool_dir: Path) -> None:
    """PoolError when ``pool_dir`` holds models but no manifest: it is not a pool Seedzer writes."""
    if Path(pool_dir).exists() and not Path(pool_dir).is_dir():
        raise PoolError(f"pool {pool_dir}: exists and is not a directory")
    names = foreign_files(pool_dir)
    if names:
        listed = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
        raise PoolError(f"pool {pool_dir}: holds {listed} but no {MANIFEST}, so it is not a pool seedzer wrote; "
                        "refusing to write into it (use a new or empty directory)")


class PoolWriter:
    """Appends generated models and rejections to a pool, resuming an existing one.

    ``header`` identifies how the pool is made (heuristic, generation options, seed); reopening a
    pool with a different header is refused, so a resumed pool stays one consistent sample.
    """

    IDENTITY_KEYS = ("heuristic", "generation", "seed", "attribute_weights")

    def __init__(self, pool_dir: Path, header: dict[str, Any]) -> None:
        self.pool_dir = Path(pool_dir)
        self._dropped = 0
        self.check(self.pool_dir, header)  # read-only: a refused pool is left exactly as it was
        self._lock = DirLock(self.pool_dir, what="pool").acquire()
        try:
            self.data = self._open(header)
        except BaseException:
            self._lock.release()
            raise
        self.tried: set[int] = {int(e["index"]) for e in self.data["models"]}
        self.tried |= {int(r["index"]) for r in self.data["rejected"]}
        self.hashes: set[str] = {str(e["graph_hash"]) for e in self.data["models"]}
        self._last_flush = time.monotonic()
        self._dirty = bool(self._dropped)  # the manifest must stop listing dropped models

    @classmethod
    def check(cls, pool_dir: Path, header: dict[str, Any]) -> dict[str, Any] | None:
        """Refuse (PoolError) a directory this writer may not write; its manifest when it may resume it.

        Read-only. Refused: a file, a directory of models without a manifest, an invalid manifest, a
        selection, a pool made with other settings (unless it holds no model yet). None means a new
        pool (or one to start over).
        """
        pool_dir = Path(pool_dir)
        refuse_foreign(pool_dir)
        if not (pool_dir / MANIFEST).exists():
            return None
        data = read_manifest(pool_dir)
        manifest = pool_dir / MANIFEST
        if "selected_from" in data:
            raise PoolError(f"pool {pool_dir} holds a selection; generate into another directory")
        for i, entry in enumerate(data["models"]):
            for key in ("index", "graph_hash", "sha256"):
                if key not in entry or (key == "index" and not isinstance(entry[key], int)):
                    raise PoolError(f"{manifest}: models[{i}] has no valid '{key}' (not written by seedzer generate)")
        rejected = data.get("rejected", [])
        if not isinstance(rejected, list) or not all(isinstance(r, dict) and isinstance(r.get("index"), int)
                                                     for r in rejected):
            raise PoolError(f"{manifest}: 'rejected' must be a list of attempts with an integer index")
        for key in cls.IDENTITY_KEYS:
            if data.get(key) != header.get(key):
                if not data["models"]:  # nothing made yet: start over with the new settings
                    return None
                raise PoolError(
                    f"pool {pool_dir} was made with different {key} settings; "
                    "re-run with the original options or use another directory"
                )
        return data

    def _fresh(self, header: dict[str, Any]) -> dict[str, Any]:
        data = {"format": FORMAT, **header, "created": _now(), "models": [], "rejected": []}
        write_manifest(self.pool_dir, data)  # the manifest exists before any model does
        return data

    def _open(self, header: dict[str, Any]) -> dict[str, Any]:
        data = self.check(self.pool_dir, header)  # again, under the lock
        if data is None:
            return self._fresh(header)
        data.setdefault("rejected", [])
        # Entries whose files vanished or changed are dropped (and regenerated); nothing is deleted.
        kept = [e for e in data["models"] if not entry_problems(self.pool_dir, e)]
        self._dropped = len(data["models"]) - len(kept)
        data["models"] = kept
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
            "reference_sha256": hashlib.sha256(ref_bytes).hexdigest(),
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
            self._lock.release()

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
            self._lock.release()
