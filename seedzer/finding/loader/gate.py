"""The filing gate of loader findings: a candidate is re-run alone before it is filed.

:func:`run_loader_gate` runs in a process forked from the zygote (TVM already imported) and runs the
finding's case (``case.json`` with ``model.onnx`` embedded) once more in a child forked from it,
with a generous time limit. Its verdict is the first answer of :data:`RULES`
(:class:`~seedzer.finding.gate.GateRules`), marked with the rule that gave it; the rules, in this
order:

1. **alone.** No observation is the finding's failure (the kernel's own
   :func:`~seedzer.kernel.load.observe.same_loader_failure`, as ``repro.py`` judges it): ``not-a-bug``,
   ``not-reproduced`` (``invalid`` when the run alone is an invalid test case). A crash must die by
   a signal other than SIGKILL.
2. **invalid-input.** The failure is an unsupported operator, a violated precondition, an
   invalid model or a reference engine that cannot run the model: ``not-a-bug``, ``invalid``.
3. **culprit.** Otherwise ``bug``, with the failing loader step as its culprit; its root signature is
   ``root_key("loader", observation, [step])``, so one importer bug reached by several models (the
   same normalized message at the same step) is one finding. Always answers.

Importing this module imports no TVM (nor the low-level kind, whose gate does): the campaign
hands :func:`run_loader_gate` to a forked process by reference.
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from seedzer.errors import SeedzerError
from seedzer.finding.gate import GateRules, Rule
from seedzer.finding.loader.check import matching, observe_forked, preload
from seedzer.finding.meta import BUG, NOT_A_BUG
from seedzer.finding.verdict import INVALID, NOT_REPRODUCED, Verdict
from seedzer.kernel.common import Observation, Symptom
from seedzer.oracles.preconditions import is_precondition_error
from seedzer.oracles.signature import root_key

if TYPE_CHECKING:
    from seedzer.kernel.load.observe import LoaderCase

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


@dataclass
class LoaderContext:
    """One loader candidate's judgement so far, shared by the rules (see the module docstring).

    ``case`` is the case to re-run (its own limit is the re-run's ``timeout``), ``expected`` the
    failure to confirm; ``observed`` is every failure the re-run showed and ``got`` the one that is
    the finding's (None until the ``alone`` rule ran). ``observe`` runs a case in a forked child and
    ``match`` picks the finding's failure (injectable, so a rule can be judged without TVM).
    """

    signature: str
    case: LoaderCase
    expected: Observation
    timeout: float
    start: float = field(default_factory=time.monotonic)
    observe: Callable[[LoaderCase, float], list[Observation]] = observe_forked
    match: Callable[[Observation, Sequence[Observation]], Observation | None] = matching
    observed: list[Observation] = field(default_factory=list)
    got: Observation | None = None

    @property
    def seen(self) -> Observation:
        """The finding's failure as the re-run showed it (a rule that needs it runs after ``alone``)."""
        assert self.got is not None, "the case has not been run alone yet"
        return self.got

    def verdict(self, kind: str, reason: str, observation: Observation, culprit: list[str] | None = None,
                root: str | None = None) -> Verdict:
        """A verdict on the candidate (one test; the folder's case stands, so no case is sent back)."""
        return Verdict(self.signature, kind, reason, None, observation, culprit or [], root, 1,
                       time.monotonic() - self.start)


class Alone:
    """The case runs once more alone: one of its failures must be the finding's."""

    name = "alone"

    def judge(self, context: LoaderContext) -> Verdict | None:
        observed = context.observed = context.observe(context.case, context.timeout)
        context.got = context.match(context.expected, observed)
        if context.got is not None:
            return None
        first = next(iter(observed), Observation.ok())
        if first.symptom is Symptom.INVALID:
            return context.verdict(NOT_A_BUG, f"{INVALID}: {first.message[:300]}", first)
        seen = "; ".join(o.headline()[:200] for o in observed[:3]) or "every step passes"
        return context.verdict(NOT_A_BUG, f"{NOT_REPRODUCED}: run alone it gives {seen}", first)


class InvalidInput:
    """A failure about the input rather than TVM (:func:`invalid_reason`) is an invalid test case."""

    name = "invalid-input"

    def judge(self, context: LoaderContext) -> Verdict | None:
        why = invalid_reason(context.seen)
        if why is None:
            return None
        return context.verdict(NOT_A_BUG, f"{INVALID}: {why[:300]}", context.seen)


class Culprit:
    """A bug, with the loader step it happened at as its culprit. Always answers."""

    name = "culprit"

    def judge(self, context: LoaderContext) -> Verdict:
        got = context.seen
        culprit = [got.pass_name or "import"]
        return context.verdict(BUG, "bug", got, culprit, root_key("loader", got, culprit).digest())


RULES: tuple[Rule[LoaderContext], ...] = (Alone(), InvalidInput(), Culprit())
"""The loader gate's rules in the order they judge (the module docstring lists them)."""


def run_loader_gate(job: LoaderGateJob) -> Verdict:
    """Judge one loader candidate (see the module docstring); a module-level function so that a
    process forked from the zygote can run it."""
    start = time.monotonic()
    preload()
    from seedzer.kernel.load.observe import LoaderCase

    case = LoaderCase.from_json(json.loads(job.case)).with_model(job.model)
    expected = case.expected
    if expected is None:
        raise SeedzerError(f"{job.signature}: the case has no expected failure to confirm")
    timeout = job.timeout if job.timeout is not None else HANG_FACTOR * case.timeout
    context = LoaderContext(job.signature, dataclasses.replace(case, timeout=timeout), expected, timeout, start)
    return GateRules(RULES).first_answer(context)


def run_loader_gate_on_folder(folder: str, timeout: float | None = None, models: str | None = None) -> Verdict:
    """Judge the loader finding in ``folder``, whichever Seedzer version wrote it: an older folder's
    case is made from its model here, in the gate's own process (it needs the loader kernel).
    ``timeout`` limits the re-run (None: :data:`HANG_FACTOR` times the case's own limit); ``models`` is
    where an older folder's moved model file is looked for by name."""
    from seedzer.finding.loader.folder import base_case, read_finding

    found = read_finding(Path(folder), Path(models) if models is not None else None)
    made_limit = (timeout if timeout is not None else OLDER_FOLDER_TIMEOUT) / HANG_FACTOR
    case = {**base_case(found, made_limit), "expected": found.observation.to_json()}
    return run_loader_gate(LoaderGateJob(Path(folder).name, json.dumps(case), found.model, timeout))
