"""The schedule family: a schedule trace's instructions (and the MetaSchedule postprocessors after them) as a
pass sequence the house's mutators edit, its items and how a sequence is kept as a trace (TVM-free)."""
