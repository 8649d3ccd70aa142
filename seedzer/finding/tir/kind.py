"""The TIR kind behind the :class:`~seedzer.finding.kind.FindingKind` seam (registered as ``tir``)."""

from __future__ import annotations

import dataclasses
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
    candidate_meta,
)
from seedzer.finding.meta import FindingMeta
from seedzer.finding.reducer import pass_methods
from seedzer.finding.tir import folder
from seedzer.finding.tir.gate import RULES, GateJob, run_gate
from seedzer.kernel.messages import ir_names
from seedzer.kernel.tir.case import Case
from seedzer.oracles.signature import raw_key
from seedzer.seed import passes_from_json


def _ran(observed: Observed) -> Case:
    """The TIR case a worker ran (anything else is a campaign bug, named in one line)."""
    if not isinstance(observed.case, Case):
        raise SeedzerError(f"test case {observed.provenance.testcase}: a TIR finding needs the TIR case its worker "
                           f"ran, got a {type(observed.case).__name__}")
    return observed.case


def _changed(observed: Observed) -> list[str]:
    """The fuzzed passes that changed the IR (those a mismatch or a slowdown is keyed by)."""
    unchanged = set(observed.unchanged)
    return [p.name for i, p in enumerate(passes_from_json(observed.passes)) if i not in unchanged]


class TirKind:
    """A TIR PrimFunc with its flat pass steps (see :mod:`seedzer.finding.tir`)."""

    name = folder.KIND_NAME
    salt = folder.SALT
    kernel = folder.KERNEL
    needs = folder.NEEDS

    def signature(self, observed: Observed) -> str:
        """Symptom, where it surfaced, its message normalized without the IR's own names (and for a
        mismatch or a slowdown, the fuzzed passes that changed the IR)."""
        names = ir_names(_ran(observed).script)
        return raw_key(self.salt, observed.observation, names, _changed(observed)).digest()

    def file(self, observed: Observed, settings: FileSettings) -> Filed:
        """The folder of the case the worker ran (never planned again), expecting the observation; the
        gate judges that same case. Its predicted root lets a known verdict count it without a gate run."""
        ran, obs = _ran(observed), observed.observation
        names, changed = ir_names(ran.script), _changed(observed)
        meta = candidate_meta(self.signature(observed), self.name, self.salt, observed, settings.finding, names,
                              changed)
        case = folder.filed_case(ran, obs, settings.finding, settings.perf_factor, settings.perf_repeats)
        return Filed(folder.TirFinding(meta, case, observed.passes, observed.log or obs.message), case)

    def gate_call(self, where: Path, meta: FindingMeta, context: GateContext) -> GateCall:
        """The gate's job: the case the worker ran (or the folder's, with an older program's), its ancestors."""
        if context.case is not None:
            case, legacy = context.case, None
        else:
            found = folder.TirFinding.load(where)
            case, legacy = found.case, found.legacy
        return GateCall(run_gate, (GateJob(meta.signature, case, context.ancestors, context.settings, legacy),))

    def write_case(self, where: Path, meta: FindingMeta, case: Any) -> None:
        """Rewrite ``case.json`` and ``repro.py`` from the judged case, expecting the confirmed failure."""
        folder.write_case(where, dataclasses.replace(case, expected=meta.observation), meta)

    def ensure_repro(self, where: Path, meta: FindingMeta) -> Path:
        """The folder's ``repro.py``, written from its case when missing."""
        return folder.ensure_repro(where, meta)

    def triage(self, where: Path, meta: FindingMeta, options: TriageOptions) -> TriageResult:
        """Reduce passes and IR (:mod:`seedzer.finding.tir.triage`)."""
        from seedzer.finding.tir.triage import triage_tir

        return triage_tir(where, meta, options)


    def gate_rules(self) -> list[Described]:
        """The TIR gate's rules (:data:`seedzer.finding.tir.gate.RULES`)."""
        return [Described.of(rule.name, type(rule)) for rule in RULES]

    def reduction_passes(self) -> list[Described]:
        """The TIR reducer's passes (:class:`seedzer.finding.tir.reduce.TirPasses`)."""
        from seedzer.finding.tir.reduce import TirPasses

        return [Described.of(name, method) for name, method in pass_methods(TirPasses).items()]


KIND = TirKind()
"""The registry's entry (:data:`seedzer.finding.registry.KINDS`)."""
