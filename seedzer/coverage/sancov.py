"""The ``sancov`` backend: SanitizerCoverage counters of an instrumented TVM, read through ctypes.

TVM built by ``coverage/build_tvm_sancov.sh`` (``-fsanitize-coverage=inline-8bit-counters,pc-table``)
registers, for every instrumented shared object, one 8-bit counter per edge and a table of the edges'
addresses with ``libseedzer_sancov.so`` (``coverage/sancov_callbacks.c``). :class:`SancovLibrary`
exposes them as numpy arrays that *are* the counter memory (no copy: a call into TVM changes the
array), and :class:`SancovCollector` turns them into per-execution features
``sc:<module>:<pc offset hex>``, the offset being relative to the module's load base so that feature
sets compare across processes and trials.

The counters live in each object's data section, so a forked worker has its own copy: the worker
reads them, never the zygote. Nothing here imports TVM.
"""

from __future__ import annotations

import ctypes
import importlib.util
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from seedzer.coverage.elf import ElfFile
from seedzer.coverage.spec import CollectorSpec
from seedzer.errors import SeedzerError

DEFAULT_LIBRARY = Path("/opt/seedzer-sancov/lib/libseedzer_sancov.so")
"""Where ``coverage/build_tvm_sancov.sh`` (and the Docker ``tvm-cov`` image) installs the callbacks."""

PREFIX = "sc"
"""Feature prefix of this backend (``sc:<module>:<offset>``)."""

COUNTERS_SECTION = "__sancov_cntrs"
"""ELF section clang puts the inline 8-bit counters in; its presence marks an instrumented object."""

HOW_TO_BUILD = "use the Docker 'tvm-cov' image or coverage/build_tvm_sancov.sh (see coverage/README.md)"


class SancovError(SeedzerError):
    """The sancov backend cannot run: no callbacks library, or TVM is not a sancov build."""


class _DlInfo(ctypes.Structure):
    _fields_ = [("dli_fname", ctypes.c_char_p), ("dli_fbase", ctypes.c_void_p),
                ("dli_sname", ctypes.c_char_p), ("dli_saddr", ctypes.c_void_p)]


def _dladdr(address: int) -> tuple[str, int]:
    """Path and load base of the shared object that contains ``address``."""
    libc = ctypes.CDLL(None)
    info = _DlInfo()
    if not libc.dladdr(ctypes.c_void_p(address), ctypes.byref(info)) or not info.dli_fbase:
        raise SancovError(f"sancov: no loaded object contains address {address:#x}")
    return (info.dli_fname or b"").decode(errors="replace"), int(info.dli_fbase)


def module_name(path: str) -> str:
    """Short, process-independent name of an instrumented object: ``libtvm_compiler.so`` -> ``tvm_compiler``."""
    name = os.path.basename(path) or "main"
    name = name.split(".so")[0]
    return name[3:] if name.startswith("lib") and len(name) > 3 else name


@dataclass(frozen=True)
class SancovModule:
    """One instrumented object: its counters and pc table as zero-copy views of the process memory."""

    index: int
    path: str
    name: str
    base: int
    counters: np.ndarray
    """uint8, one per edge, read-only view of the live counters."""
    pcs: np.ndarray
    """uintp, shape (n, 2): (absolute pc, flags) per edge, read-only view of the pc table."""

    def offsets(self) -> np.ndarray:
        """Edge addresses relative to the module's load base (uint64; the same in every process)."""
        return (self.pcs[:, 0] - np.uintp(self.base)).astype(np.uint64)


def _view(address: int, count: int, ctype: Any) -> np.ndarray:
    """A read-only numpy array over ``count`` items of ``ctype`` at ``address`` (no copy)."""
    if count == 0:
        return np.zeros(0, dtype=np.dtype(ctype))
    array = np.ctypeslib.as_array(ctypes.cast(address, ctypes.POINTER(ctype)), shape=(count,))
    array.flags.writeable = False
    return array


