"""Basic-block starts of a shared library, found by disassembling every FDE function (TVM-free).

Leaders of a function (its FDE range) are: its entry; every direct branch target inside the
function that is an instruction start of the linear sweep; the instruction after a conditional
branch; and the first non-padding instruction after an unconditional jump or a return. Calls do not
end blocks. Only instruction starts of the sweep are ever returned, so a breakpoint can never land
inside an instruction. Disassembly uses capstone in detail-off mode (``disasm_lite``) over chunks of
functions on every core; ``granularity="functions"`` skips disassembly and returns FDE starts only.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Sequence

import numpy as np

from seedzer.coverage.elf import ElfFile, Fde
from seedzer.errors import ConfigError

GRANULARITIES = ("blocks", "functions")
_PADDING = frozenset({"nop", "int3", "ud2"})
_ProgressFn = Callable[[int, int], None]


def _is_branch(mnemonic: str) -> bool:
    op = mnemonic.rsplit(" ", 1)[-1]  # "notrack jmp", "bnd jne"
    return op[0] == "j" or op.startswith("loop")


def function_leaders(md: object, code: bytes, start: int) -> list[int]:
    """Leaders (block start addresses) of one function whose bytes ``code`` begin at ``start``.

    ``md`` is a capstone ``Cs`` object with detail off.
    """
    end = start + len(code)
    starts: set[int] = set()
    leaders = [start]
    targets: list[int] = []
    pending = False  # the previous instruction ended a block
    for addr, _size, mnemonic, op_str in md.disasm_lite(code, start):  # type: ignore[attr-defined]
        starts.add(addr)
        if pending and mnemonic not in _PADDING:
            leaders.append(addr)
            pending = False
        if _is_branch(mnemonic):
            pending = True
            if op_str.startswith("0x"):
                target = int(op_str, 16)
                if start <= target < end:
                    targets.append(target)
        elif "ret" in mnemonic:
            pending = True
    leaders.extend(t for t in targets if t in starts)
    return leaders


def _leaders_of_chunk(args: tuple[str, list[tuple[int, int]], int]) -> np.ndarray:
    import capstone

    path, funcs, delta = args
    md = capstone.Cs(capstone.CS_ARCH_X86, capstone.CS_MODE_64)
    md.detail = False
    out: list[int] = []
    with open(path, "rb") as fh:
        for start, size in funcs:
            fh.seek(start - delta)
            out.extend(function_leaders(md, fh.read(size), start))
    return np.asarray(out, dtype=np.uint64)


def _text_delta(elf: ElfFile, fdes: Sequence[Fde]) -> list[tuple[int, int, int]]:
    """(start, size, vaddr - file offset) of every FDE inside an executable section."""
    secs = [s for s in elf.sections.values() if s.executable and s.size]
    out = []
    for f in fdes:
        for s in secs:
            if s.addr <= f.start and f.start + f.size <= s.addr + s.size:
                out.append((f.start, f.size, s.addr - s.offset))
                break
    return out


def find_leaders(elf: ElfFile, granularity: str = "blocks", jobs: int | None = None,
                 progress: _ProgressFn | None = None, chunks: int = 64) -> np.ndarray:
    """Sorted unique uint64 block (or function) start addresses of ``elf``'s code.

    ``progress(done, total)`` is called after every chunk of functions; ``jobs`` defaults to the
    number of cores.
    """
    if granularity not in GRANULARITIES:
        raise ConfigError(f"unknown block granularity '{granularity}' (known: {', '.join(GRANULARITIES)})")
    funcs = _text_delta(elf, elf.fdes())
    if granularity == "functions" or not funcs:
        return np.unique(np.asarray([f[0] for f in funcs], dtype=np.uint64))
    by_delta: dict[int, list[tuple[int, int]]] = {}
    for start, size, delta in funcs:
        by_delta.setdefault(delta, []).append((start, size))
    tasks = []
    for delta, items in by_delta.items():
        items.sort()
        step = max(1, -(-len(items) // chunks))
        tasks += [(str(elf.path), items[i:i + step], delta) for i in range(0, len(items), step)]
    jobs = max(1, min(jobs or os.cpu_count() or 1, len(tasks)))
    parts: list[np.ndarray] = []
    if jobs == 1:
        for i, task in enumerate(tasks):
            parts.append(_leaders_of_chunk(task))
            if progress:
                progress(i + 1, len(tasks))
    else:
        with multiprocessing.get_context("fork").Pool(jobs) as pool:
            for i, part in enumerate(pool.imap_unordered(_leaders_of_chunk, tasks)):
                parts.append(part)
                if progress:
                    progress(i + 1, len(tasks))
            # Workers leave by the pool's sentinel, not by the SIGTERM of the pool's exit: forked from a
            # process with its own SIGTERM handler (a campaign's), a terminated worker lives on, and one
            # terminated while holding the task queue's lock leaves the others, and the exit, waiting.
            pool.close()
            pool.join()
    return np.unique(np.concatenate(parts)) if parts else np.zeros(0, dtype=np.uint64)
