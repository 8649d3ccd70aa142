"""The on-disk block table of a library: sorted block offsets, cached per build id (TVM-free).

``load_or_build(lib, cache_dir, granularity)`` returns the table of ``lib``, building it once (with
progress) and caching it as ``<cache_dir>/<build-id>-<granularity>.npy`` plus a ``.json`` with its
metadata. A cached table is used when the library's size and mtime match the metadata, or, when
they do not, when the library's SHA-1 still matches; otherwise the table is rebuilt. So a rebuilt
TVM (new build id) gets a new table, and so does a library whose bytes changed under the same id.

The TVM/LLVM split: the wheel links LLVM statically, built without exceptions, while TVM's own
code uses them. The longest run of consecutive functions (in address order) without an exception
table (LSDA) spanning at least a tenth of the code is taken as LLVM's range (the range found on the
0.27 wheel: docs/measurements.md, 'Coverage'). It is a heuristic (TVM functions without exception
tables next to the range could be misfiled), reported as such.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import TextIO

import numpy as np

from seedzer.console import echo
from seedzer.coverage.blocks import find_leaders
from seedzer.coverage.elf import ElfFile, Fde
from seedzer.errors import ConfigError

DEFAULT_CACHE = "~/.cache/seedzer/blocks"
_FORMAT = 1


def tvm_compiler_library() -> Path:
    """Path of ``libtvm_compiler.so`` of the installed TVM, found without importing TVM."""
    spec = importlib.util.find_spec("tvm")
    locations = list(spec.submodule_search_locations or []) if spec else []
    for loc in locations:
        path = Path(loc) / "lib" / "libtvm_compiler.so"
        if path.is_file():
            return path.resolve()
    raise ConfigError("tvm: libtvm_compiler.so not found next to the installed tvm package")


def file_sha1(path: Path) -> str:
    """SHA-1 of a file's bytes (streamed)."""
    h = hashlib.sha1()
    with open(path, "rb") as fh:
        while chunk := fh.read(1 << 24):
            h.update(chunk)
    return h.hexdigest()


def llvm_range(fdes: list[Fde], min_fraction: float = 0.1) -> tuple[int, int] | None:
    """[lo, hi) of the longest address-ordered run of functions without an LSDA, if big enough."""
    ordered = sorted(fdes, key=lambda f: f.start)
    if not ordered:
        return None
    span = ordered[-1].start + ordered[-1].size - ordered[0].start
    best: tuple[int, int] | None = None
    run_start: int | None = None
    for i, f in enumerate([*ordered, Fde(0, 0, True)]):
        if not f.lsda and run_start is None:
            run_start = i
        elif f.lsda and run_start is not None:
            lo = ordered[run_start].start
            hi = f.start if i < len(ordered) else ordered[-1].start + ordered[-1].size
            if best is None or hi - lo > best[1] - best[0]:
                best = (lo, hi)
            run_start = None
    if best is None or best[1] - best[0] < min_fraction * span:
        return None
    return best


@dataclass
class TableMeta:
    """Metadata stored next to a table's offsets."""

    library: str
    build_id: str
    granularity: str
    size: int
    mtime_ns: int
    sha1: str
    blocks: int
    llvm_lo: int | None
    llvm_hi: int | None
    llvm_blocks: int
    build_seconds: float
    format: int = _FORMAT


@dataclass
class BlockTable:
    """A library's sorted block offsets (uint64, relative to its load base) and metadata."""

    offsets: np.ndarray
    meta: TableMeta
    path: Path

    def is_llvm(self) -> np.ndarray:
        """Boolean mask: which blocks lie in the LLVM range (all False without a range)."""
        lo, hi = self.meta.llvm_lo, self.meta.llvm_hi
        if lo is None or hi is None:
            return np.zeros(len(self.offsets), dtype=bool)
        return (self.offsets >= lo) & (self.offsets < hi)

    def feature(self, index: int) -> str:
        """The coverage feature of block ``index``: ``bp:tvm:<hex offset>`` or ``bp:llvm:<hex offset>``."""
        off = int(self.offsets[index])
        lo, hi = self.meta.llvm_lo, self.meta.llvm_hi
        part = "llvm" if lo is not None and hi is not None and lo <= off < hi else "tvm"
        return f"bp:{part}:{off:x}"

    def index_of(self, feature: str) -> int | None:
        """Block index of a ``bp:`` feature, or None when it is not a block of this table."""
        found = self.indices_of([feature])
        return int(found[0]) if len(found) else None

    def indices_of(self, features: Iterable[str]) -> np.ndarray:
        """Block indices of the ``bp:`` features that name blocks of this table (others are skipped)."""
        offs = []
        for f in features:
            try:
                offs.append(int(f.rsplit(":", 1)[1], 16))
            except (IndexError, ValueError):
                continue
        want = np.asarray(offs, dtype=np.uint64)
        idx = np.searchsorted(self.offsets, want)  # both uint64: the table is not converted
        ok = idx < len(self.offsets)
        ok[ok] = self.offsets[idx[ok]] == want[ok]
        return idx[ok].astype(np.int64)


