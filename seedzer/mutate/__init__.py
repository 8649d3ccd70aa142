"""Mutators, one sub-package per level, and what the levels' mutators share.

- :mod:`seedzer.mutate.tir`: the TIR level's Tzer-style IR mutators, its mutant bounds and Tzer's
  tolerance schedule;
- :mod:`seedzer.mutate.graph`: the graph level's model mutations (MT-DLComp's relations, spec-edge
  changes, operator insertions);
- the house: the sequence mutators, written once and made with a pass family
  (:mod:`seedzer.mutate.sequence`, :mod:`seedzer.passes.family`), the preference for passes an entry
  has not triggered (:mod:`seedzer.mutate.untriggered`) and the weighted choice of a mutator
  (:mod:`seedzer.mutate.weighted`).

A level's sub-package never imports another level's, and the house imports none (``lint-imports``).
"""
