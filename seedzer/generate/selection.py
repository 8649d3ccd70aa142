"""Selection: copy the models a heuristic's ``select`` keeps from one pool into another."""

from __future__ import annotations

import contextlib
import os
import shutil
from pathlib import Path
from typing import Any

from seedzer.errors import PoolError
from seedzer.generate.heuristics import Heuristic
from seedzer.generate.pool import (
    MANIFEST,
    PoolLock,
    _describe,
    clean_stray_files,
    read_manifest,
    write_manifest,
)


def _place(src: Path, dst: Path, pool_dir: Path) -> None:
    """Hard-link (or copy) ``src`` to ``dst`` atomically."""
    tmp = dst.with_name(f".{dst.name}.{os.getpid()}.tmp")
    try:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
        try:
            os.link(src, tmp)
        except OSError:
            shutil.copyfile(src, tmp)
        os.replace(tmp, dst)
    except OSError as exc:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise PoolError(f"cannot write {dst.name} in pool {pool_dir}: {_describe(exc)}") from None


def select_pool(
    heuristic: Heuristic, src: Path, dst: Path, count: int | None = None, *, candidates: int | None = None
) -> dict[str, Any]:
    """Apply ``heuristic.select`` to the models of ``src`` and write the result as pool ``dst``.

    ``count`` defaults to the number of models in ``src``; ``candidates`` limits the choice to the
    first that many models of ``src`` (in generation order), so a pool does not depend on how many
    candidates earlier runs made. ``dst`` may be new or an earlier selection (it is replaced); a
    generated pool is never overwritten. Returns the new manifest.
    """
    src, dst = Path(src), Path(dst)
    source = read_manifest(src)
    if src.resolve() == dst.resolve():
        raise PoolError(f"pool {dst}: source and destination are the same directory")
    if (dst / MANIFEST).exists() and "selected_from" not in read_manifest(dst):
        raise PoolError(f"pool {dst} already holds generated models; select into another directory")
    entries = sorted(source["models"], key=lambda e: int(e.get("index", 0)))
    if candidates is not None:
        entries = entries[:candidates]
    wanted = len(entries) if count is None else count
    chosen = heuristic.select(entries, wanted)
    with PoolLock(dst):
        for entry in chosen:
            for key in ("file", "reference"):
                if entry.get(key):
                    path = src / entry[key]
                    if not path.is_file():
                        raise PoolError(f"pool {src}: {entry[key]} is listed in the manifest but missing")
                    _place(path, dst / entry[key], dst)
        manifest = {k: v for k, v in source.items() if k not in ("models", "rejected", "rejected_counts", "updated")}
        manifest.update(
            {
                "selected_from": os.path.relpath(src.resolve(), dst.resolve()),
                "selection": {
                    "heuristic": heuristic.name,
                    "file": str(heuristic.path),
                    "count": wanted,
                    "candidates": len(entries),
                },
                "models": chosen,
                "rejected_counts": source.get("rejected_counts", {}),
            }
        )
        write_manifest(dst, manifest)
        listed = {e["file"] for e in chosen} | {e["reference"] for e in chosen if e.get("reference")}
        clean_stray_files(dst, listed)
    return manifest