class SancovLibrary:
    """ctypes access to ``libseedzer_sancov.so`` (the copy the instrumented libraries already loaded).

    ``dlopen`` returns the object already in the process when the file is the same, so opening the
    library by its installed path reaches the counters TVM registered on import.
    """

    def __init__(self, path: Path | str = DEFAULT_LIBRARY) -> None:
        self.path = Path(path)
        if not self.path.is_file():
            raise SancovError(f"sancov: {self.path} not found: TVM is not a sancov build ({HOW_TO_BUILD})")
        try:
            lib = ctypes.CDLL(str(self.path), mode=os.RTLD_GLOBAL)
        except OSError as exc:
            raise SancovError(f"sancov: {self.path}: cannot load ({exc})") from exc
        if not hasattr(lib, "seedzer_sancov_counters"):
            raise SancovError(f"sancov: {self.path} is not libseedzer_sancov.so (no seedzer_sancov_counters)")
        lib.seedzer_sancov_modules.restype = ctypes.c_int
        for fn in (lib.seedzer_sancov_total, lib.seedzer_sancov_covered):
            fn.restype = ctypes.c_size_t
            fn.argtypes = []
        lib.seedzer_sancov_counters.restype = ctypes.c_size_t
        lib.seedzer_sancov_counters.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_void_p)]
        lib.seedzer_sancov_pcs.restype = ctypes.c_size_t
        lib.seedzer_sancov_pcs.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_void_p)]
        lib.seedzer_sancov_reset.restype = None
        self._lib = lib

    def n_modules(self) -> int:
        """Number of instrumented objects that registered their counters so far."""
        return int(self._lib.seedzer_sancov_modules())

    def total(self) -> int:
        """Counters (edges) of all registered objects."""
        return int(self._lib.seedzer_sancov_total())

    def covered(self) -> int:
        """Counters that are non-zero now."""
        return int(self._lib.seedzer_sancov_covered())

    def reset(self) -> None:
        """Zero every counter of every registered object."""
        self._lib.seedzer_sancov_reset()

    def module(self, index: int) -> SancovModule:
        """Object ``index``: its path and load base (from ``dladdr``) and views of counters and pcs."""
        start = ctypes.c_void_p()
        n = int(self._lib.seedzer_sancov_counters(index, ctypes.byref(start)))
        if n == 0 or not start.value:
            raise SancovError(f"sancov: no instrumented object #{index} (have {self.n_modules()})")
        pc_start = ctypes.c_void_p()
        n_pcs = int(self._lib.seedzer_sancov_pcs(index, ctypes.byref(pc_start)))
        if n_pcs != n or not pc_start.value:
            raise SancovError(f"sancov: object #{index} has {n} counters but {n_pcs} pc-table entries "
                              "(was it built with -fsanitize-coverage=inline-8bit-counters,pc-table?)")
        path, base = _dladdr(start.value)
        pcs = _view(pc_start.value, 2 * n, ctypes.c_size_t).reshape(n, 2)
        return SancovModule(index, path, module_name(path), base, _view(start.value, n, ctypes.c_uint8), pcs)

    def modules(self) -> list[SancovModule]:
        """Every registered object."""
        return [self.module(i) for i in range(self.n_modules())]


def check_instrumented(library: Path | str, tvm_libraries: list[Path]) -> None:
    """Campaign-side check, without importing TVM: the callbacks exist and TVM's libraries carry counters.

    Raises a one-line :class:`SancovError` naming the missing library or the uninstrumented TVM file.
    """
    library = Path(library)
    if not library.is_file():
        raise SancovError(f"sancov: {library} not found: TVM is not a sancov build ({HOW_TO_BUILD})")
    if not tvm_libraries:
        raise SancovError("sancov: no TVM shared library found (is apache-tvm installed?)")
    for path in tvm_libraries:
        if COUNTERS_SECTION not in ElfFile(path).sections:
            raise SancovError(f"sancov: {path} has no {COUNTERS_SECTION} section: the installed TVM is not "
                              f"a sancov build ({HOW_TO_BUILD})")


