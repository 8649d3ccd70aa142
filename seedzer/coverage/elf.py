"""Just enough ELF64 (x86-64) parsing for the breakpoints backend: sections, build id, FDE ranges.

Function ranges come from the ``.eh_frame`` FDEs, which survive stripping: every C++ function
compiled with unwind tables has one (PC begin and PC range). This module reads the file with
``struct`` only (no TVM, no third-party dependency) and raises :class:`ElfError` with the path and
the reason on anything it cannot parse.
"""

from __future__ import annotations

import hashlib
import mmap
import struct
from dataclasses import dataclass
from pathlib import Path

from seedzer.errors import SeedzerError

Buf = bytes | mmap.mmap
_SHF_EXECINSTR = 0x4
_EM_X86_64 = 62


class ElfError(SeedzerError):
    """A file is not an ELF64 x86-64 object this module can read (message names the file)."""


@dataclass(frozen=True)
class Section:
    """One section header: name, virtual address, file offset, size and flags."""

    name: str
    addr: int
    offset: int
    size: int
    flags: int

    @property
    def executable(self) -> bool:
        """True for code sections (SHF_EXECINSTR)."""
        return bool(self.flags & _SHF_EXECINSTR)


@dataclass(frozen=True)
class Fde:
    """A function range from one ``.eh_frame`` FDE; ``lsda`` is True when it has an exception table."""

    start: int
    size: int
    lsda: bool


