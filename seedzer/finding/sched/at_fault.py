"""The schedule kind's code at fault: its ordered fault rules (:mod:`seedzer.finding.fault`).

A schedule finding surfaces in a primitive, a postprocessor, the build of the scheduled function, its run
or the comparison of its results; what a TVM maintainer fixes is named in this order: the primitive's
implementation its frames name (``tvm::s_tir::ReIndex(ScheduleState, ...)`` is
``s_tir.schedule.ReIndex``, whichever instruction or pass it surfaced in); a MetaSchedule postprocessor
that failed; the pass of TVM's default pipeline that fails on, or miscompiles, the scheduled IR the
verifier passed (found by the gate: :class:`~seedzer.finding.sched.rules.Lowering`); a shared component
its frames name (the arithmetic analyzer, a code generator's intrinsic rule); else the primitive that
failed, or for a build, run or comparison the last primitive of the trace the gate's ddmin kept.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from seedzer.finding.component import crash_frames
from seedzer.finding.fault import FaultRules, SharedComponentRule
from seedzer.finding.verdict import AtFault
from seedzer.kernel.common import Observation, Stage
from seedzer.kernel.sched.trace import TRANSFORMING

PRIMITIVE = "s_tir.schedule."
"""How a primitive's implementation is named: ``s_tir.schedule.<Name>`` (TVM's ``tvm::s_tir::<Name>``, in
``src/s_tir/schedule/primitive/``)."""
POSTPROC = "s_tir.meta_schedule.postproc."
"""How a MetaSchedule postprocessor is named: ``s_tir.meta_schedule.postproc.<Name>``."""
IMPLEMENTATION = re.compile(r"(?:^|\s)tvm::s_tir::(\w+)\((?:tvm::s_tir::)?ScheduleState\b")
"""A frame of a primitive's implementation: a function of ``tvm::s_tir`` taking the schedule's state."""
COMPILE = "tvm.compile"
"""What a failure in the build is named after when no primitive and no pass is at fault."""


def implementation(frames: Sequence[str]) -> tuple[str, str] | None:
    """``(primitive, frame)`` of the innermost frame that is a primitive's implementation (None: no frame
    is)."""
    for frame in reversed(frames):
        found = IMPLEMENTATION.search(frame)
        if found:
            return found.group(1), frame
    return None


@dataclass(frozen=True)
class SchedFault:
    """What the schedule kind's fault rules read: the confirmed failure (``campaign``: as the campaign saw
    it, whose crash report may carry frames a re-run's lacks), the trace's primitives as the gate kept
    them, the postprocessors, and the pipeline pass the gate found failing on the scheduled IR."""

    observation: Observation
    primitives: tuple[str, ...] = ()
    postprocs: tuple[str, ...] = ()
    lowering: str | None = None
    campaign: Observation | None = None

    @property
    def frames(self) -> tuple[str, ...]:
        """The failure's frames, innermost last (the re-run's, else the campaign's crash report's)."""
        for obs in (self.observation, self.campaign):
            if obs is not None:
                found = obs.frames or crash_frames(obs.message)
                if found:
                    return tuple(found)
        return ()

    @property
    def reached(self) -> tuple[str, ...]:
        """The primitives that led there."""
        return tuple(PRIMITIVE + p for p in self.primitives)

    @property
    def step(self) -> str | None:
        """The step of stage ``schedule`` it failed at (a primitive's kind or a postprocessor), else None."""
        obs = self.observation
        return obs.pass_name if obs.stage is Stage.SCHEDULE else None


class ImplementationFrame:
    """The frames name a schedule primitive's implementation (``tvm::s_tir::<Name>(ScheduleState, ...)``):
    that primitive, whichever instruction, postprocessor or pass it was reached from."""

    name = "primitive-frame"

    def decide(self, context: SchedFault) -> AtFault | None:
        """``s_tir.schedule.<Name>`` of the innermost implementation frame, or None."""
        found = implementation(context.frames)
        if found is None:
            return None
        primitive, frame = found
        code = PRIMITIVE + primitive
        return AtFault(code, f"raised in {frame}", tuple(r for r in context.reached if r != code))


class Postprocessor:
    """A MetaSchedule postprocessor failed (or crashed) on a schedule every primitive of which accepted its
    arguments: that postprocessor."""

    name = "postprocessor"

    def decide(self, context: SchedFault) -> AtFault | None:
        """``s_tir.meta_schedule.postproc.<Name>``, or None."""
        step = context.step
        if step is None or step not in context.postprocs:
            return None
        return AtFault(POSTPROC + step, f"the postprocessor {step} failed after the trace applied", context.reached)


class LoweringPass:
    """The scheduled IR passed TIR's verifier after every primitive, and a pass of TVM's default pipeline
    fails on it, or is the one pass whose optimizing form the wrong result needs: that pass (TVM's
    maintainers fix the pass; the primitives only made the IR it cannot handle)."""

    name = "lowering-pass"

    def decide(self, context: SchedFault) -> AtFault | None:
        """The pass the gate found, or None."""
        if context.lowering is None:
            return None
        return AtFault(context.lowering, f"the scheduled IR is well-formed, and {context.lowering} of TVM's default "
                       "pipeline fails on it (or alone makes the wrong result)", context.reached)


class FailingPrimitive:
    """Otherwise the primitive the failure happened in (stage ``schedule``), or for a build, run or
    comparison the last primitive of the trace the gate's ddmin kept (the one whose output the build could
    not handle); ``tvm.compile`` when the trace kept none. Always answers."""

    name = "primitive"

    def decide(self, context: SchedFault) -> AtFault:
        """The primitive (or ``tvm.compile``)."""
        step = context.step
        if step is not None and step in TRANSFORMING:
            return AtFault(PRIMITIVE + step, f"the primitive {step} failed after accepting its arguments",
                           tuple(r for r in context.reached if r != PRIMITIVE + step))
        if context.primitives:
            last = context.primitives[-1]
            where = context.observation.where()
            return AtFault(PRIMITIVE + last, f"the last primitive the trace needs ({last}); the failure at {where} "
                           "comes after it", context.reached[:-1])
        return AtFault(COMPILE, "no primitive is needed: the build of the function fails", ())


FAULT_RULES: FaultRules[SchedFault] = FaultRules((ImplementationFrame(), Postprocessor(), LoweringPass(),
                                                  SharedComponentRule[SchedFault](), FailingPrimitive()))
"""The schedule kind's fault rules, in the order they decide (the first answer wins)."""
