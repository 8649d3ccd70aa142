"""The graph kind behind the :class:`~seedzer.finding.kind.FindingKind` seam (registered as ``graph``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from seedzer.errors import SeedzerError
from seedzer.finding import kind as seam
from seedzer.finding.graph import folder
from seedzer.finding.graph.check import observe_folder, write_model_of_folder
from seedzer.finding.graph.gate import run_graph_gate_on_folder
from seedzer.finding.layout import REPRO_FILE
from seedzer.finding.meta import FindingMeta
from seedzer.kernel.common import Stage, Symptom
from seedzer.kernel.graph.case import GraphCase


class GraphKind(seam.DocumentedKind):
    """An ONNX model and a Relax pass sequence TVM fails on, or builds into a program that disagrees
    with TVM's default pipeline alone (see :mod:`seedzer.finding.graph`)."""

    name = folder.KIND_NAME
    salt = folder.SALT
    kernel = folder.KERNEL
    needs = folder.NEEDS
    rules_at = "seedzer.finding.graph.gate:RULES"
    passes_at = ("seedzer.finding.onnx_reduce:OnnxReducer",)
    fault_rules_at = "seedzer.finding.graph.at_fault:FAULT_RULES"

    def signature(self, observed: seam.Observed) -> str:
        """Symptom, where it surfaced and its normalized message (for a mismatch, the sequence's passes)."""
        return folder.graph_signature(observed.observation, _ran(observed).passes)

    def file(self, observed: seam.Observed, settings: seam.FileSettings) -> seam.Filed:
        """The folder of the case the worker ran, its model copied in and the observation expected; the
        gate reads the folder. A model file that cannot be read is a one-line :class:`SeedzerError`."""
        ran, obs = _ran(observed), observed.observation
        names = [p.name for p in ran.passes]
        try:
            model = Path(str(ran.model_file)).read_bytes()
        except OSError as exc:
            raise SeedzerError(f"graph finding {self.signature(observed)}: cannot read its model "
                               f"({exc.strerror or exc})") from None
        meta = seam.candidate_meta(self.signature(observed), self.name, self.salt, observed, settings.finding, (),
                                   names, predictable=obs.stage is Stage.PASS or obs.symptom is Symptom.MISMATCH)
        case = folder.stored(ran, obs)
        return seam.Filed(folder.GraphFinding(meta, case, model, folder.graph_log(obs, observed.log or obs.message)))

    def gate_call(self, where: Path, meta: FindingMeta, context: seam.GateContext) -> seam.GateCall:
        """The gate reads the folder (or the case the worker ran, when the campaign hands it over)."""
        case = context.case if isinstance(context.case, GraphCase) else None
        return seam.GateCall(run_graph_gate_on_folder, (str(where), context.timeout, context.settings, case))

    def rerun_call(self, where: Path, meta: FindingMeta, timeout: float, max_memory: int) -> seam.GateCall:
        """The folder's case, run once alone (:func:`seedzer.finding.graph.check.observe_folder`)."""
        return seam.GateCall(observe_folder, (str(where), timeout, max_memory))

    def write_case(self, where: Path, meta: FindingMeta, case: Any) -> None:
        """Rewrite ``case.json``, ``passes.json`` and ``repro.py`` from the gate's minimal case, and
        ``model.onnx`` with the model it fails on (a :class:`~seedzer.finding.graph.folder.FailingCase`)."""
        if isinstance(case, folder.FailingCase):
            folder.write_case(Path(where), meta, case.case, case)
        elif isinstance(case, GraphCase):
            folder.write_case(Path(where), meta, case)

    def model_call(self, where: Path, meta: FindingMeta) -> seam.GateCall | None:
        """The call that writes ``model.onnx`` (the mutant the case fails on) into a folder the gate did not
        judge (:func:`~seedzer.finding.graph.check.write_model_of_folder`, in a forked process)."""
        return seam.GateCall(write_model_of_folder, (str(where),))

    def ensure_repro(self, where: Path, meta: FindingMeta) -> Path:
        """The folder's ``repro.py``, written from its ``case.json`` first where it has none."""
        path = Path(where) / REPRO_FILE
        if not path.exists():
            folder.write_case(Path(where), meta, folder.GraphFinding.load(Path(where)).case)
        return path

    def triage(self, where: Path, meta: FindingMeta, options: seam.TriageOptions) -> seam.TriageResult:
        """Minimize the pass sequence, then reduce the ONNX graph (:mod:`seedzer.finding.graph.triage`)."""
        from seedzer.finding.graph.triage import triage_graph_finding

        return triage_graph_finding(Path(where), meta, options)

    def reduction_passes(self) -> list[seam.Described]:
        """ddmin over the model mutations, then over the Relax steps, then the house's ONNX graph passes
        (:class:`seedzer.finding.onnx_reduce.OnnxReducer`)."""
        from seedzer.finding.graph.reduce import SEQUENCE_STAGES, STAGE_DOCS

        return [seam.Described(name, STAGE_DOCS[name]) for name in SEQUENCE_STAGES] + super().reduction_passes()


def _ran(observed: seam.Observed) -> GraphCase:
    """The graph case a worker ran (anything else is a campaign bug, named in one line)."""
    if not isinstance(observed.case, GraphCase):
        raise SeedzerError(f"test case {observed.provenance.testcase}: a graph finding needs the graph case its "
                           f"worker ran, got a {type(observed.case).__name__}")
    return observed.case


KIND = GraphKind()
"""The registry's entry (:data:`seedzer.finding.registry.KINDS`)."""
