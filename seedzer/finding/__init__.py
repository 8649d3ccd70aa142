"""Findings: from a bug observation to a filed, gated, reduced finding with its ``repro.py``.

The house (this package's top-level modules) knows no kind: a finding kind (``lowlevel``,
``loader``...) is one sub-package behind the :class:`~seedzer.finding.kind.FindingKind` seam,
registered by name in :mod:`seedzer.finding.registry` and imported lazily. The house holds what
every kind shares: the finding's ``meta.json`` (:mod:`~seedzer.finding.meta`), the folder and its
database row (:mod:`~seedzer.finding.store`), the generic file names (:mod:`~seedzer.finding.layout`),
rendering and running ``repro.py`` (:mod:`~seedzer.finding.repro`), verdicts and the gate's rule
engine (:mod:`~seedzer.finding.verdict`, :mod:`~seedzer.finding.gate`), the reducer engine
(:mod:`~seedzer.finding.reducer`, :mod:`~seedzer.finding.ddmin`), replay and recheck.
"""
