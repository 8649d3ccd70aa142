"""The schedule kind behind the :class:`~seedzer.finding.kind.FindingKind` seam (registered as ``sched``)."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from seedzer.errors import SeedzerError
from seedzer.finding import kind as seam
from seedzer.finding.meta import FindingMeta
from seedzer.finding.sched import folder
from seedzer.finding.sched.check import observe_folder
from seedzer.finding.sched.gate import SchedGateJob, run_gate
from seedzer.kernel.messages import ir_names
from seedzer.kernel.sched.case import SchedCase
from seedzer.oracles.signature import raw_key


def _ran(observed: seam.Observed) -> SchedCase:
    """The sched case a worker ran (anything else is a campaign bug, named in one line)."""
    if not isinstance(observed.case, SchedCase):
        raise SeedzerError(f"test case {observed.provenance.testcase}: a sched finding needs the sched case its "
                           f"worker ran, got a {type(observed.case).__name__}")
    return observed.case


class SchedKind(seam.DocumentedKind):
    """A PrimFunc scheduled by a trace (see :mod:`seedzer.finding.sched`)."""

    name = folder.KIND_NAME
    salt = folder.SALT
    kernel = folder.KERNEL
    needs = folder.NEEDS
    rules_at = "seedzer.finding.sched.gate:RULES"
    passes_at = ("seedzer.finding.sched.reduce:SchedPasses",)
    fault_rules_at = "seedzer.finding.sched.at_fault:FAULT_RULES"

    def signature(self, observed: seam.Observed) -> str:
        """Symptom, where it surfaced (a primitive, a postprocessor, the build), its message normalized
        without the IR's own names (and for a wrong result, the trace's primitives)."""
        ran = _ran(observed)
        return raw_key(self.salt, observed.observation, ir_names(ran.script), folder.primitives_of(ran)).digest()

    def file(self, observed: seam.Observed, settings: seam.FileSettings) -> seam.Filed:
        """The folder of the case the worker ran, expecting the observation; the gate judges that case."""
        ran, obs = _ran(observed), observed.observation
        meta = seam.candidate_meta(self.signature(observed), self.name, self.salt, observed, settings.finding,
                                   ir_names(ran.script), folder.primitives_of(ran))
        case = folder.filed_case(ran, obs, settings.finding)
        return seam.Filed(folder.SchedFinding(meta, case, observed.log or obs.message), case)

    def gate_call(self, where: Path, meta: FindingMeta, context: seam.GateContext) -> seam.GateCall:
        """The gate's job: the case the worker ran, or the folder's."""
        case = context.case if context.case is not None else folder.SchedFinding.load(where).case
        if case.expected is None:
            case = dataclasses.replace(case, expected=meta.observation)
        return seam.GateCall(run_gate, (SchedGateJob(meta.signature, case, context.settings),))

    def rerun_call(self, where: Path, meta: FindingMeta, timeout: float, max_memory: int) -> seam.GateCall:
        """The folder's case, run once alone (:func:`seedzer.finding.sched.check.observe_folder`)."""
        return seam.GateCall(observe_folder, (str(where), timeout, max_memory))

    def write_case(self, where: Path, meta: FindingMeta, case: Any) -> None:
        """Rewrite ``case.json``, ``plan.json`` and ``repro.py`` from the judged case, expecting the confirmed
        failure."""
        folder.write_case(where, dataclasses.replace(case, expected=meta.observation), meta)

    def ensure_repro(self, where: Path, meta: FindingMeta) -> Path:
        """The folder's ``repro.py``, written from its case when missing."""
        return folder.ensure_repro(where, meta)

    def triage(self, where: Path, meta: FindingMeta, options: seam.TriageOptions) -> seam.TriageResult:
        """Reduce the trace and the PrimFunc (:mod:`seedzer.finding.sched.triage`)."""
        from seedzer.finding.sched.triage import triage_sched

        return triage_sched(where, meta, options)


KIND = SchedKind()
"""The registry's entry (:data:`seedzer.finding.registry.KINDS`)."""
