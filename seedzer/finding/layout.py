"""The file names every finding folder shares, whatever its kind.

A kind's own files (its case, IR, model, log) are spelled by its ``folder`` module
(:mod:`seedzer.finding.tir.folder`, :mod:`seedzer.finding.load.folder`); these are the ones
the house reads and writes for every kind.
"""

from __future__ import annotations

META_FILE = "meta.json"
"""The finding's record (:class:`seedzer.finding.meta.FindingMeta`)."""
REPRO_FILE = "repro.py"
"""The standalone reproducer (:mod:`seedzer.finding.repro`)."""
REDUCED_DIR = "reduced"
"""What ``seedzer triage`` wrote: the reduced case, its state and its ``repro.py``."""
STATE_FILE = "state.json"
"""The reducer's resumable state, inside :data:`REDUCED_DIR`."""
REPORT_FILE = "report.md"
"""The bug-report draft ``seedzer triage`` writes."""
LEGACY_META_FILE = "finding.json"
"""The record ``seedzer load --out`` wrote before findings had a ``meta.json``."""
FAILING_MODEL, SEED_MODEL = "model.onnx", "seed.onnx"
"""An ONNX finding's models: the model that fails (a load finding's, a graph finding's mutant) and a
graph finding's seed (the pool model its case mutated); what ``meta.json``'s ``failing_model`` names."""
