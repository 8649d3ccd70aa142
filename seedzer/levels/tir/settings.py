"""The TIR level's own settings (``levels.tir.*`` in the configuration). TVM-free: the configuration
reads them in the campaign process (:mod:`seedzer.config.levels`), a worker's TIR fuzzer uses them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from seedzer.config import Check, setting


@dataclass
class TirSettings:
    """How the TIR level schedules its mutations (Tzer's joint IR and pass-sequence schedule)."""

    OLD_KEYS: ClassVar[dict[str, str]] = {"fuzz.tolerance": "tolerance", "fuzz.max_passes": "max_passes"}
    """The keys these settings had before the level had a section (still read)."""

    tolerance: int = setting(4, "Tzer's tolerance: IR mutations without new coverage before passes are mutated.",
                             Check("must be >= 1 and <= 1000000", lambda v: 1 <= v <= 1_000_000))
    max_passes: int = setting(50, "Longest pass sequence.", Check("must be between 1 and 50", lambda v: 1 <= v <= 50))
