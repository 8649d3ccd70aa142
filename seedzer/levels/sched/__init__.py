"""The schedule level: a PrimFunc from a pool model's lowering with a schedule plan (a trace of
``tvm.s_tir.Schedule`` primitives and MetaSchedule postprocessors): its object, settings, fuzzer and
the worker's memory of plans."""
