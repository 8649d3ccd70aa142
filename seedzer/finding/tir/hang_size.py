"""Whether a hang is the work a test case asks for: unrolling it requests, grown into huge IR.

A slow compile or kernel is a TVM bug when TVM makes work nobody asked for. A test case asks for
code growth when its IR holds explicitly unrolled loops (``T.unroll``) or an unroll pragma, or when
a fuzzed UnrollLoop configuration sets ``auto_max_extent`` (every loop up to that extent is unrolled
whatever its body). Its step criterion (``auto_max_step``) bounds the unrolled steps by itself, so a
blow-up under it alone is TVM's doing (e.g. a nest with no counted step unrolled whole).
When such a request exists and the IR is huge (:class:`IRSize`: the program that hung in code
generation or in its kernel, or the IR entering the pass that hung), the time goes to code the test
case asked for: many statements of unrolled IR, or a few statements of huge expressions (the
"hangs" audited campaigns filed: docs/measurements.md, 'Filing gate').
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from seedzer.kernel.common import MINIMAL, REFERENCE
from seedzer.kernel.tir.case import FUZZED, Case, Step, minimal_steps, reference_steps

HUGE_IR_STATEMENTS = 2000
"""IR with more statements is huge: well above what the pools' operator kernels lower to (why this
value: docs/measurements.md, 'Filing gate')."""
HUGE_IR_NODES = 200_000
"""IR with more statement and expression nodes is huge: above every kernel of a campaign's corpus as
lowered, unrolled ones included, and below what a kernel with its outer loops unrolled lowers to
(why this value: docs/measurements.md, 'Filing gate')."""
UNROLL_IN_SCRIPT = re.compile(r"T\.unroll\(|pragma_auto_unroll_max_step|pragma_unroll_explicit\W+1")
"""Explicitly unrolled loops or an unroll pragma in TVMScript."""


@dataclass(frozen=True)
class IRSize:
    """The size of lowered IR: its statements and its statement and expression nodes, each counted up
    to one past its huge threshold (a walk stops there: a huge module costs no more than a big one)."""

    statements: int
    nodes: int

    @property
    def huge(self) -> bool:
        """Whether either count is past its threshold."""
        return self.statements > HUGE_IR_STATEMENTS or self.nodes > HUGE_IR_NODES

    def describe(self) -> str:
        """The count past its threshold, for a verdict (``over 2,000 statements``)."""
        if self.statements > HUGE_IR_STATEMENTS:
            return f"over {HUGE_IR_STATEMENTS:,} statements"
        if self.nodes > HUGE_IR_NODES:
            return f"over {HUGE_IR_NODES:,} IR nodes (statements and expressions)"
        return f"{self.statements:,} statements and {self.nodes:,} IR nodes"


def unrolling_asked(case: Case) -> str | None:
    """What in ``case`` asks for unrolled code (None: nothing does)."""
    if UNROLL_IN_SCRIPT.search(case.script):
        return "the IR unrolls loops explicitly (T.unroll or an unroll pragma)"
    for step in case.steps:
        unroll = step.config.get("tirx.UnrollLoop", {})
        if step.role == FUZZED and int(unroll.get("auto_max_extent", 0) or 0) > 1:
            return f"a fuzzed UnrollLoop configuration unrolls every loop of extent up to {unroll['auto_max_extent']}"
    return None


def program_steps(case: Case, program: str, before: str | None = None) -> list[Step]:
    """The steps of ``program`` (``opt``, ``reference`` or ``minimal``) of ``case``; with ``before``,
    only those ahead of its first step of that name (all of them when it has none)."""
    steps = {REFERENCE: reference_steps, MINIMAL: minimal_steps}.get(program, list)(case.steps)
    cut = next((i for i, step in enumerate(steps) if step.name == before), len(steps)) if before else len(steps)
    return steps[:cut]


def ir_size(module: Any, statements: int = HUGE_IR_STATEMENTS, nodes: int = HUGE_IR_NODES) -> IRSize:
    """The :class:`IRSize` of ``module``, every occurrence of a node counted; the walk stops once
    ``statements`` or ``nodes`` is exceeded."""
    import tvm
    import tvm_ffi

    counts = [0, 0]

    def visit(node: Any) -> Any:
        counts[0] += isinstance(node, tvm.tirx.Stmt)
        counts[1] += 1
        return tvm_ffi.VisitInterrupt(None) if counts[0] > statements or counts[1] > nodes else None

    tvm_ffi.structural_walk(module, ((tvm.tirx.Stmt, tvm.ir.Expr), visit), order="pre")
    return IRSize(*counts)


def lowered_size(case: Case, program: str, before: str | None = None, statements: int = HUGE_IR_STATEMENTS,
                 nodes: int = HUGE_IR_NODES) -> IRSize:
    """The :func:`ir_size` of ``program`` of ``case`` lowered: the code generator's input once all its
    steps ran, or with ``before`` the input of its first step of that name (:func:`program_steps`).
    Runs TVM (call it in a forked child)."""
    from seedzer.kernel.tir.lowering import lower, make_target, parse_func

    steps = program_steps(case, program, before)
    return ir_size(lower(parse_func(case.script), steps, make_target(case.target), program=program), statements,
                   nodes)
