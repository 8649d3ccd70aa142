"""The loader kind behind the :class:`~seedzer.finding.kind.FindingKind` seam (registered as ``loader``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from seedzer.errors import SeedzerError
from seedzer.finding.kind import GateCall, GateContext, TriageOptions, TriageResult
from seedzer.finding.layout import REPRO_FILE
from seedzer.finding.loader import folder
from seedzer.finding.loader.gate import run_loader_gate_on_folder
from seedzer.finding.meta import FindingMeta


class LoaderKind:
    """An ONNX model that TVM's importer, lowering or build fails on (see :mod:`seedzer.finding.loader`)."""

    name = "loader"
    kernel = folder.KERNEL
    needs = folder.NEEDS

    def gate_call(self, where: Path, meta: FindingMeta, context: GateContext) -> GateCall:
        """The gate reads the folder itself (an older folder's case is made there, with TVM)."""
        return GateCall(run_loader_gate_on_folder, (str(where), context.timeout, context.models))

    def write_case(self, where: Path, meta: FindingMeta, case: Any) -> None:
        """Nothing: a loader verdict carries no case (the folder's stands)."""

    def ensure_repro(self, where: Path, meta: FindingMeta) -> Path:
        """The folder's ``repro.py`` (every loader folder is written with one)."""
        path = Path(where) / REPRO_FILE
        if not path.exists():
            raise SeedzerError(f"{where}: the loader finding has no {REPRO_FILE}")
        return path

    def triage(self, where: Path, meta: FindingMeta, options: TriageOptions) -> TriageResult:
        """Reduce the ONNX graph (:mod:`seedzer.finding.loader.triage`)."""
        from seedzer.finding.loader.triage import triage_loader_finding

        return triage_loader_finding(where, meta, options)


KIND = LoaderKind()
"""The registry's entry (:data:`seedzer.finding.registry.KINDS`)."""
