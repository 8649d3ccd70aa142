"""The shared block hit map: one byte per block of a table, a memory-mapped file (TVM-free).

The campaign creates it (all zero), marks the blocks it already knows (``--resume``) and passes its
path to workers; each worker maps the same file ``MAP_SHARED``, so a block marked by one worker is
never armed or reported by another one started later. A file (in the campaign directory) rather
than ``multiprocessing.shared_memory``: its name is a plain path that travels in WorkerSettings, no
resource tracker owns it, and it can be inspected after a run.
"""

from __future__ import annotations

import mmap
import os
from collections.abc import Iterable
from pathlib import Path

import numpy as np

from seedzer.errors import ConfigError


class HitMap:
    """A writable, shared, memory-mapped byte per block (``array`` is a numpy view of it)."""

    def __init__(self, path: Path | str, blocks: int, create: bool = False) -> None:
        self.path = Path(path)
        flags = os.O_RDWR | (os.O_CREAT | os.O_TRUNC if create else 0)
        try:
            fd = os.open(self.path, flags, 0o644)
        except OSError as exc:
            raise ConfigError(f"{self.path}: cannot open the block hit map ({exc.strerror})") from None
        try:
            if create:
                os.ftruncate(fd, max(blocks, 1))
            elif os.fstat(fd).st_size < blocks:
                raise ConfigError(f"{self.path}: hit map holds {os.fstat(fd).st_size} bytes, the table has {blocks}")
            self._mm = mmap.mmap(fd, max(blocks, 1), mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
        finally:
            os.close(fd)
        self.blocks = blocks
        self.array = np.frombuffer(self._mm, dtype=np.uint8, count=blocks)

    @classmethod
    def create(cls, path: Path | str, blocks: int) -> HitMap:
        """A new all-zero map of ``blocks`` bytes at ``path`` (replacing any old one)."""
        return cls(path, blocks, create=True)

    def mark(self, indices: Iterable[int]) -> int:
        """Mark blocks as known; return how many were newly marked."""
        idx = np.unique(np.fromiter(indices, dtype=np.int64))
        if not len(idx):
            return 0
        before = int(np.count_nonzero(self.array[idx]))
        self.array[idx] = 1
        return len(idx) - before

    def count(self) -> int:
        """Number of marked blocks."""
        return int(np.count_nonzero(self.array))

    @property
    def buffer(self) -> mmap.mmap:
        """The writable shared buffer (for the C extension)."""
        return self._mm
