"""TVM errors that mean "invalid input" (a violated, stated precondition), not a bug.

Collected by running every pass alone and in random sequences on the fixture seeds (TVM
0.27.0.post1). With pass contracts (:mod:`seedzer.passes.tir.contracts`) fuzzed passes only see IR in the
form TVM's pipeline gives them, so these fire rarely; each is a pass stating what it needs.
"""

from __future__ import annotations

import re

PRECONDITION_PATTERNS: tuple[str, ...] = (
    r"must be called after",
    r"should be (called|run|applied) (after|before)",
    r"requires? .{0,80}to be (run|called|applied) (first|before)",
    r"expects? .{0,80}\b(lowered|flattened)\b",
    r"Please call pass \w+ before",
    r"is not supported (yet )?(in|for|by) (this|the) (pass|target)",
    r"(have|has) not been lowered",
    r"is expected to have been lowered",
    r"only supports? .*PrimFunc",
    r"TIR verifier does not support",
    r"Require the target attribute",
    r"required the function to be annotated with tvm::attr::kTarget",
    r"Target context required",
    r"The target is missing either in the current context or in the prim_func",
    r"Target .* is not (defined|set)",
    r"only works on opaque blocks",
    r"Non-opaque blocks are not allowed",
    r"RewriteSimplifier exceeded maximum number",  # tirx.RemoveNoOp max_simplification_steps
    # tirx.ForceNarrowIndexToInt32 (for WebGPU) refuses integer buffers wider than int32 by design:
    r"The buffer (parameter \S+|\S+ allocated in the function) has dtype",
)
"""Messages in which a pass states a precondition of its input."""

_PRECONDITION = re.compile("|".join(f"(?:{p})" for p in PRECONDITION_PATTERNS), re.IGNORECASE)


def is_precondition_error(message: str) -> bool:
    """True when a TVM error says the input broke a pass's stated precondition (not a bug)."""
    return bool(_PRECONDITION.search(message))


_EACH = tuple(re.compile(p, re.IGNORECASE) for p in PRECONDITION_PATTERNS)


def precondition_pattern(message: str) -> str | None:
    """The first of :data:`PRECONDITION_PATTERNS` that ``message`` matches (None: none does), so the
    campaign can count how often each fired."""
    return next((p for p, rx in zip(PRECONDITION_PATTERNS, _EACH, strict=True) if rx.search(message)), None)
