"""The int3 C extension on a small gcc-built library: arm, hits, identical results, take(), fork, disarm."""

from __future__ import annotations

import ctypes
import os
import signal
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from seedzer.coverage.blocktable import BlockTable, load_or_build
from seedzer.coverage.bpcollector import Breakpoints, library_base
from seedzer.coverage.hitmap import HitMap
from tests.unit.toylib import build_toylib, symbols

_bpcov = pytest.importorskip("seedzer.coverage._bpcov", reason="C extension not built (no compiler)")


class Toy:
    def __init__(self, tmp: Path) -> None:
        self.path = build_toylib(tmp)
        self.dll = ctypes.CDLL(str(self.path))
        for name in ("classify", "sum_to", "pick"):
            getattr(self.dll, name).restype = ctypes.c_int64
            getattr(self.dll, name).argtypes = [ctypes.c_int64]
        self.table: BlockTable = load_or_build(self.path, tmp / "cache", "blocks", progress=False)
        self.base = library_base(self.path)
        self.syms = symbols(self.path)

    def calls(self) -> list[int]:
        return [self.dll.classify(x) for x in (-4, 0, 5, 5000)] + [self.dll.sum_to(20)] + \
               [self.dll.pick(k) for k in range(8)]

    def blocks_of(self, name: str, indices: np.ndarray) -> set[int]:
        start = self.syms[name]
        ends = sorted(a for a in self.syms.values() if a > start)
        end = ends[0] if ends else 1 << 62
        return {int(i) for i in indices if start <= int(self.table.offsets[i]) < end}

    def text_bytes(self) -> bytes:
        return b"".join(ctypes.string_at(self.base + int(o), 1) for o in self.table.offsets)


@pytest.fixture
def toy(tmp_path: Path) -> Iterator[Toy]:
    t = Toy(tmp_path)
    yield t
    _bpcov.disarm()


def test_arm_hit_take_and_identical_results(toy: Toy, tmp_path: Path) -> None:
    expected = toy.calls()
    original = toy.text_bytes()
    hm = HitMap.create(tmp_path / "hits", len(toy.table.offsets))
    bp = Breakpoints(toy.table, hm)
    assert bp.arm() == len(toy.table.offsets)
    assert toy.text_bytes() == b"\xcc" * len(toy.table.offsets)
    assert toy.dll.classify(-3) == -1
    first = bp.take_indices()
    assert len(first) and toy.blocks_of("classify", first) == set(first.tolist())
    assert len(bp.take_indices()) == 0  # take() drains
    toy.dll.classify(-3)
    assert len(bp.take_indices()) == 0  # one-shot: a known block is never reported again
    toy.dll.classify(7)
    assert len(bp.take_indices()) > 0  # another path reaches new blocks
    assert toy.calls() == expected
    stats = bp.stats()
    assert stats["traps"] == stats["new"] == hm.count() and stats["foreign"] == 0
    assert set(bp.features(first)) <= {toy.table.feature(int(i)) for i in first}
    bp.disarm()
    assert toy.text_bytes() == original


def test_known_blocks_are_not_armed(toy: Toy, tmp_path: Path) -> None:
    hm = HitMap.create(tmp_path / "hits", len(toy.table.offsets))
    hm.mark([0, 1, 2])
    assert Breakpoints(toy.table, hm).arm() == len(toy.table.offsets) - 3


def test_fork_child_reports_into_parent_map(toy: Toy, tmp_path: Path) -> None:
    hm = HitMap.create(tmp_path / "hits", len(toy.table.offsets))
    bp = Breakpoints(toy.table, hm)
    bp.arm()
    pid = os.fork()
    if pid == 0:  # child: its own take() starts empty, its hits land in the shared map
        ok = len(bp.take_indices()) == 0 and toy.dll.sum_to(10) == toy.dll.sum_to(10)
        os._exit(0 if ok and len(bp.take_indices()) > 0 else 1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    marked = set(np.flatnonzero(hm.array).tolist())
    assert marked and toy.blocks_of("sum_to", np.array(sorted(marked))) == marked
    assert len(bp.take_indices()) == 0  # the parent reached none of them itself
    assert _bpcov.refresh() == len(marked)  # the parent drops breakpoints others already reported
    before = bp.stats()["traps"]
    toy.dll.sum_to(10)
    assert bp.stats()["traps"] == before and len(bp.take_indices()) == 0


def test_foreign_sigtrap_goes_to_the_previous_handler(toy: Toy, tmp_path: Path) -> None:
    got: list[int] = []
    old = signal.signal(signal.SIGTRAP, lambda s, f: got.append(s))
    try:
        Breakpoints(toy.table, HitMap.create(tmp_path / "hits", len(toy.table.offsets))).arm()
        os.kill(os.getpid(), signal.SIGTRAP)
        assert got == [signal.SIGTRAP] and _bpcov.stats()["foreign"] == 1
    finally:
        _bpcov.disarm()
        signal.signal(signal.SIGTRAP, old)


def test_bad_arguments(toy: Toy, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="not sorted"):
        _bpcov.arm(toy.base, np.array([8, 4], dtype=np.uint64), bytearray(2))
    with pytest.raises(ValueError, match="at least one byte per offset"):
        _bpcov.arm(toy.base, np.array([4, 8], dtype=np.uint64), bytearray(1))
    Breakpoints(toy.table, HitMap.create(tmp_path / "hits", len(toy.table.offsets))).arm()
    with pytest.raises(RuntimeError, match="already armed"):
        _bpcov.arm(toy.base, np.ascontiguousarray(toy.table.offsets), bytearray(len(toy.table.offsets)))
