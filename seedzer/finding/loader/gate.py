"""The filing gate of loader findings: a candidate is re-run alone before it is filed.

:func:`run_loader_gate` runs in a process forked from the zygote (TVM already imported) and runs the
finding's case (``case.json`` with ``model.onnx`` embedded) once more in a child forked from it,
with a generous time limit. Then, in this order:

1. **Alone.** No observation is the finding's failure (the kernel's own
   :func:`~seedzer.kernel.loader.same_loader_failure`, as ``repro.py`` judges it): ``not-a-bug``,
   ``not-reproduced``. A crash must die by a signal other than SIGKILL.
2. **Invalid input.** The failure is an unsupported operator, a violated precondition, an
   invalid model or a reference engine that cannot run the model: ``not-a-bug``, ``invalid``.
3. Otherwise ``bug``, with the step as its culprit; its root signature is
   ``root_key("loader", observation, [step])``, so one importer bug reached by several models (the
   same normalized message at the same step) is one finding.

Importing this module imports no TVM (nor the low-level kind, whose gate does): the campaign
hands :func:`run_loader_gate` to a forked process by reference.
"""

from __future__ import annotations

import dataclasses
import json
import time
from dataclasses import dataclass
from pathlib import Path

from seedzer.errors import SeedzerError
from seedzer.finding.loader.check import matching, observe_forked, preload
from seedzer.finding.meta import BUG, NOT_A_BUG
from seedzer.finding.verdict import INVALID, NOT_REPRODUCED, Verdict
from seedzer.kernel.common import Observation, Symptom
from seedzer.oracles.preconditions import is_precondition_error
from seedzer.oracles.signature import root_key

HANG_FACTOR = 3.0
"""The re-run's time limit in units of the attempt's own (a hang must outlive it alone)."""
OLDER_FOLDER_TIMEOUT = 600.0
"""The re-run's limit for a folder of an older Seedzer whose case is made from its model."""
INVALID_STEPS = frozenset({"parse", "fold", "reference"})
"""Loader steps whose failures are about the input (an unreadable model, a reference engine), never TVM."""


@dataclass(frozen=True)
class LoaderGateJob:
    """One loader candidate: its signature, ``case.json`` (with the failure as ``expected``), the
    bytes of ``model.onnx`` and the time limit of its re-run (None: :data:`HANG_FACTOR` times the
    case's own limit)."""

    signature: str
    case: str
    model: bytes
    timeout: float | None = None



def invalid_reason(observation: Observation) -> str | None:
    """Why a loader failure is about its input rather than TVM, or None."""
    if observation.symptom is Symptom.INVALID:
        return observation.message
    if "not supported for frontend ONNX" in observation.message or "OpNotImplemented" in observation.message:
        return f"unsupported operator: {observation.message}"
    if observation.pass_name in INVALID_STEPS:
        return f"{observation.pass_name}: {observation.message}"
    if observation.symptom is Symptom.EXCEPTION and is_precondition_error(observation.message):
        return f"precondition: {observation.message}"
    return None


def run_loader_gate(job: LoaderGateJob) -> Verdict:
    """Judge one loader candidate (see the module docstring); a module-level function so that a
    process forked from the zygote can run it."""
    start = time.monotonic()
    preload()
    from seedzer.kernel.loader import LoaderCase

    case = LoaderCase.from_json(json.loads(job.case)).with_model(job.model)
    expected = case.expected
    if expected is None:
        raise SeedzerError(f"{job.signature}: the case has no expected failure to confirm")
    timeout = job.timeout if job.timeout is not None else HANG_FACTOR * case.timeout
    observed = observe_forked(dataclasses.replace(case, timeout=timeout), timeout)
    got = matching(expected, observed)

    def verdict(kind: str, reason: str, obs: Observation, culprit: list[str] | None = None,
                root: str | None = None) -> Verdict:
        return Verdict(job.signature, kind, reason, None, obs, culprit or [], root, 1,
                       time.monotonic() - start)

    if got is None:
        first = next(iter(observed), Observation.ok())
        if first.symptom is Symptom.INVALID:
            return verdict(NOT_A_BUG, f"{INVALID}: {first.message[:300]}", first)
        seen = "; ".join(o.headline()[:200] for o in observed[:3]) or "every step passes"
        return verdict(NOT_A_BUG, f"{NOT_REPRODUCED}: run alone it gives {seen}", first)
    why = invalid_reason(got)
    if why is not None:
        return verdict(NOT_A_BUG, f"{INVALID}: {why[:300]}", got)
    culprit = [got.pass_name or "import"]
    return verdict(BUG, "bug", got, culprit, root_key("loader", got, culprit).digest())


def run_loader_gate_on_folder(folder: str, timeout: float | None = None) -> Verdict:
    """Judge the loader finding in ``folder``, whichever Seedzer version wrote it: an older folder's
    case is made from its model here, in the gate's own process (it needs the loader kernel).
    ``timeout`` limits the re-run (None: :data:`HANG_FACTOR` times the case's own limit)."""
    from seedzer.finding.loader.folder import base_case, read_finding

    found = read_finding(Path(folder))
    made_limit = (timeout if timeout is not None else OLDER_FOLDER_TIMEOUT) / HANG_FACTOR
    case = {**base_case(found, made_limit), "expected": found.observation.to_json()}
    return run_loader_gate(LoaderGateJob(Path(folder).name, json.dumps(case), found.model, timeout))
