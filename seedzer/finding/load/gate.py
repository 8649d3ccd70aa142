"""The filing gate of load findings: a candidate is re-run alone before it is filed.

:func:`run_load_gate` runs in a process forked from the zygote (TVM already imported) and runs the
finding's case (``case.json`` with ``model.onnx`` embedded) once more in a child forked from it,
with a generous time limit. Its verdict is the first answer of :data:`RULES`
(:class:`~seedzer.finding.gate.GateRules`), marked with the rule that gave it; the rules, in this
order:

1. **alone.** No observation is the finding's failure (the kernel's own
   :func:`~seedzer.kernel.load.observe.same_load_failure`, as ``repro.py`` judges it): ``not-a-bug``,
   ``not-reproduced`` (``invalid`` when the run alone is an invalid test case). A crash must die by
   a signal other than SIGKILL.
2. **invalid-input.** The failure is an unsupported operator, a violated precondition, an
   invalid model or a reference engine that cannot run the model: ``not-a-bug``, ``invalid``.
3. **culprit.** Otherwise ``bug``, with the failing load step as its culprit; its root signature is
   ``root_key(SALT, observation, [step])`` (the kind's salt, ``loader``), so one importer bug reached
   by several models (the same normalized message at the same step) is one finding. Always answers.

Importing this module imports no TVM (nor the TIR kind, whose gate does): the campaign
hands :func:`run_load_gate` to a forked process by reference.
"""

from __future__ import annotations

import dataclasses
import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from seedzer.errors import SeedzerError
from seedzer.finding.gate import GateRules, Rule
from seedzer.finding.load.check import preload
from seedzer.finding.load.rules import Alone, Culprit, InvalidInput, LoadContext
from seedzer.finding.verdict import Verdict

if TYPE_CHECKING:
    pass

HANG_FACTOR = 3.0
"""The re-run's time limit in units of the attempt's own (a hang must outlive it alone)."""
OLDER_FOLDER_TIMEOUT = 600.0
"""The re-run's limit for a folder of an older Seedzer whose case is made from its model."""


@dataclass(frozen=True)
class LoadGateJob:
    """One loader candidate: its signature, ``case.json`` (with the failure as ``expected``), the
    bytes of ``model.onnx`` and the time limit of its re-run (None: :data:`HANG_FACTOR` times the
    case's own limit)."""

    signature: str
    case: str
    model: bytes
    timeout: float | None = None


RULES: tuple[Rule[LoadContext], ...] = (Alone(), InvalidInput(), Culprit())
"""The load gate's rules in the order they judge (the module docstring lists them)."""


def run_load_gate(job: LoadGateJob) -> Verdict:
    """Judge one loader candidate (see the module docstring); a module-level function so that a
    process forked from the zygote can run it."""
    start = time.monotonic()
    preload()
    from seedzer.kernel.load.observe import LoadCase

    case = LoadCase.from_json(json.loads(job.case)).with_model(job.model)
    expected = case.expected
    if expected is None:
        raise SeedzerError(f"{job.signature}: the case has no expected failure to confirm")
    timeout = job.timeout if job.timeout is not None else HANG_FACTOR * case.timeout
    context = LoadContext(job.signature, dataclasses.replace(case, timeout=timeout), expected, timeout, start)
    return GateRules(RULES).first_answer(context)


def run_load_gate_on_folder(folder: str, timeout: float | None = None, models: str | None = None) -> Verdict:
    """Judge the load finding in ``folder``, whichever Seedzer version wrote it: an older folder's
    case is made from its model here, in the gate's own process (it needs the loader kernel).
    ``timeout`` limits the re-run (None: :data:`HANG_FACTOR` times the case's own limit); ``models`` is
    where an older folder's moved model file is looked for by name."""
    from seedzer.finding.load.folder import LoadFinding, base_case

    found = LoadFinding.load(Path(folder), Path(models) if models is not None else None)
    made_limit = (timeout if timeout is not None else OLDER_FOLDER_TIMEOUT) / HANG_FACTOR
    case = {**base_case(found, made_limit), "expected": found.observation.to_json()}
    return run_load_gate(LoadGateJob(Path(folder).name, json.dumps(case), found.model, timeout))