def installed_tvm_libraries() -> list[Path]:
    """``libtvm_compiler.so`` and ``libtvm_runtime.so`` of the installed TVM, located without importing it."""
    spec = importlib.util.find_spec("tvm")
    roots = list(spec.submodule_search_locations or []) if spec is not None else []
    return [Path(root) / "lib" / name for root in roots for name in ("libtvm_compiler.so", "libtvm_runtime.so")
            if (Path(root) / "lib" / name).is_file()]


def collector_spec(library: Path | str = DEFAULT_LIBRARY, tvm_libraries: list[Path] | None = None) -> CollectorSpec:
    """Campaign side: check the sancov build (see :func:`check_instrumented`), then the workers' spec."""
    check_instrumented(library, installed_tvm_libraries() if tvm_libraries is None else tvm_libraries)
    return CollectorSpec("sancov", {"library": str(library)})


def new_edges(counters: np.ndarray, seen: np.ndarray, scratch: np.ndarray) -> np.ndarray:
    """Indices of counters that are non-zero now and not in ``seen``; marks them seen.

    ``seen`` and ``scratch`` are bool arrays as long as ``counters``; nothing is allocated but the
    result (two vectorized passes over the counters and one scan for the new indices).
    """
    np.not_equal(counters, 0, out=scratch)
    np.greater(scratch, seen, out=scratch)  # hit and not seen
    fresh = np.flatnonzero(scratch)
    seen[fresh] = True
    return fresh


class _Tracked:
    """Per-module state of a collector: views, feature names computed lazily, seen bitmap."""

    def __init__(self, module: SancovModule) -> None:
        self.module = module
        self.offsets = module.offsets()
        self.seen = np.zeros(len(module.counters), dtype=bool)
        self.scratch = np.empty(len(module.counters), dtype=bool)

    def take(self) -> list[str]:
        fresh = new_edges(self.module.counters, self.seen, self.scratch)
        prefix = f"{PREFIX}:{self.module.name}:"
        return [f"{prefix}{off:x}" for off in self.offsets[fresh].tolist()]


class SancovCollector:
    """Worker-side ``sancov`` collector: edges first reached by this process since the previous take.

    Edges the worker inherited already non-zero from the zygote (TVM's import) are reported by the
    first :meth:`take`, so every campaign's set contains them the same way.
    """

    name = "sancov"

    def __init__(self, library: Path | str = DEFAULT_LIBRARY) -> None:
        self.library_path = Path(library)
        self._tracked: list[_Tracked] = []
        self._lib: SancovLibrary | None = None

    @classmethod
    def from_options(cls, options: dict[str, Any]) -> SancovCollector:
        """Build from :class:`~seedzer.coverage.collectors.CollectorSpec` options (``library``)."""
        return cls(options.get("library") or DEFAULT_LIBRARY)

    def start(self) -> None:
        """Open the callbacks library and track every registered object; SancovError if there is none."""
        self._lib = SancovLibrary(self.library_path)
        self.refresh()
        if not self._tracked:
            raise SancovError(f"sancov: no instrumented library registered counters with {self.library_path}: "
                              f"the loaded TVM is not a sancov build ({HOW_TO_BUILD})")

    def refresh(self) -> None:
        """Start tracking objects registered since the last call (e.g. a library loaded later)."""
        if self._lib is None:
            raise SancovError("sancov: collector used before start()")
        for index in range(len(self._tracked), self._lib.n_modules()):
            self._tracked.append(_Tracked(self._lib.module(index)))

    @property
    def modules(self) -> list[SancovModule]:
        """The objects tracked so far."""
        return [t.module for t in self._tracked]

    def take(self) -> list[str]:
        """Features ``sc:<module>:<offset hex>`` of edges first non-zero since the previous take."""
        if self._lib is not None and self._lib.n_modules() != len(self._tracked):
            self.refresh()
        out: list[str] = []
        for tracked in self._tracked:
            out.extend(tracked.take())
        return out
