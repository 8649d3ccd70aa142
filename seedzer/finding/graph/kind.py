"""The graph kind behind the :class:`~seedzer.finding.kind.FindingKind` seam (registered as ``graph``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from seedzer.finding.graph import folder
from seedzer.finding.graph.gate import run_graph_gate_on_folder
from seedzer.finding.kind import GateCall, GateContext, TriageOptions, TriageResult
from seedzer.finding.layout import REPRO_FILE
from seedzer.finding.meta import FindingMeta
from seedzer.kernel.graph.case import GraphCase


class GraphKind:
    """An ONNX model and a Relax pass sequence TVM fails on, or builds into a program that disagrees
    with TVM's default pipeline alone (see :mod:`seedzer.finding.graph`)."""

    name = folder.KIND_NAME
    kernel = folder.KERNEL
    needs = folder.NEEDS

    def gate_call(self, where: Path, meta: FindingMeta, context: GateContext) -> GateCall:
        """The gate reads the folder (or the case the worker ran, when the campaign hands it over)."""
        case = context.case if isinstance(context.case, GraphCase) else None
        return GateCall(run_graph_gate_on_folder, (str(where), context.timeout, context.settings, case))

    def write_case(self, where: Path, meta: FindingMeta, case: Any) -> None:
        """Rewrite ``case.json``, ``passes.json`` and ``repro.py`` from the gate's minimal case."""
        if isinstance(case, GraphCase):
            folder.write_case(Path(where), meta, case)

    def ensure_repro(self, where: Path, meta: FindingMeta) -> Path:
        """The folder's ``repro.py``, written from its ``case.json`` first where it has none."""
        path = Path(where) / REPRO_FILE
        if not path.exists():
            folder.write_case(Path(where), meta, folder.finding_case(Path(where)))
        return path

    def triage(self, where: Path, meta: FindingMeta, options: TriageOptions) -> TriageResult:
        """Minimize the pass sequence, then reduce the ONNX graph (:mod:`seedzer.finding.graph.triage`)."""
        from seedzer.finding.graph.triage import triage_graph_finding

        return triage_graph_finding(Path(where), meta, options)


KIND = GraphKind()
"""The registry's entry (:data:`seedzer.finding.registry.KINDS`)."""
