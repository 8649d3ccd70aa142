"""The TIR kind behind the :class:`~seedzer.finding.kind.FindingKind` seam (registered as ``tir``)."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from seedzer.errors import SeedzerError
from seedzer.finding import kind as seam
from seedzer.finding.meta import FindingMeta
from seedzer.finding.tir import folder
from seedzer.finding.tir.check import observe_folder
from seedzer.finding.tir.gate import GateJob, run_gate
from seedzer.kernel.messages import ir_names
from seedzer.kernel.tir.case import Case
from seedzer.oracles.signature import raw_key
from seedzer.seed import passes_from_json


def _ran(observed: seam.Observed) -> Case:
    """The TIR case a worker ran (anything else is a campaign bug, named in one line)."""
    if not isinstance(observed.case, Case):
        raise SeedzerError(f"test case {observed.provenance.testcase}: a TIR finding needs the TIR case its worker "
                           f"ran, got a {type(observed.case).__name__}")
    return observed.case


def _changed(observed: seam.Observed) -> list[str]:
    """The fuzzed passes that changed the IR (those a mismatch or a slowdown is keyed by)."""
    unchanged = set(observed.unchanged)
    return [p.name for i, p in enumerate(passes_from_json(observed.passes)) if i not in unchanged]


class TirKind(seam.DocumentedKind):
    """A TIR PrimFunc with its flat pass steps (see :mod:`seedzer.finding.tir`)."""

    name = folder.KIND_NAME
    salt = folder.SALT
    kernel = folder.KERNEL
    needs = folder.NEEDS
    rules_at = "seedzer.finding.tir.gate:RULES"
    passes_at = ("seedzer.finding.tir.reduce:TirPasses",)
    fault_rules_at = "seedzer.finding.tir.at_fault:FAULT_RULES"

    def signature(self, observed: seam.Observed) -> str:
        """Symptom, where it surfaced, its message normalized without the IR's own names (and for a
        mismatch or a slowdown, the fuzzed passes that changed the IR)."""
        names = ir_names(_ran(observed).script)
        return raw_key(self.salt, observed.observation, names, _changed(observed)).digest()

    def file(self, observed: seam.Observed, settings: seam.FileSettings) -> seam.Filed:
        """The folder of the case the worker ran (never planned again), expecting the observation; the
        gate judges that same case. Its predicted root lets a known verdict count it without a gate run."""
        ran, obs = _ran(observed), observed.observation
        names, changed = ir_names(ran.script), _changed(observed)
        meta = seam.candidate_meta(self.signature(observed), self.name, self.salt, observed, settings.finding, names,
                              changed)
        case = folder.filed_case(ran, obs, settings.finding, settings.perf_factor, settings.perf_repeats)
        return seam.Filed(folder.TirFinding(meta, case, observed.passes, observed.log or obs.message), case)

    def gate_call(self, where: Path, meta: FindingMeta, context: seam.GateContext) -> seam.GateCall:
        """The gate's job: the case the worker ran (or the folder's, with an older program's), its ancestors."""
        if context.case is not None:
            case, legacy = context.case, None
        else:
            found = folder.TirFinding.load(where)
            case, legacy = found.case, found.legacy
        return seam.GateCall(run_gate, (GateJob(meta.signature, case, context.ancestors, context.settings, legacy),))

    def rerun_call(self, where: Path, meta: FindingMeta, timeout: float, max_memory: int) -> seam.GateCall:
        """The folder's case, run once alone (:func:`seedzer.finding.tir.check.observe_folder`)."""
        return seam.GateCall(observe_folder, (str(where), timeout, max_memory))

    def write_case(self, where: Path, meta: FindingMeta, case: Any) -> None:
        """Rewrite ``case.json`` and ``repro.py`` from the judged case, expecting the confirmed failure."""
        folder.write_case(where, dataclasses.replace(case, expected=meta.observation), meta)

    def ensure_repro(self, where: Path, meta: FindingMeta) -> Path:
        """The folder's ``repro.py``, written from its case when missing."""
        return folder.ensure_repro(where, meta)

    def triage(self, where: Path, meta: FindingMeta, options: seam.TriageOptions) -> seam.TriageResult:
        """Reduce passes and IR (:mod:`seedzer.finding.tir.triage`)."""
        from seedzer.finding.tir.triage import triage_tir

        return triage_tir(where, meta, options)


KIND = TirKind()
"""The registry's entry (:data:`seedzer.finding.registry.KINDS`)."""
