"""The schedule level's kernel wing: a PrimFunc, a schedule trace and MetaSchedule postprocessors
applied primitive by primitive, built and compared with the function unscheduled (TVM-free data in
:mod:`.trace` and :mod:`.case`)."""

CHAIN = "tir.case+tir.lowering+sched.trace+sched.case+sched.reduction+sched.apply+sched.observe"
"""The kernel modules a sched reproducer carries after the shared ones, in order (each needs only those
before it; the last one's ``main`` runs the case): a future ``sched`` finding kind's ``KERNEL``."""
