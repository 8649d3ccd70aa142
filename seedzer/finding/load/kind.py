"""The load kind behind the :class:`~seedzer.finding.kind.FindingKind` seam (registered as ``load``;
campaign folders of older versions call it ``loader``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from seedzer.errors import SeedzerError
from seedzer.finding import kind as seam
from seedzer.finding.layout import REPRO_FILE
from seedzer.finding.load import folder
from seedzer.finding.load.gate import run_load_gate_on_folder
from seedzer.finding.meta import FindingMeta
from seedzer.load.loader import LoaderFailure


class LoadKind(seam.DocumentedKind):
    """An ONNX model that TVM's importer, lowering or build fails on (see :mod:`seedzer.finding.load`)."""

    name = folder.KIND_NAME
    salt = folder.SALT
    kernel = folder.KERNEL
    needs = folder.NEEDS
    rules_at = "seedzer.finding.load.gate:RULES"
    passes_at = ("seedzer.finding.onnx_reduce:OnnxReducer",)
    fault_rules_at = "seedzer.finding.load.at_fault:FAULT_RULES"

    def signature(self, observed: seam.Observed) -> str:
        """Symptom, the load step and its normalized message."""
        return folder.load_signature(observed.observation)

    def file(self, observed: seam.Observed, settings: seam.FileSettings) -> seam.Filed:
        """The folder of the pool model (``observed.source``) and its failure (``observed.case``, a
        :class:`~seedzer.load.loader.LoaderFailure`); the gate reads the folder."""
        if not isinstance(observed.case, LoaderFailure) or observed.source is None:
            raise SeedzerError(f"a load finding needs the pool model and its load failure, got a "
                               f"{type(observed.case).__name__}")
        return seam.Filed(folder.LoadFinding.of(observed.source, observed.case, observed.provenance))

    def gate_call(self, where: Path, meta: FindingMeta, context: seam.GateContext) -> seam.GateCall:
        """The gate reads the folder itself (an older folder's case is made there, with TVM)."""
        return seam.GateCall(run_load_gate_on_folder, (str(where), context.timeout, context.models))

    def rerun_call(self, where: Path, meta: FindingMeta, timeout: float, max_memory: int) -> seam.GateCall:
        """None: a pool model's load is no test case the filters turn away."""
        raise SeedzerError(f"{where}: a load finding holds no test case to re-run")

    def write_case(self, where: Path, meta: FindingMeta, case: Any) -> None:
        """Nothing: a load verdict carries no case (the folder's stands)."""

    def ensure_repro(self, where: Path, meta: FindingMeta) -> Path:
        """The folder's ``repro.py`` (every load folder is written with one)."""
        path = Path(where) / REPRO_FILE
        if not path.exists():
            raise SeedzerError(f"{where}: the load finding has no {REPRO_FILE}")
        return path

    def triage(self, where: Path, meta: FindingMeta, options: seam.TriageOptions) -> seam.TriageResult:
        """Reduce the ONNX graph (:mod:`seedzer.finding.load.triage`)."""
        from seedzer.finding.load.triage import triage_load_finding

        return triage_load_finding(where, meta, options)


KIND = LoadKind()
"""The registry's entry (:data:`seedzer.finding.registry.KINDS`)."""
