"""The schedule level's figure of TVM's API: the transforming primitives of the installed
``tvm.s_tir.Schedule`` (read at run time, :mod:`seedzer.mutate.sched.catalogue`) and the MetaSchedule and
dlight generators it draws from. TVM-free to import: :func:`installed_primitives` imports TVM when called,
in a child forked from the zygote (:meth:`seedzer.levels.sched.level.SchedLevel.api`)."""

from __future__ import annotations

from seedzer.mutate.sched.generator import DECISION_MUTATIONS, DLIGHT_RULES, MS_RULES

LABEL = "schedule primitives"
"""What the operations are."""
GENERATORS = (*(f"ms.rule.{r}" for r in MS_RULES), *(m for m in DECISION_MUTATIONS if m.startswith("ms.")),
              *(f"dlight.{r}" for r in DLIGHT_RULES))
"""The mutation names of MetaSchedule's rules and mutators and dlight's rules the generator applies."""
GENERATORS_LABEL = "MetaSchedule rules and mutators, dlight rules"


def installed_primitives() -> list[str]:
    """The instruction kinds of the installed ``tvm.s_tir.Schedule``'s transforming primitives (what a
    sched test case reports as the primitives it called). Imports TVM."""
    from seedzer.mutate.sched.catalogue import primitives

    return sorted({m.kind for m in primitives() if m.kind})
