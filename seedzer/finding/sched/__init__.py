"""The schedule kind: a PrimFunc scheduled by a trace of ``tvm.s_tir.Schedule`` primitives (and MetaSchedule's
postprocessors) that TVM fails on, builds wrongly or crashes on: its folder (:mod:`.folder`), its gate
(:mod:`.gate`, rules in :mod:`.rules`, the code at fault in :mod:`.at_fault`), its reducer
(:mod:`.reduce`: ddmin over the trace, then the house's IR shrinking), its plain reproducer
(:mod:`.minimal_repro`: TVMScript, Schedule calls, ``tvm.compile``) and triage (:mod:`.triage`)."""
