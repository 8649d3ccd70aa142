"""The low-level gate's rules about the input program itself: an attribute TVM reserves, undefined
behaviour its seed lacks, and whether TVM's minimal lowering failing on it is TVM's fault (the rules
are ordered by :data:`seedzer.finding.tir.gate.RULES`; the others are in :mod:`.rules`)."""

from __future__ import annotations

import dataclasses

from seedzer.finding.gate import timeout_for
from seedzer.finding.meta import NOT_A_BUG
from seedzer.finding.tir.context import COMPILE_STAGES, TirContext, excused_by_ub, lines, reproduces
from seedzer.finding.tir.culprit import variant
from seedzer.finding.tir.ub_slice import slice_for
from seedzer.finding.tir.witness import forked_ir_before
from seedzer.finding.verdict import CONTRACT, INVALID, Verdict
from seedzer.kernel.common import Symptom
from seedzer.kernel.messages import ir_names
from seedzer.passes.tir.contracts import reserved_attribute


class ReservedAttribute:
    """IR carrying an attribute TVM's lowering puts in place itself is outside every pass's contract."""

    name = "reserved-attribute"

    def judge(self, context: TirContext) -> Verdict | None:
        reserved = reserved_attribute(context.case.script)
        if reserved is None:
            return None
        return context.verdict(NOT_A_BUG, f"{CONTRACT}: the IR carries `{reserved}`, an attribute TVM's lowering "
                               "puts in place itself (its pipeline never gives a pass or the code generator "
                               "another)", context.case, context.seen)


class UndefinedBehaviour:
    """From here on the case expects the failure it showed alone. Undefined or NaN-producing behaviour
    the IR adds to its original seed (:mod:`seedzer.tir.ub`) makes a failure it excuses
    (:func:`~seedzer.finding.tir.context.excused_by_ub`) an invalid test case, unless a slice of
    the IR without it still fails the same way (:mod:`seedzer.finding.tir.ub_slice`): the slice
    is judged instead."""

    name = "undefined-behaviour"

    def judge(self, context: TirContext) -> Verdict | None:
        got = context.seen
        case = context.case = dataclasses.replace(context.case, expected=got)
        # a witness's undefined behaviour was judged against the seed lowered by the same steps
        undefined = self.undefined(context) if excused_by_ub(got) and not context.witnessed else None
        if undefined is None:
            return None
        found = slice_for(context, case, got, context.job.ancestors[0][1])
        if found.script is not None:
            sliced = case.with_steps(case.steps, script=found.script)
            context.notes.append(f"the IR has undefined behaviour its original seed lacks ({undefined}), off the "
                                 f"failure's path: its UB-free slice ({lines(sliced)} lines, {found.steps} shrink "
                                 "steps) fails the same way and is judged instead")
            context.case = sliced
            context.names = context.names | ir_names(found.script)
            return None
        return context.verdict(NOT_A_BUG, f"{INVALID}: the IR has undefined behaviour its original seed lacks "
                               f"({undefined}); no slice without it fails the same way: {found.why}", case, got)

    @staticmethod
    def undefined(context: TirContext) -> str | None:
        """What undefined behaviour the case's IR adds to the original seed (None if none, or when the
        seed is unknown or does not parse)."""
        ancestors, case = context.job.ancestors, context.case
        if not ancestors or ancestors[0][1] == case.script:
            return None
        try:
            seed = context.tester.builder.parse(ancestors[0][1])
            return context.ub_check(context.tester.builder.parse(case.script), seed)
        except Exception as exc:  # an unparsable ancestor says nothing about the candidate
            context.notes.append(f"undefined-behaviour check skipped: {type(exc).__name__}: {exc}"[:200])
            return None


class Mandatory:
    """A failure TVM's minimal lowering shows as well (every optional step left out or minimal: the
    mandatory pipeline, or the code generator, on the program itself) is judged only for a case whose
    checks ask for it (``judge_minimal``: a fuzzed mutant whose parent lowered). It is TVM's only on a
    program a user may write: the IR must print, parse back and pass TIR's well-formedness verifier,
    else the case is invalid, with the verifier's reason. Undefined behaviour was judged by the rule
    before, as for any failure (TVM's deliberate refusal of a division by zero is excused; a crash or
    an internal error at compile time never is: a compiler must compile such a program too)."""

    name = "mandatory"

    def judge(self, context: TirContext) -> Verdict | None:
        case, got = context.case, context.seen
        if (not case.checks.judge_minimal or got.symptom not in (Symptom.EXCEPTION, Symptom.CRASH, Symptom.ILLFORMED)
                or got.stage not in COMPILE_STAGES):
            return None
        minimal = context.observe(variant(case, []))
        if not reproduces(dataclasses.replace(got, step_index=None), minimal, context.names):
            return None
        made = (context.make_witness_ir or forked_ir_before)(case, 0, timeout_for(context.settings, got))
        if made.problem is not None:
            return context.verdict(NOT_A_BUG, f"{INVALID}: TVM's minimal lowering fails on an input that is not a "
                                   f"program TVM accepts: {made.problem}", case, got)
        context.notes.append("TVM's minimal lowering fails the same way on this well-formed program without "
                             "undefined behaviour: its mandatory pipeline or code generator is at fault")
        return None
