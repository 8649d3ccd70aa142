"""Worker-side ``breakpoints`` collection: arm the block table of a loaded library, report new blocks.

:class:`Breakpoints` wraps the C extension for one library in this process: it finds the library's
load base in ``/proc/self/maps``, arms every block not yet marked in the shared :class:`HitMap` and
returns the indices this process reached first. :class:`BreakpointCollector` is the
:class:`~seedzer.coverage.collectors.Collector` a fuzz worker builds from its options.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np

from seedzer.coverage.blocktable import BlockTable, load_or_build
from seedzer.coverage.hitmap import HitMap
from seedzer.errors import ConfigError

EXTENSION = "seedzer.coverage._bpcov"


def extension() -> Any:
    """The compiled ``_bpcov`` module; ConfigError (one line) when it was not built."""
    try:
        from seedzer.coverage import _bpcov  # type: ignore[attr-defined]
    except ImportError:
        raise ConfigError(
            f"coverage 'breakpoints': the C extension {EXTENSION} is not built (needs a C compiler: "
            "reinstall with `pip install -e .`, or use fuzz.coverage: passes)"
        ) from None
    return _bpcov


def library_base(path: Path | str, maps: str = "/proc/self/maps") -> int:
    """Load address of the shared library ``path`` in this process (its mapping at file offset 0)."""
    target = os.path.realpath(path)
    with open(maps) as fh:
        for line in fh:
            parts = line.split(maxsplit=5)
            if len(parts) == 6 and int(parts[2], 16) == 0 and os.path.realpath(parts[5].strip()) == target:
                return int(parts[0].split("-")[0], 16)
    raise ConfigError(f"{path}: library is not loaded in this process")


class Breakpoints:
    """One-shot breakpoints on every unmarked block of ``table`` in this process."""

    def __init__(self, table: BlockTable, hitmap: HitMap) -> None:
        if hitmap.blocks != len(table.offsets):
            raise ConfigError(f"{hitmap.path}: hit map has {hitmap.blocks} blocks, table has {len(table.offsets)}")
        self.table = table
        self.hitmap = hitmap
        self.ext = extension()
        self._offsets = np.ascontiguousarray(table.offsets, dtype=np.uint64)
        self._llvm = table.is_llvm()
        self.armed = 0

    def arm(self, base: int | None = None, writable_text: bool = False) -> int:
        """Write breakpoints (library base from /proc/self/maps unless given); return how many.

        By default the handler restores bytes through ``/proc/self/mem`` and the code stays
        read-only; ``writable_text`` leaves it writable while armed and restores by plain stores.
        """
        base = library_base(self.table.meta.library) if base is None else base
        self.armed = int(self.ext.arm(base, self._offsets, self.hitmap.buffer, writable_text))
        return self.armed

    def take_indices(self) -> np.ndarray:
        """Block indices this process marked first since the previous call."""
        return np.frombuffer(self.ext.take(), dtype=np.uint32)

    def features(self, indices: np.ndarray) -> list[str]:
        """``bp:tvm:<hex>`` / ``bp:llvm:<hex>`` features of block indices."""
        offs = self._offsets[indices]
        llvm = self._llvm[indices]
        return [f"bp:{'llvm' if is_llvm else 'tvm'}:{int(off):x}" for off, is_llvm in zip(offs, llvm, strict=True)]

    def stats(self) -> dict[str, int]:
        """Counters of the C extension (armed, traps, new, foreign...)."""
        return dict(self.ext.stats())

    def disarm(self) -> int:
        """Remove every breakpoint still in place and the SIGTRAP handler."""
        return int(self.ext.disarm())


class BreakpointCollector:
    """The ``breakpoints`` collector of a fuzz worker (see :mod:`seedzer.coverage.collectors`).

    Options: ``library`` (path of the instrumented library), ``cache_dir`` and ``granularity`` of
    its block table (already built by the campaign), and ``hitmap`` (path of the shared map).
    """

    name = "breakpoints"

    def __init__(self, library: str, cache_dir: str, granularity: str, hitmap: str) -> None:
        self.library = library
        self.cache_dir = cache_dir
        self.granularity = granularity
        self.hitmap_path = hitmap
        self.bp: Breakpoints | None = None

    @classmethod
    def from_options(cls, options: dict[str, Any]) -> BreakpointCollector:
        """Build from a :class:`~seedzer.coverage.collectors.CollectorSpec`'s options."""
        missing = [k for k in ("library", "cache_dir", "granularity", "hitmap") if k not in options]
        if missing:
            raise ConfigError(f"coverage 'breakpoints': collector options lack {', '.join(missing)}")
        return cls(str(options["library"]), str(options["cache_dir"]), str(options["granularity"]),
                   str(options["hitmap"]))

    def start(self) -> None:
        """Load the cached table, attach the shared map and arm every unmarked block."""
        table = load_or_build(self.library, self.cache_dir, self.granularity, progress=False)
        self.bp = Breakpoints(table, HitMap(self.hitmap_path, len(table.offsets)))
        self.bp.arm()

    def take(self) -> list[str]:
        """Features of the blocks this worker reached first since the previous call."""
        if self.bp is None:
            return []
        return self.bp.features(self.bp.take_indices())
