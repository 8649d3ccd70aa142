"""Settings handed to workers when they are forked (plain, picklable, TVM-free)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from seedzer.config import BoundsConfig
from seedzer.coverage.collectors import CollectorSpec
from seedzer.load.bounds import DEFAULT_MAX_TESTCASE_MEMORY

Section = TypeVar("Section")


@dataclass
class ExecSettings:
    """How a worker executes test cases: the kernel's checks and tolerances, and cache sizes."""

    rtol: float = 1e-4
    atol: float = 1e-5
    compare: bool = True
    illformed: bool = True
    pipeline_illformed: bool = False
    pipeline: bool = True
    detailed_build_coverage: bool = True
    perf_rate: float = 0.0
    perf_factor: float = 2.0
    perf_repeats: int = 3
    program_cache_size: int = 512
    build_cache_size: int = 128
    parse_cache_size: int = 1024
    """Parsed corpus entries a worker keeps (their size: docs/measurements.md, 'Workers and isolation')."""
    fresh_cache_size: int = 512
    """Parsed mutants and scripts only run that a worker keeps (a kept mutant is mutated from later)."""
    max_buffer_elems: int = 1 << 22
    max_memory: int = DEFAULT_MAX_TESTCASE_MEMORY
    """Address space (RLIMIT_AS, bytes) of the worker that runs test cases (0: unbounded)."""


@dataclass
class WorkerSettings:
    """Everything a worker needs, fixed for its lifetime."""

    exec: ExecSettings = field(default_factory=ExecSettings)
    collector: CollectorSpec | None = None
    """Native coverage collector the worker builds at start (None: ``passes`` features only)."""
    bounds: BoundsConfig = field(default_factory=BoundsConfig)
    """How far a mutant may grow from its parent before it is not run."""
    levels: dict[str, Any] = field(default_factory=dict)
    """Level -> its own settings section (``levels.<name>.*`` in the configuration), for the levels that
    declare one (:meth:`section` reads it)."""
    log_dir: str | None = None
    """Where the worker writes its output (TVM's C++ warnings, crash reports): ``worker-<n>.log``."""
    fuzzers: dict[str, Callable[..., Any]] = field(default_factory=dict)
    """Level -> the factory of its fuzzer (:data:`seedzer.execute.fuzzing.FuzzerFactory`, a module-level
    callable), for every level the campaign fuzzes."""

    def section(self, level: str, cls: type[Section]) -> Section:
        """Level ``level``'s own settings, a ``cls`` (its defaults when the campaign gave none)."""
        found = self.levels.get(level)
        return found if isinstance(found, cls) else cls()
