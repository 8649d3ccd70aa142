"""Recognising TIR pass errors that mean "invalid input" (a violated precondition), not a bug.

The patterns were collected by running every registry pass alone, and random sequences, on the
fixture seeds (TVM 0.27.0.post1). Two groups:

- :data:`PRECONDITION_PATTERNS`: the pass states what it needs (a target attribute, an earlier
  pass, a dtype it refuses). Always invalid input.
- :data:`STAGE_PATTERNS`: a pass was run before the lowering it silently relies on (e.g.
  StorageRewrite on block IR). Invalid input when sequences are applied raw; when
  :func:`seedzer.mutate.passes.apply_passes` repairs the sequence (its default) the stage is
  guaranteed, so these messages then point at a pass that broke the IR and are *not* excused.
"""

from __future__ import annotations

import re

PRECONDITION_PATTERNS: tuple[str, ...] = (
    r"must be called after",
    r"requires? .{0,80}to be (run|called|applied) (first|before)",
    r"expects? .{0,80}\blowered\b",
    r"Please call pass \w+ before",
    r"Require the target attribute",
    r"required the function to be annotated with tvm::attr::kTarget",
    r"Target context required",
    r"The target is missing either in the current context or in the prim_func",
    r"only works on opaque blocks",
    r"Non-opaque blocks are not allowed",
    r"ForceNarrowIndexToInt32|The buffer parameter \S+ has dtype",
    r"Divide by zero",
    r"RewriteSimplifier exceeded maximum number",  # tirx.RemoveNoOp max_simplification_steps
    r"Unknown device id in current IR",  # LowerTVMBuiltin before MakePackedAPI set the device
)
"""Messages in which a pass states a precondition."""

STAGE_PATTERNS: tuple[str, ...] = (
    r"\(!(op|block_op)->init\.has_value\(\)\) is false",
    r"is used before its definition \(AllocBuffer/DeclBuffer/PrimFunc param\)",
    r"Load/Store of buffer \S+ \(0x[0-9a-f]+\) occurred before its declaration",
    r"is allocated with \d+ physical dimensions",
    r"are used, but are not passed in as API arguments",
    r"VectorizeLoop before LiftStorageAlloc",
    r"Failed to lower the TIRx program",
)
"""Messages of passes run before the lowering they rely on (see the module docstring)."""

_PRE = re.compile("|".join(PRECONDITION_PATTERNS), re.IGNORECASE)
_STAGE = re.compile("|".join(STAGE_PATTERNS))


def classify_pass_error(message: str, repaired: bool = True) -> bool:
    """True if ``message`` (a pass exception's text) is a precondition error, i.e. invalid input.

    ``repaired`` says whether the sequence ran through ``apply_passes(..., repair=True)``; if not,
    lowering-order errors (:data:`STAGE_PATTERNS`) count as preconditions too.
    """
    if _PRE.search(message):
        return True
    return not repaired and bool(_STAGE.search(message))
