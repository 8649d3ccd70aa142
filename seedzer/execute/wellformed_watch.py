"""The ill-formed-IR oracle's worker half: verify the module after every pass of a sequence.

A :class:`WellFormedWatch` is a PassInstrument given to :func:`seedzer.mutate.passes.apply_passes`.
After each pass it runs ``tvm.s_tir.analysis.verify_well_formed`` on every PrimFunc (it accepts
both block IR and lowered TIR, ~0.1 ms) and remembers the first pass after which the module stopped
being well-formed. The input was well-formed (mutants pass the same verifier before they run), so
that pass produced IR that violates TIR's own invariants: a finding even when later stages cope.
"""

from __future__ import annotations

from typing import Any

import tvm
from tvm import s_tir, tirx

from seedzer.mutate.wellformed import first_error_line


def verify_module(mod: Any) -> str | None:
    """None if every PrimFunc of ``mod`` is well-formed, else the verifier's first error line."""
    for gvar, func in mod.functions.items():
        if not isinstance(func, tirx.PrimFunc):
            continue
        try:
            s_tir.analysis.verify_well_formed(func, True)
        except Exception as exc:
            return f"{gvar.name_hint}: {first_error_line(exc)}"
    return None


@tvm.ir.instrument.pass_instrument
class WellFormedWatch:
    """Verifies the IR after every pass; ``violation`` holds the first offending pass and message.

    Passes nest (``s_tir.HoistIfThenElse`` runs ``InsertHoistIfThenElseBasic`` inside): the
    violation names the outermost pass running, the one a pass sequence (and a reproducer's step
    list) contains, and keeps the innermost one as ``inner``.
    """

    def __init__(self) -> None:
        self.violation: dict[str, str] | None = None
        self.checked = 0
        self._running: list[str] = []

    def run_before_pass(self, mod: Any, info: Any) -> None:
        """Track which passes are running (outermost first)."""
        self._running.append(str(info.name))

    def run_after_pass(self, mod: Any, info: Any) -> None:
        """Check the module the pass returned, until the first violation."""
        name = self._running.pop() if self._running else str(info.name)
        if self.violation is not None:
            return
        self.checked += 1
        reason = verify_module(mod)
        if reason is not None:
            outer = self._running[0] if self._running else name
            self.violation = {"pass": outer, "inner": name, "message": reason}
