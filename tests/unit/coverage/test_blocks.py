"""ELF/eh_frame parsing and basic-block leaders on a small library compiled with gcc."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import capstone
import numpy as np
import pytest

from seedzer.coverage.blocks import find_leaders, function_leaders
from seedzer.coverage.elf import ElfError, ElfFile
from seedzer.errors import ConfigError
from tests.unit.toylib import build_toylib, symbols


@pytest.fixture(scope="module")
def toylib(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_toylib(tmp_path_factory.mktemp("toy"))


def instruction_starts(lib: Path) -> set[int]:
    out = subprocess.run(["objdump", "-d", "--no-show-raw-insn", str(lib)], capture_output=True, text=True,
                         check=True).stdout
    return {int(m.group(1), 16) for m in re.finditer(r"^\s+([0-9a-f]+):\t", out, re.M)}


def test_build_id_and_fdes_match_readelf_and_nm(toylib: Path) -> None:
    elf = ElfFile(toylib)
    notes = subprocess.run(["readelf", "-n", str(toylib)], capture_output=True, text=True, check=True).stdout
    assert elf.build_id() == re.search(r"Build ID: ([0-9a-f]+)", notes).group(1)  # type: ignore[union-attr]
    starts = {f.start for f in elf.fdes()}
    assert set(symbols(toylib).values()) <= starts
    assert all(f.size > 0 for f in elf.fdes())


def test_not_an_elf_is_one_line_error(tmp_path: Path) -> None:
    bad = tmp_path / "x.so"
    bad.write_bytes(b"not an elf at all" * 10)
    with pytest.raises(ElfError, match=r"x\.so: not an ELF file"):
        ElfFile(bad)


def test_leaders_are_instruction_starts_and_include_entries(toylib: Path) -> None:
    blocks = find_leaders(ElfFile(toylib), "blocks", jobs=1)
    funcs = find_leaders(ElfFile(toylib), "functions")
    assert np.all(np.diff(blocks.astype(np.int64)) > 0)
    assert set(funcs.tolist()) <= set(blocks.tolist())
    assert len(blocks) > 3 * len(symbols(toylib))  # branches make blocks
    assert set(blocks.tolist()) <= instruction_starts(toylib)


def test_parallel_and_serial_leaders_agree(toylib: Path) -> None:
    elf = ElfFile(toylib)
    seen: list[tuple[int, int]] = []
    serial = find_leaders(elf, "blocks", jobs=1, chunks=2)
    parallel = find_leaders(elf, "blocks", jobs=2, chunks=4, progress=lambda d, t: seen.append((d, t)))
    assert np.array_equal(serial, parallel)
    assert seen and seen[-1][0] == seen[-1][1]


def test_function_leaders_on_hand_written_code() -> None:
    md = capstone.Cs(capstone.CS_ARCH_X86, capstone.CS_MODE_64)
    md.detail = False
    # 0: test edi,edi; 2: je +3 (-> 7); 4: mov eax,1; 9?  -- build it explicitly:
    code = bytes([0x85, 0xFF,              # 0x1000 test edi, edi
                  0x74, 0x06,              # 0x1002 je 0x100a
                  0xB8, 0x01, 0, 0, 0,     # 0x1004 mov eax, 1
                  0xC3,                    # 0x1009 ret
                  0x31, 0xC0,              # 0x100a xor eax, eax
                  0xC3,                    # 0x100c ret
                  0xCC, 0x90])             # 0x100d int3 / nop padding: never a leader
    assert sorted(set(function_leaders(md, code, 0x1000))) == [0x1000, 0x1004, 0x100A]


def test_unknown_granularity(toylib: Path) -> None:
    with pytest.raises(ConfigError, match="granularity 'edges'"):
        find_leaders(ElfFile(toylib), "edges")
