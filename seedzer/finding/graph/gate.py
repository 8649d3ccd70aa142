"""The filing gate of graph findings: a candidate is re-run alone and its sequence minimized before it is filed.

:func:`run_graph_gate` runs in a process forked from the zygote (TVM already imported) and runs the
finding's case (``case.json`` with ``model.onnx`` embedded) in children forked from it, each with a
generous time limit (:func:`seedzer.finding.graph.check.observe_forked`: a segfault or a hang of TVM
is an observation). Its verdict is the first answer of :data:`RULES`
(:class:`~seedzer.finding.gate.GateRules`), marked with the rule that gave it; the rules
(:mod:`seedzer.finding.graph.rules`), in this order:

1. **alone.** The case run alone must fail the finding's way (the kernel's own
   :func:`~seedzer.kernel.graph.observe.same_graph_failure`, as ``repro.py`` judges it); else ``not-a-bug``,
   ``not-reproduced`` (``invalid`` when the run alone is an invalid test case).
2. **invalid-input.** An unsupported operator, a violated precondition, a model ONNX refuses:
   ``not-a-bug``, ``invalid``.
3. **contract.** A pass that ran out of its contract (:mod:`seedzer.passes.graph.contracts`):
   ``not-a-bug``, ``contract``, naming the pass.
4. **parent.** The same model with no Relax pass (TVM's default pipeline alone) fails the same way:
   the load kind's finding, ``not-a-bug``, ``invalid``.
5. **culprit.** Otherwise ``bug``: ddmin over the sequence to a minimal one that still fails the same
   way; the culprit is the failing pass for a failure in a pass, else the last pass of the minimal
   sequence; the root signature is ``root_key("graph", observation, [culprit])``, so one TVM bug
   reached by many models and sequences is one root. The verdict carries the minimal case, which
   the kind writes into the folder. Always answers.

Importing this module imports no TVM: the campaign hands :func:`run_graph_gate_on_folder` to a
forked process by reference.
"""

from __future__ import annotations

import dataclasses
import json
import time
from dataclasses import dataclass, field
from pathlib import Path

from seedzer.errors import SeedzerError
from seedzer.finding.gate import GateRules, GateSettings, Rule
from seedzer.finding.graph.check import preload
from seedzer.finding.graph.folder import finding_case, model_of
from seedzer.finding.graph.rules import Alone, Contract, Culprit, GraphContext, InvalidInput, Parent
from seedzer.finding.verdict import Verdict
from seedzer.kernel.graph.case import GraphCase

HANG_FACTOR = 3.0
"""Each run's time limit in units of the case's own (a hang must outlive it alone)."""

RULES: tuple[Rule[GraphContext], ...] = (Alone(), InvalidInput(), Contract(), Parent(), Culprit())
"""The graph gate's rules in the order they judge (the module docstring lists them)."""


@dataclass(frozen=True)
class GraphGateJob:
    """One graph candidate: its signature, its case (JSON text, with the failure as ``expected``),
    the bytes of its model, each run's time limit (None: :data:`HANG_FACTOR` times the case's own)
    and the gate's settings."""

    signature: str
    case: str
    model: bytes
    timeout: float | None = None
    settings: GateSettings = field(default_factory=GateSettings)


def run_graph_gate(job: GraphGateJob) -> Verdict:
    """Judge one graph candidate (see the module docstring); a module-level function so that a
    process forked from the zygote can run it."""
    start = time.monotonic()
    preload()
    case = GraphCase.from_json(json.loads(job.case)).with_model(job.model)
    if case.expected is None:
        raise SeedzerError(f"{job.signature}: the case has no expected failure to confirm")
    timeout = job.timeout if job.timeout is not None else HANG_FACTOR * case.timeout
    context = GraphContext(job.signature, case, case.expected, timeout, job.settings, start)
    return GateRules(RULES).first_answer(context)


def run_graph_gate_on_folder(folder: str, timeout: float | None = None, settings: GateSettings | None = None,
                             case: GraphCase | None = None) -> Verdict:
    """Judge the graph finding in ``folder`` (its ``case.json``, or ``case`` when the campaign hands
    over the case its worker ran; the model is the folder's unless the case carries its own)."""
    where = Path(folder)
    own = finding_case(where)
    if case is None:
        case = own
    elif case.expected is None:
        case = dataclasses.replace(case, expected=own.expected)
    model = model_of(case, where) if case.model is not None else model_of(own, where)
    job = GraphGateJob(where.name, json.dumps(case.to_json()), model, timeout, settings or GateSettings())
    return run_graph_gate(job)
