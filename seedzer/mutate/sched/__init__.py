"""The schedule level's generators and mutators: MetaSchedule's design space and mutators, dlight's
CPU rules, random primitives of the whole ``tvm.s_tir.Schedule`` API, and insert, delete, replace and
crossover of trace instructions. Importing the package is TVM-free; its modules that read a schedule
import TVM (workers only)."""
