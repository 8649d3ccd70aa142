"""The schedule level's own settings (``levels.sched.*`` in the configuration). TVM-free: the
configuration reads them in the campaign process (:mod:`seedzer.config.levels`), a worker's sched
fuzzer uses them."""

from __future__ import annotations

from dataclasses import dataclass

from seedzer.config import WEIGHT, Check, setting
from seedzer.mutate.sched.generator import DEFAULT_WEIGHTS, SPACE_FIRST
from seedzer.passes.sched.family import MAX_INSTRUCTIONS

W = DEFAULT_WEIGHTS


@dataclass
class SchedSettings:
    """How the schedule level makes its plans: the weight of each way (0 turns it off), the longest trace,
    and how often a seed is first given MetaSchedule's design space."""

    space: float = setting(W["ms.space"], "Weight of MetaSchedule's design space for llvm (its default CPU "
                           "schedule rules), decisions sampled, with the llvm postprocessors: a schedule a tuning "
                           "run could pick.", WEIGHT)
    dlight: float = setting(W["dlight"], "Weight of dlight's CPU rules (GEMV, Reduction) where one applies.", WEIGHT)
    decisions: float = setting(W["decisions"], "Weight of MetaSchedule's mutators on a plan's decisions (tile "
                               "sizes, unroll steps, compute locations, parallel extents).", WEIGHT)
    insert: float = setting(W["trace.insert"], "Weight of inserting a primitive drawn from the whole Schedule API, "
                            "its arguments from the function's blocks, loops and buffers at its place in the trace.",
                            WEIGHT)
    delete: float = setting(W["trace.delete"], "Weight of deleting a primitive (with what uses its results).",
                            WEIGHT)
    replace: float = setting(W["trace.replace"], "Weight of replacing a primitive by one drawn at its place.", WEIGHT)
    crossover: float = setting(W["trace.crossover"], "Weight of crossing a plan with another plan of the same "
                               "PrimFunc the worker has seen.", WEIGHT)
    postprocs: float = setting(W["postprocs"], "Weight of switching MetaSchedule's llvm postprocessors on or off "
                               "after the trace.", WEIGHT)
    max_instructions: int = setting(MAX_INSTRUCTIONS, "Longest trace (instructions, getters and samplers "
                                    "included); a longer mutant is not made.",
                                    Check("must be between 1 and 5000", lambda v: 1 <= v <= 5000))
    space_first: float = setting(SPACE_FIRST, "How often a seed's empty plan is first given MetaSchedule's design "
                                 "space (else a drawn way).",
                                 Check("must be a share between 0 and 1", lambda v: 0 <= v <= 1))

    def weights(self) -> dict[str, float]:
        """Way -> weight (the generator's names: ``ms.space``, ``trace.insert``...), of the ways turned on."""
        named = {"ms.space": self.space, "dlight": self.dlight, "decisions": self.decisions,
                 "trace.insert": self.insert, "trace.delete": self.delete, "trace.replace": self.replace,
                 "trace.crossover": self.crossover, "postprocs": self.postprocs}
        return {way: w for way, w in named.items() if w > 0}

    def conflict(self, where: str) -> str | None:
        """Why these settings cannot go together (every way off), in one line; None when they can."""
        if not self.weights():
            return (f"field '{where}' turns every way of making a schedule off (give space, dlight, decisions, insert, "
                    "delete, replace, crossover or postprocs a weight > 0)")
        return None