class ElfFile:
    """An ELF64 little-endian x86-64 file, memory-mapped read-only (``data``)."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        try:
            with open(self.path, "rb") as fh:
                self.data: bytes | mmap.mmap = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
        except (OSError, ValueError) as exc:
            raise ElfError(f"{self.path}: cannot read ({getattr(exc, 'strerror', None) or exc})") from None
        d = self.data
        if len(d) < 64 or d[:4] != b"\x7fELF":
            raise ElfError(f"{self.path}: not an ELF file")
        if d[4] != 2 or d[5] != 1:
            raise ElfError(f"{self.path}: not a 64-bit little-endian ELF file")
        machine = struct.unpack_from("<H", d, 0x12)[0]
        if machine != _EM_X86_64:
            raise ElfError(f"{self.path}: machine {machine} is not x86-64")
        shoff, = struct.unpack_from("<Q", d, 0x28)
        shentsize, shnum, shstrndx = struct.unpack_from("<HHH", d, 0x3A)
        if shoff == 0 or shnum == 0 or shoff + shnum * shentsize > len(d):
            raise ElfError(f"{self.path}: no readable section headers")
        raw = [struct.unpack_from("<IIQQQQIIQQ", d, shoff + i * shentsize) for i in range(shnum)]
        strtab = raw[shstrndx]
        self.sections: dict[str, Section] = {}
        for name_off, _type, flags, addr, offset, size, *_ in raw:
            start = strtab[4] + name_off
            name = d[start:d.find(b"\0", start)].decode("ascii", "replace")
            self.sections.setdefault(name, Section(name, addr, offset, size, flags))

    def section(self, name: str) -> Section:
        """The section called ``name``; ElfError when it is missing."""
        try:
            return self.sections[name]
        except KeyError:
            raise ElfError(f"{self.path}: no {name} section") from None

    def code_ranges(self) -> list[tuple[int, int]]:
        """(start, end) virtual addresses of every executable section."""
        return sorted((s.addr, s.addr + s.size) for s in self.sections.values() if s.executable and s.size)

    def build_id(self) -> str:
        """The GNU build id in hex, or ``sha1-<hash of the file>`` when the file has none."""
        note = self.sections.get(".note.gnu.build-id")
        if note is not None and note.size >= 16:
            namesz, descsz, _ = struct.unpack_from("<III", self.data, note.offset)
            desc = note.offset + 12 + ((namesz + 3) & ~3)
            return self.data[desc:desc + descsz].hex()
        return "sha1-" + hashlib.sha1(self.data).hexdigest()

    def fdes(self) -> list[Fde]:
        """Every FDE of ``.eh_frame`` as a function range, in file order (zero-sized ones dropped)."""
        return list(_walk_eh_frame(self, self.section(".eh_frame")))


def _uleb(d: Buf, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        b = d[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        shift += 7
        if b < 0x80:
            return result, pos


def _sleb(d: Buf, pos: int) -> tuple[int, int]:
    result, end = _uleb(d, pos)
    bits = 7 * (end - pos)
    if result & (1 << (bits - 1)):
        result -= 1 << bits
    return result, end


_FIXED = {0x00: "<Q", 0x02: "<H", 0x03: "<I", 0x04: "<Q", 0x0A: "<h", 0x0B: "<i", 0x0C: "<q"}


def _read_encoded(d: Buf, pos: int, enc: int, vaddr: int) -> tuple[int, int]:
    """Decode a DW_EH_PE pointer at file offset ``pos`` (virtual address ``vaddr``)."""
    fmt, app = enc & 0x0F, enc & 0x70
    if fmt == 0x01:
        value, end = _uleb(d, pos)
    elif fmt == 0x09:
        value, end = _sleb(d, pos)
    elif fmt in _FIXED:
        value = struct.unpack_from(_FIXED[fmt], d, pos)[0]
        end = pos + struct.calcsize(_FIXED[fmt])
    else:
        raise ValueError(f"pointer encoding {enc:#x}")
    if app == 0x10:
        value += vaddr
    elif app not in (0x00,):
        raise ValueError(f"pointer application {enc:#x}")
    return value & 0xFFFFFFFFFFFFFFFF, end


@dataclass
class _Cie:
    fde_enc: int = 0x00
    lsda_enc: int = 0xFF
    has_z: bool = False


def _parse_cie(d: Buf, pos: int, end: int) -> _Cie:
    cie = _Cie()
    version = d[pos]
    aug_end = d.find(b"\0", pos + 1)
    aug = d[pos + 1:aug_end].decode("ascii", "replace")
    p = aug_end + 1
    if "eh" in aug:
        p += 8
    _, p = _uleb(d, p)  # code alignment
    _, p = _sleb(d, p)  # data alignment
    p = p + 1 if version == 1 else _uleb(d, p)[1]  # return address register
    if not aug.startswith("z"):
        return cie
    cie.has_z = True
    _, p = _uleb(d, p)
    for ch in aug[1:]:
        if ch == "R":
            cie.fde_enc = d[p]
            p += 1
        elif ch == "L":
            cie.lsda_enc = d[p]
            p += 1
        elif ch == "P":
            enc = d[p]
            _, p = _read_encoded(d, p + 1, enc & 0x7F, 0)
        elif ch not in "SB":
            break
    return cie


def _walk_eh_frame(elf: ElfFile, sec: Section) -> list[Fde]:
    d = elf.data
    pos, stop = sec.offset, sec.offset + sec.size
    delta = sec.addr - sec.offset  # file offset -> virtual address
    cies: dict[int, _Cie] = {}
    out: list[Fde] = []
    try:
        while pos + 4 <= stop:
            length = struct.unpack_from("<I", d, pos)[0]
            if length == 0:
                break
            body = pos + 4
            if length == 0xFFFFFFFF:
                length = struct.unpack_from("<Q", d, body)[0]
                body += 8
            end = body + length
            cie_ptr = struct.unpack_from("<I", d, body)[0]
            if cie_ptr == 0:
                cies[pos] = _parse_cie(d, body + 4, end)
            else:
                cie_pos = body - cie_ptr
                cie = cies.get(cie_pos)
                if cie is None:
                    cie = cies[cie_pos] = _parse_cie(d, cie_pos + 8, end)
                p = body + 4
                start, p = _read_encoded(d, p, cie.fde_enc, p + delta)
                size, p = _read_encoded(d, p, cie.fde_enc & 0x0F, 0)
                lsda = False
                if cie.has_z and cie.lsda_enc != 0xFF:
                    _, q = _uleb(d, p)
                    lsda_ptr, _ = _read_encoded(d, q, cie.lsda_enc & 0x0F, 0)
                    lsda = lsda_ptr != 0
                if size and start:
                    out.append(Fde(start, size, lsda))
            pos = end
    except (ValueError, IndexError, struct.error) as exc:
        raise ElfError(f"{elf.path}: unreadable .eh_frame entry at file offset {pos:#x} ({exc})") from None
    return out
