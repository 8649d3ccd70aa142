"""The low-level kind behind the :class:`~seedzer.finding.kind.FindingKind` seam (registered as ``lowlevel``)."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from seedzer.finding.kind import GateCall, GateContext, TriageOptions, TriageResult
from seedzer.finding.lowlevel import folder
from seedzer.finding.lowlevel.gate import GateJob, run_gate
from seedzer.finding.meta import FindingMeta


class LowlevelKind:
    """A TIR PrimFunc with its flat pass steps (see :mod:`seedzer.finding.lowlevel`)."""

    name = "lowlevel"
    kernel = folder.KERNEL
    needs = folder.NEEDS

    def gate_call(self, where: Path, meta: FindingMeta, context: GateContext) -> GateCall:
        """The gate's job: the case the worker ran (or the folder's, with an older program's), its ancestors."""
        if context.case is not None:
            case, legacy = context.case, None
        else:
            found = folder.finding_case(where, meta)
            case, legacy = found.case, found.legacy
        return GateCall(run_gate, (GateJob(meta.signature, case, context.ancestors, context.settings, legacy),))

    def write_case(self, where: Path, meta: FindingMeta, case: Any) -> None:
        """Rewrite ``case.json`` and ``repro.py`` from the judged case, expecting the confirmed failure."""
        folder.write_case(where, dataclasses.replace(case, expected=meta.observation), meta)

    def ensure_repro(self, where: Path, meta: FindingMeta) -> Path:
        """The folder's ``repro.py``, written from its case when missing."""
        return folder.ensure_repro(where, meta)

    def triage(self, where: Path, meta: FindingMeta, options: TriageOptions) -> TriageResult:
        """Reduce passes and IR (:mod:`seedzer.finding.lowlevel.reduce`)."""
        from seedzer.finding.lowlevel.reduce import triage_lowlevel

        return triage_lowlevel(where, meta, options)


KIND = LowlevelKind()
"""The registry's entry (:data:`seedzer.finding.registry.KINDS`)."""
