"""The load kind behind the :class:`~seedzer.finding.kind.FindingKind` seam (registered as ``load``;
campaign folders of older versions call it ``loader``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from seedzer.errors import SeedzerError
from seedzer.finding.kind import (
    Described,
    Filed,
    FileSettings,
    GateCall,
    GateContext,
    Observed,
    TriageOptions,
    TriageResult,
)
from seedzer.finding.layout import REPRO_FILE
from seedzer.finding.load import folder
from seedzer.finding.load.gate import RULES, run_load_gate_on_folder
from seedzer.finding.meta import FindingMeta
from seedzer.finding.reducer import pass_methods
from seedzer.load.loader import LoaderFailure


class LoadKind:
    """An ONNX model that TVM's importer, lowering or build fails on (see :mod:`seedzer.finding.load`)."""

    name = folder.KIND_NAME
    salt = folder.SALT
    kernel = folder.KERNEL
    needs = folder.NEEDS

    def signature(self, observed: Observed) -> str:
        """Symptom, the load step and its normalized message."""
        return folder.load_signature(observed.observation)

    def file(self, observed: Observed, settings: FileSettings) -> Filed:
        """The folder of the pool model (``observed.source``) and its failure (``observed.case``, a
        :class:`~seedzer.load.loader.LoaderFailure`); the gate reads the folder."""
        if not isinstance(observed.case, LoaderFailure) or observed.source is None:
            raise SeedzerError(f"a load finding needs the pool model and its load failure, got a "
                               f"{type(observed.case).__name__}")
        return Filed(folder.LoadFinding.of(observed.source, observed.case, observed.provenance))

    def gate_call(self, where: Path, meta: FindingMeta, context: GateContext) -> GateCall:
        """The gate reads the folder itself (an older folder's case is made there, with TVM)."""
        return GateCall(run_load_gate_on_folder, (str(where), context.timeout, context.models))

    def write_case(self, where: Path, meta: FindingMeta, case: Any) -> None:
        """Nothing: a load verdict carries no case (the folder's stands)."""

    def ensure_repro(self, where: Path, meta: FindingMeta) -> Path:
        """The folder's ``repro.py`` (every loader folder is written with one)."""
        path = Path(where) / REPRO_FILE
        if not path.exists():
            raise SeedzerError(f"{where}: the load finding has no {REPRO_FILE}")
        return path

    def triage(self, where: Path, meta: FindingMeta, options: TriageOptions) -> TriageResult:
        """Reduce the ONNX graph (:mod:`seedzer.finding.load.triage`)."""
        from seedzer.finding.load.triage import triage_load_finding

        return triage_load_finding(where, meta, options)


    def gate_rules(self) -> list[Described]:
        """The load gate's rules (:data:`seedzer.finding.load.gate.RULES`)."""
        return [Described.of(rule.name, type(rule)) for rule in RULES]

    def reduction_passes(self) -> list[Described]:
        """The house's ONNX graph passes (:class:`seedzer.finding.onnx_reduce.OnnxReducer`)."""
        from seedzer.finding.onnx_reduce import OnnxReducer

        return [Described.of(name, method) for name, method in pass_methods(OnnxReducer).items()]


KIND = LoadKind()
"""The registry's entry (:data:`seedzer.finding.registry.KINDS`)."""
