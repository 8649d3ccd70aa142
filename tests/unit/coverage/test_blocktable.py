"""Block table cache (hit, miss, invalidation), the TVM/LLVM range heuristic and the shared hit map."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import numpy as np
import pytest

from seedzer.coverage import blocktable
from seedzer.coverage.blocktable import llvm_range, load_or_build
from seedzer.coverage.elf import ElfFile, Fde
from seedzer.coverage.hitmap import HitMap
from seedzer.errors import ConfigError
from tests.unit.toylib import build_toylib


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    calls: list[str] = []
    real = blocktable.build_table

    def spy(lib: Path, granularity: str = "blocks", progress: bool = True):  # type: ignore[no-untyped-def]
        calls.append(granularity)
        return real(lib, granularity, progress=False)

    monkeypatch.setattr(blocktable, "build_table", spy)
    return calls


def test_cache_hit_miss_and_invalidation(tmp_path: Path, counted: list[str]) -> None:
    lib = build_toylib(tmp_path)
    cache = tmp_path / "cache"
    first = load_or_build(lib, cache, "blocks")
    assert counted == ["blocks"] and len(first.offsets) == first.meta.blocks > 0
    assert (cache / f"{ElfFile(lib).build_id()}-blocks.npy").is_file()
    again = load_or_build(lib, cache, "blocks")
    assert counted == ["blocks"] and np.array_equal(first.offsets, again.offsets)
    os.utime(lib, ns=(1, 1))  # same bytes, new mtime: the SHA-1 check keeps the table
    load_or_build(lib, cache, "blocks")
    assert counted == ["blocks"]
    load_or_build(lib, cache, "functions")  # another granularity is another table
    assert counted == ["blocks", "functions"]
    data = bytearray(lib.read_bytes())
    comment = ElfFile(lib).section(".comment")
    data[comment.offset] ^= 0xFF  # same build id, different bytes (outside the code)
    lib.write_bytes(bytes(data))
    rebuilt = load_or_build(lib, cache, "blocks")
    assert counted == ["blocks", "functions", "blocks"]
    assert np.array_equal(first.offsets, rebuilt.offsets)
    with open(lib, "ab") as fh:  # appended bytes change the size
        fh.write(b"\0" * 16)
    load_or_build(lib, cache, "blocks")
    assert counted[-1] == "blocks" and len(counted) == 4


def test_copy_of_same_library_hits_the_cache(tmp_path: Path, counted: list[str]) -> None:
    lib = build_toylib(tmp_path)
    other = tmp_path / "elsewhere"
    other.mkdir()
    shutil.copy(lib, other / lib.name)
    first = load_or_build(lib, tmp_path / "c", "functions")
    copy = load_or_build(other / lib.name, tmp_path / "c", "functions")
    assert counted == ["functions"]
    # The cached table describes the library it was asked for (workers find its load address by
    # this path), not the one it was first built from (e.g. another checkout's virtualenv).
    assert first.meta.library == str(lib) and copy.meta.library == str(other / lib.name)


def test_missing_library_and_unwritable_cache(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="library not found"):
        load_or_build(tmp_path / "nope.so", tmp_path)
    lib = build_toylib(tmp_path)
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(ConfigError, match="cannot create the block cache directory"):
        load_or_build(lib, blocker / "sub")


def test_llvm_range_is_the_longest_run_without_lsda() -> None:
    fdes = [Fde(0x100, 0x10, True), Fde(0x200, 0x10, False), Fde(0x300, 0x10, True),
            Fde(0x400, 0x10, False), Fde(0x500, 0x10, False), Fde(0x600, 0x10, False), Fde(0x900, 0x10, True)]
    assert llvm_range(fdes) == (0x400, 0x900)
    assert llvm_range([Fde(0x100, 0x10, True)]) is None
    assert llvm_range(fdes, min_fraction=0.9) is None


def test_table_features_split_tvm_and_llvm(tmp_path: Path) -> None:
    table = load_or_build(build_toylib(tmp_path), tmp_path / "c", "blocks")
    table.meta.llvm_lo, table.meta.llvm_hi = int(table.offsets[1]), int(table.offsets[2])
    assert table.feature(0).startswith("bp:tvm:") and table.feature(1).startswith("bp:llvm:")
    assert table.is_llvm().tolist()[:3] == [False, True, False]
    assert table.index_of(table.feature(2)) == 2
    assert table.index_of("bp:tvm:1") is None and table.index_of("garbage") is None


def test_hitmap_is_shared_and_marks(tmp_path: Path) -> None:
    a = HitMap.create(tmp_path / "h", 10)
    b = HitMap(tmp_path / "h", 10)
    assert a.mark([1, 3, 3]) == 2 and a.mark([3, 4]) == 1
    assert b.count() == 3 and b.array[4] == 1
    with pytest.raises(ConfigError, match="hit map holds 10 bytes, the table has 11"):
        HitMap(tmp_path / "h", 11)
