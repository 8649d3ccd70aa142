"""The levels a test case lives at, each one object behind the :class:`~seedzer.levels.level.Level` seam.

A level (:mod:`seedzer.levels.tir`, :mod:`seedzer.levels.graph`) says how its test cases are seeded
from a loaded pool model, how a worker mutates and runs them (its fuzzer), which mutations it makes
(the rows ``status`` shows) and, by its name, which finding kind files them. Its name, default weight
and corpus suffix are in :mod:`seedzer.level_table`, and :func:`seedzer.levels.registry.level` loads its
object by name: the campaign, the scheduler, ``status`` and the reports iterate over the registered
levels and never name one.
"""
