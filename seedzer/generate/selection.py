"""Selection: copy the models a heuristic's ``select`` keeps from one pool into another.

The source may come from anywhere (importing pools made elsewhere is what selection is for), so
nothing in its manifest is trusted: every listed path must stay inside the source pool, every
candidate model must match its recorded sha256, and files are written only inside the destination,
under names checked the same way. The destination is new, empty, or an earlier selection; a file
there that the earlier selection does not list is never overwritten, and nothing is deleted.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from pathlib import Path
from typing import Any

from seedzer.errors import ConfigError, PoolError, SeedzerError, shown
from seedzer.generate.heuristics import Heuristic, PythonHeuristic
from seedzer.generate.seed_pool import (
    MANIFEST,
    _describe,
    check_integrity,
    member_path,
    read_manifest,
    refuse_foreign,
    write_manifest,
)
from seedzer.store.lock import DirLock


def _place(src: Path, dst: Path, pool_dir: Path) -> None:
    """Hard-link (or copy) ``src`` to ``dst`` atomically."""
    tmp = dst.with_name(f".{dst.name}.{os.getpid()}.tmp")
    with contextlib.suppress(OSError):
        if dst.is_file() and not dst.is_symlink() and os.path.samefile(src, dst):
            return  # already the same file (a hard link from an earlier selection)
    try:
        dst.parent.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
        try:
            os.link(src, tmp)
        except OSError:
            shutil.copyfile(src, tmp)
        os.replace(tmp, dst)
        if tmp.exists():  # rename() between two links of one file does nothing: drop our link
            tmp.unlink()
    except OSError as exc:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise PoolError(f"cannot write {shown(dst.name)} in pool {dst.parent}: {_describe(exc)}") from None


def _owned(dst: Path) -> set[str]:
    """Files of ``dst`` an earlier selection listed (which a new selection may replace)."""
    if not (dst / MANIFEST).exists():
        return set()
    old = read_manifest(dst)
    if "selected_from" not in old:
        raise PoolError(f"pool {dst} already holds generated models; select into another directory")
    return {e["file"] for e in old["models"]} | {e["reference"] for e in old["models"] if e.get("reference")}


def _select(heuristic: Heuristic, entries: list[dict[str, Any]], wanted: int, src: Path) -> list[dict[str, Any]]:
    try:
        return heuristic.select(entries, wanted)
    except SeedzerError:
        raise
    except (KeyError, TypeError, ValueError) as exc:
        if isinstance(heuristic, PythonHeuristic):
            raise ConfigError(f"{heuristic.path}: select: raised {type(exc).__name__}: {exc}") from None
        raise PoolError(f"pool {src}: {MANIFEST} entries lack the facts heuristic {heuristic.name} selects on "
                        f"({type(exc).__name__}: {exc})") from None
    except Exception as exc:
        if isinstance(heuristic, PythonHeuristic):  # a user's code: any failure is theirs, on one line
            raise ConfigError(f"{heuristic.path}: select: raised {type(exc).__name__}: {exc}") from None
        raise


def _plan(src: Path, dst: Path, chosen: list[dict[str, Any]]) -> list[tuple[Path, Path]]:
    """(source file, destination file) pairs; PoolError if a destination is not ours to write."""
    refuse_foreign(dst)
    owned = _owned(dst)
    plan: list[tuple[Path, Path]] = []
    for i, entry in enumerate(chosen):
        for key in ("file", "reference"):
            name = entry.get(key)
            if not name:
                continue
            source_path = member_path(src, name, f"models[{i}].{key}")
            target = member_path(dst, name, f"models[{i}].{key}")
            if (target.exists() or target.is_symlink()) and name not in owned:
                raise PoolError(f"pool {dst}: {shown(name)} exists and no earlier selection there lists it; "
                                "refusing to overwrite it (use a new or empty directory)")
            plan.append((source_path, target))
    return plan


def select_pool(
    heuristic: Heuristic, src: Path, dst: Path, count: int | None = None, *, candidates: int | None = None
) -> dict[str, Any]:
    """Apply ``heuristic.select`` to the models of ``src`` and write the result as pool ``dst``.

    ``count`` defaults to the number of models in ``src``; ``candidates`` limits the choice to the
    first that many models of ``src`` (in generation order), so a pool does not depend on how many
    candidates earlier runs made. ``dst`` may be new, empty or an earlier selection (whose manifest
    is replaced); a generated pool, or a directory holding models but no manifest, is refused.
    Returns the new manifest.
    """
    src, dst = Path(src), Path(dst)
    source = read_manifest(src)
    if src.resolve() == dst.resolve():
        raise PoolError(f"pool {dst}: source and destination are the same directory")
    refuse_foreign(dst)
    _owned(dst)  # refuse a generated pool before anything is created
    entries = sorted(source["models"], key=lambda e: int(e.get("index", 0)) if isinstance(e.get("index", 0), int)
                     else 0)
    if candidates is not None:
        entries = entries[:candidates]
    if not entries:
        raise PoolError(f"pool {src}: the manifest lists no models")
    check_integrity(src, entries)  # corrupt or missing candidates are an error, never copied
    wanted = len(entries) if count is None else count
    chosen = _select(heuristic, entries, wanted, src)
    _plan(src, dst, chosen)  # read-only: a refused destination is left exactly as it was
    with DirLock(dst, what="pool"):
        plan = _plan(src, dst, chosen)  # again, under the lock
        for source_path, target in plan:
            _place(source_path, target, dst)
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
    return manifest
