"""Mutators, one sub-package per level, and what the levels' mutators share.

- :mod:`seedzer.mutate.tir`: the TIR level's Tzer-style IR mutators, its mutant bounds and Tzer's
  tolerance schedule;
- :mod:`seedzer.mutate.graph`: the graph level's model mutations (MT-DLComp's relations, spec-edge
  changes, operator insertions);
- the house: what every level with a pass sequence uses (the untriggered-pass preference,
  :mod:`seedzer.mutate.untriggered`).

A level's sub-package never imports another level's, and the house imports none (``lint-imports``).
"""
