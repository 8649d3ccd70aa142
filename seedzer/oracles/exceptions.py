"""Classify TVM errors: precondition violations are invalid inputs, anything else is a finding."""

from __future__ import annotations

import re

PRECONDITION_PATTERNS: tuple[str, ...] = (
    r"must be called after",
    r"should be (called|run|applied) (after|before)",
    r"requires? .* to be (run|applied|called) (first|before)",
    r"expects? .* (lowered|flattened)",
    r"is not supported (yet )?(in|for|by) (this|the) (pass|target)",
    r"(have|has) not been lowered",
    r"only supports? .*PrimFunc",
    r"is expected to have been lowered",
    r"TIR verifier does not support",
    r"Cannot find global var",
    r"Target .* is not (defined|set)",
    r"target (is )?(not )?(defined|found|specified)",
)

_PRECONDITION = re.compile("|".join(f"(?:{p})" for p in PRECONDITION_PATTERNS), re.IGNORECASE)


def is_precondition_error(message: str) -> bool:
    """True when a TVM error says the input broke a pass's documented precondition (not a bug)."""
    return bool(_PRECONDITION.search(message))