def _paths(cache_dir: Path, build_id: str, granularity: str) -> tuple[Path, Path]:
    stem = cache_dir / f"{build_id}-{granularity}"
    return stem.with_suffix(".npy"), stem.with_suffix(".json")


def _load_cached(lib: Path, npy: Path, meta_path: Path) -> BlockTable | None:
    try:
        meta = TableMeta(**json.loads(meta_path.read_text()))
    except (OSError, ValueError, TypeError):
        return None
    if meta.format != _FORMAT or not npy.is_file():
        return None
    st = lib.stat()
    same_stat = (meta.size, meta.mtime_ns) == (st.st_size, st.st_mtime_ns)
    if not same_stat and (meta.size != st.st_size or file_sha1(lib) != meta.sha1):
        return None
    offsets = np.load(npy, mmap_mode="r")
    if len(offsets) != meta.blocks:
        return None
    # Same bytes, maybe another path (another checkout or virtualenv): describe the library asked for.
    return BlockTable(offsets, replace(meta, library=str(lib)), npy)


class ProgressPrinter:
    """Progress of a table build on ``stream`` (default: stderr), called as ``show(done, total)``.

    On a terminal one live line is redrawn with carriage returns at every call. On a non-terminal
    (a pipe, a log file, ``docker logs``) a plain line is printed at the first call, then at most
    every ``period`` seconds, and at the end, so a log gets readable lines rather than one long line
    of carriage returns.
    """

    def __init__(self, label: str, stream: TextIO | None = None, *, period: float = 5.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.label, self.period, self.clock = label, period, clock
        self.stream: TextIO = stream if stream is not None else sys.stderr
        isatty = getattr(self.stream, "isatty", None)
        try:
            self.live = bool(isatty and isatty())
        except (OSError, ValueError):  # a closed or detached stream
            self.live = False
        self.started = clock()
        self._last: float | None = None

    def __call__(self, done: int, total: int) -> None:
        now = self.clock()
        line = f"seedzer: {self.label}: {done}/{total} chunks, {now - self.started:.0f} s"
        if self.live:
            echo(line, file=self.stream, nl=done >= total, redraw=True)
        elif done >= total or self._last is None or now - self._last >= self.period:
            self._last = now
            echo(line, file=self.stream)


def build_table(lib: Path, granularity: str = "blocks", progress: bool = True) -> tuple[np.ndarray, TableMeta]:
    """Disassemble ``lib`` and return its offsets and metadata (no caching)."""
    started = time.perf_counter()
    elf = ElfFile(lib)
    show = ProgressPrinter(f"block table of {lib.name} ({granularity})") if progress else None
    offsets = find_leaders(elf, granularity, progress=show)
    rng = llvm_range(elf.fdes())
    st = lib.stat()
    llvm_blocks = int(((offsets >= rng[0]) & (offsets < rng[1])).sum()) if rng else 0
    meta = TableMeta(
        library=str(lib), build_id=elf.build_id(), granularity=granularity, size=st.st_size,
        mtime_ns=st.st_mtime_ns, sha1=hashlib.sha1(elf.data).hexdigest(), blocks=len(offsets),
        llvm_lo=rng[0] if rng else None, llvm_hi=rng[1] if rng else None, llvm_blocks=llvm_blocks,
        build_seconds=round(time.perf_counter() - started, 3),
    )
    return offsets, meta


def load_or_build(lib: Path | str, cache_dir: Path | str = DEFAULT_CACHE, granularity: str = "blocks",
                  progress: bool = True) -> BlockTable:
    """The cached block table of ``lib``, built (and cached) when missing or stale."""
    lib = Path(lib).resolve()
    cache = Path(cache_dir).expanduser()
    if not lib.is_file():
        raise ConfigError(f"{lib}: library not found")
    try:
        cache.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(f"{cache}: cannot create the block cache directory ({exc.strerror})") from None
    build_id = ElfFile(lib).build_id()
    npy, meta_path = _paths(cache, build_id, granularity)
    table = _load_cached(lib, npy, meta_path)
    if table is not None:
        return table
    offsets, meta = build_table(lib, granularity, progress)
    tmp = npy.with_suffix(f".{os.getpid()}.tmp.npy")
    np.save(tmp, offsets)
    os.replace(tmp, npy)
    tmp_meta = meta_path.with_suffix(f".{os.getpid()}.tmp")
    tmp_meta.write_text(json.dumps(asdict(meta), indent=1))
    os.replace(tmp_meta, meta_path)
    return BlockTable(np.load(npy, mmap_mode="r"), meta, npy)
