"""Validity gate for IR mutants (the retrying driver that applies IR mutators is :mod:`seedzer.mutate.tir.driver`).

``tvm.tirx.analysis.verify_well_formed`` rejects any function that still holds schedulable blocks
("TIR verifier does not support statement s_tir.SBlockRealize"). Every seed from LegalizeOps does,
so the gate uses ``tvm.s_tir.analysis.verify_well_formed`` instead: it checks definitions (SSA,
undefined variables), buffer-load types and S-TIR block boundaries (e.g. a block body using an
outer loop variable) and accepts ordinary TIR as well. It is followed by
``tvm.s_tir.analysis.OOBChecker``, which proves constant-bounded buffer accesses in range,
as a second line of defence against out-of-bounds mutants (the mutators avoid them by
construction). On block IR it understands block predicates and padding guards; after flattening
its interval analysis ignores guards and raises false alarms, so it is run on the mutant as is.
Given the parent, :func:`seedzer.tir.ub.check` then rejects
undefined or NaN-producing behaviour the mutant adds to it: divisions by a range holding zero,
math intrinsics off their domain or overflowing, reads of uninitialised memory, lost writes, double
writes. Optionally (``roundtrip=True``, far dearer than the checks) the mutant is printed and
re-parsed twice, since only TVMScript text crosses process boundaries. (What each check costs:
docs/measurements.md, 'Mutant validity'.)
"""

from __future__ import annotations

from typing import Any

import tvm
import tvm_ffi
from tvm import s_tir, tirx

from seedzer.tir import ub


def first_error_line(exc: BaseException) -> str:
    """The line of a TVM error that says what failed (a 'Check failed' or error line), at most 300 chars."""
    lines = [ln.strip() for ln in str(exc).strip().splitlines() if ln.strip()]
    for ln in lines:
        if "check failed" in ln.lower() or "error" in ln.lower():
            return ln[:300]
    return (lines[0] if lines else type(exc).__name__)[:300]


def check_well_formed(func: Any, roundtrip: bool = False, parent: Any = None) -> str | None:
    """Return None if ``func`` is a well-formed PrimFunc with provably in-bounds accesses (and, given
    the ``parent`` it was mutated from, no undefined behaviour the parent lacks), else why not."""
    if not isinstance(func, tirx.PrimFunc):
        return f"not a PrimFunc but {type(func).__name__}"
    try:
        s_tir.analysis.verify_well_formed(func, True)
    except Exception as exc:
        return "ill-formed: " + first_error_line(exc)
    try:
        s_tir.analysis.OOBChecker()(tvm.IRModule({"main": func}))
    except Exception as exc:
        return "out-of-bounds: " + first_error_line(exc)
    if parent is not None:
        reason = ub.check(func, parent)
        if reason is not None:
            return reason
    if roundtrip:
        return _roundtrip(func)
    return None


def _roundtrip(func: Any) -> str | None:
    """Print and re-parse ``func``: the text must parse to a well-formed function that prints and
    parses back to itself. (The parser folds constant sub-expressions and drops ``T.evaluate(0)``,
    so the re-parsed function may legitimately differ from ``func`` itself.)
    """
    try:
        back = tvm.script.from_source(str(func.script()))
        again = tvm.script.from_source(str(back.script()))
    except Exception as exc:
        return "script round trip: " + first_error_line(exc)
    if not tvm_ffi.structural_equal(back, again, map_free_vars=True):
        return "script round trip: printed text is not stable"
    reason = check_well_formed(back)
    return None if reason is None else "script round trip: " + reason
