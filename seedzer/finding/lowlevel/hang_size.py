"""Whether a hang is the work a test case asks for: unrolling it requests, grown into huge IR.

A slow compile or kernel is a TVM bug when TVM makes work nobody asked for. A test case asks for
code growth when its IR holds explicitly unrolled loops (``T.unroll``) or an unroll pragma, or when
a fuzzed UnrollLoop configuration sets ``auto_max_extent`` (every loop up to that extent is unrolled
whatever its body). Its step criterion (``auto_max_step``) bounds the unrolled steps by itself, so a
blow-up under it alone is TVM's doing (e.g. a nest with no counted step unrolled whole).
When such a request exists and the program that hung lowers to more than :data:`HUGE_IR_STATEMENTS`
statements, the time goes to code the test case asked for (an audited 60-minute campaign filed two
such "hangs": LLVM compiling about 7,500 and 150,000 lines of unrolled IR).
"""

from __future__ import annotations

import re
from typing import Any

from seedzer.kernel.common import FUZZED, MINIMAL, REFERENCE, Case, minimal_steps, reference_steps

HUGE_IR_STATEMENTS = 2000
"""Lowered IR with more statements is huge: the pools' operator kernels lower to a few hundred at most."""
UNROLL_IN_SCRIPT = re.compile(r"T\.unroll\(|pragma_auto_unroll_max_step|pragma_unroll_explicit\W+1")
"""Explicitly unrolled loops or an unroll pragma in TVMScript."""


def unrolling_asked(case: Case) -> str | None:
    """What in ``case`` asks for unrolled code (None: nothing does)."""
    if UNROLL_IN_SCRIPT.search(case.script):
        return "the IR unrolls loops explicitly (T.unroll or an unroll pragma)"
    for step in case.steps:
        unroll = step.config.get("tirx.UnrollLoop", {})
        if step.role == FUZZED and int(unroll.get("auto_max_extent", 0) or 0) > 1:
            return f"a fuzzed UnrollLoop configuration unrolls every loop of extent up to {unroll['auto_max_extent']}"
    return None


def lowered_statements(case: Case, program: str, limit: int = HUGE_IR_STATEMENTS) -> int:
    """How many statements (up to ``limit + 1``: counting stops there) the host module of ``program``
    (``opt``, ``reference`` or ``minimal``) has once all its steps ran: the code generator's input.
    Runs TVM (call it in a forked child)."""
    from seedzer.kernel.lowlevel import lower, make_target, parse_func

    steps = {REFERENCE: reference_steps, MINIMAL: minimal_steps}.get(program, list)(case.steps)
    module: Any = lower(parse_func(case.script), steps, make_target(case.target), program=program)
    stack = [func.body for func in module.functions.values() if hasattr(func, "body")]
    count = 0
    while stack and count <= limit:
        stmt = stack.pop()
        count += 1
        seq = getattr(stmt, "seq", None)
        if seq is not None:
            stack.extend(seq)
        for name in ("body", "then_case", "else_case"):
            child = getattr(stmt, name, None)
            if child is not None:
                stack.append(child)
    return count
