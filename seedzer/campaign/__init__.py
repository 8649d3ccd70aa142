"""A fuzzing campaign: loading seeds, the fuzz loop, snapshots, findings and resume."""
