"""The schedule level's case: a PrimFunc, a schedule trace, MetaSchedule postprocessors, optional TIR
passes after them, and what to check.

A :class:`SchedCase` is what a sched-level worker runs, what a ``sched`` finding's ``case.json`` will
hold and what its ``repro.py`` carries as ``CASE``: the PrimFunc's TVMScript as the loader lowered it
(unscheduled), the trace (TVM's trace JSON, decisions included: :mod:`seedzer.kernel.sched.trace`),
the names of MetaSchedule postprocessors applied after it (as a tuning run applies them to a
sampled schedule), an optional flat TIR step list after the schedule (:class:`~seedzer.kernel.tir.case.Step`;
empty: ``tvm.compile``'s own pipeline), the input seed, the build target and tolerances.
:func:`seedzer.kernel.sched.observe.observe` runs it. This module holds only data, so the campaign
process handles sched cases without importing TVM.

Depends on the standard library and the kernel modules before it only (copied verbatim into repro.py).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from seedzer.kernel.common import Observation
from seedzer.kernel.sched.trace import Instruction, TraceError, parse_trace, trace_json, trace_problem
from seedzer.kernel.tir.case import O0, Step

# --- kernel code (everything below is copied verbatim into repro.py) ---
LLVM_POSTPROCS = ("DisallowDynamicLoop", "RewriteParallelVectorizeUnroll", "RewriteReductionBlock",
                  "RewriteLayout")
"""MetaSchedule's postprocessors for an llvm target, in its order (``Postproc.create("llvm")``)."""
NUM_CORES = 2
"""The ``num-cores`` of the llvm target MetaSchedule's rules and mutators see (parallel extents)."""


@dataclasses.dataclass(frozen=True)
class SchedChecks:
    """What :func:`~seedzer.kernel.sched.observe.observe` looks for besides errors: ill-formed IR
    after each primitive, the scheduled build's result against the unscheduled build's, and TVM's
    own consistency checks of the schedule state after every primitive (``debug_mask``: ``all`` or
    0)."""

    illformed: bool = True
    compare: bool = True
    debug_mask: str | int = "all"


@dataclasses.dataclass(frozen=True)
class SchedCase:
    """One schedule-level test case with everything needed to run it and judge it."""

    script: str
    trace: list[Any]
    input_seed: int
    postprocs: tuple[str, ...] = ()
    steps: tuple[Step, ...] = ()
    target: dict[str, Any] = dataclasses.field(default_factory=lambda: dict(O0))
    num_cores: int = NUM_CORES
    rtol: float = 1e-4
    atol: float = 1e-5
    checks: SchedChecks = SchedChecks()
    timeout: float = 60.0
    max_elems: int = 1 << 22
    expected: Observation | None = None

    def instructions(self) -> list[Instruction]:
        """The trace's instructions (raises :class:`~seedzer.kernel.sched.trace.TraceError`)."""
        return parse_trace(self.trace)

    def to_json(self) -> dict[str, Any]:
        """JSON-friendly form (what ``case.json`` and a reproducer's ``CASE`` hold)."""
        data = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        data["postprocs"] = list(self.postprocs)
        data["steps"] = [s.to_json() for s in self.steps]
        data["checks"] = dataclasses.asdict(self.checks)
        data["expected"] = self.expected.to_json() if self.expected else None
        return data

    @staticmethod
    def from_json(data: dict[str, Any]) -> SchedCase:
        """Inverse of :meth:`to_json`."""
        data = dict(data)
        data["postprocs"] = tuple(data.get("postprocs") or ())
        data["steps"] = tuple(Step.from_json(s) for s in data.get("steps") or ())
        data["checks"] = SchedChecks(**data.get("checks", {}))
        data["expected"] = Observation.from_json(data["expected"]) if data.get("expected") else None
        known = {f.name for f in dataclasses.fields(SchedCase)}
        return SchedCase(**{k: v for k, v in data.items() if k in known})


@dataclasses.dataclass(frozen=True)
class SchedPlan:
    """What a sched corpus entry adds to its PrimFunc: the trace and the postprocessors after it
    (the entry's pass-sequence document; :meth:`to_json` is what is stored)."""

    trace: list[Any]
    postprocs: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        """JSON-friendly form."""
        return {"trace": self.trace, "postprocs": list(self.postprocs)}

    @staticmethod
    def from_json(data: Any) -> SchedPlan:
        """Inverse of :meth:`to_json` (raises :class:`~seedzer.kernel.sched.trace.TraceError` on a
        document that is not a plan)."""
        if not isinstance(data, dict) or "trace" not in data:
            raise TraceError("a schedule plan is {'trace': [...], 'postprocs': [...]}")
        postprocs = data.get("postprocs") or []
        if not isinstance(postprocs, list) or not all(isinstance(p, str) for p in postprocs):
            raise TraceError("the postprocessors are not a list of names")
        return SchedPlan(data["trace"], tuple(postprocs))

    @staticmethod
    def of(instructions: list[Instruction], postprocs: tuple[str, ...] = ()) -> SchedPlan:
        """The plan of a list of instructions."""
        return SchedPlan(trace_json(instructions), postprocs)


def plan_problem(data: Any) -> str | None:
    """Why a stored plan cannot be run (None: it may): not a plan, a malformed trace, an unknown
    postprocessor (checked without TVM: what resuming a campaign says of a hand-edited entry)."""
    try:
        plan = SchedPlan.from_json(data)
        problem = trace_problem(parse_trace(plan.trace))
    except TraceError as exc:
        return str(exc)
    unknown = [p for p in plan.postprocs if p not in LLVM_POSTPROCS]
    if problem is None and unknown:
        problem = f"unknown postprocessor {unknown[0]!r} (known: {', '.join(LLVM_POSTPROCS)})"
    return problem
