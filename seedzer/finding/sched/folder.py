"""The folder of a schedule finding: every file name it has, written when it is filed and read back
(:class:`SchedFinding`).

A sched finding folder holds ``ir.py`` (the PrimFunc's TVMScript, unscheduled, as the loader lowered
it), ``plan.json`` (its schedule plan: TVM's trace JSON, decisions included, and the postprocessors),
``case.json`` (the kernel case: the plan, the inputs' seed, the target, tolerances, checks, the expected
observation), ``log.txt`` and ``repro.py`` (the case followed by the sched kernel's code,
:func:`seedzer.finding.repro.render`), beside the house's ``meta.json``. TVM-free.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from seedzer.config import stage_limits
from seedzer.errors import SeedzerError
from seedzer.finding.layout import REPRO_FILE
from seedzer.finding.meta import FindingMeta, FindingSettings, inside, read_inside
from seedzer.finding.repro import render
from seedzer.kernel.common import Observation, Symptom
from seedzer.kernel.sched import CHAIN
from seedzer.kernel.sched.case import SchedCase
from seedzer.kernel.sched.trace import parse_trace, transforming
from seedzer.store.atomic import write_atomic

KERNEL, NEEDS = CHAIN, "numpy"
"""The kernel modules a sched ``repro.py`` carries, and what it needs from PyPI beside apache-tvm."""
KIND_NAME = "sched"
"""The ``kind`` of a sched finding's ``meta.json`` (its level's name)."""
SALT = "sched"
"""What sched signatures hash as their kind."""
IR_FILE, PLAN_FILE, CASE_FILE, LOG_FILE = "ir.py", "plan.json", "case.json", "log.txt"
"""The sched kind's own files (the house's are in :mod:`seedzer.finding.layout`)."""
TRIAGE_LOG = "triage.log"
"""TVM's output while a finding is reduced (inside the house's ``reduced/``)."""


def stage_timeout(observation: Observation, settings: FindingSettings) -> float:
    """The time limit a reproducer of ``observation`` allows: a hang must outlive its stage's limit; any
    other failure gets twice all the stages' limits together."""
    timeouts = {**stage_limits(), **settings.timeouts}
    stage = observation.stage.value if observation.stage else "build"
    return float(timeouts.get(stage, 60.0)) if observation.symptom is Symptom.HANG else 2.0 * sum(timeouts.values())


def filed_case(ran: SchedCase, observation: Observation, settings: FindingSettings) -> SchedCase:
    """The case a finding is filed with: the case the worker ran, expecting ``observation``, with the
    finding's tolerances and time limit."""
    return dataclasses.replace(ran, rtol=settings.rtol, atol=settings.atol,
                               timeout=stage_timeout(observation, settings), expected=observation)


def primitives_of(case: SchedCase) -> list[str]:
    """The transforming primitives of a case's trace, in order (its instruction kinds)."""
    try:
        return transforming(parse_trace(case.trace))
    except ValueError:
        return []


def render_sched_repro(case: SchedCase, meta: FindingMeta) -> str:
    """The standalone reproducer of a sched finding's case."""
    obs = case.expected or meta.observation
    about = (f"Expected: {obs.headline()[:300]}\n"
             f"Schedule primitives: {', '.join(primitives_of(case)) or 'none'}; postprocessors: "
             f"{', '.join(case.postprocs) or 'none'}\n"
             + (f"Code at fault: {' + '.join(meta.culprit)}\n" if meta.culprit else "")
             + "The PrimFunc is scheduled by the trace one primitive at a time (TIR's verifier after each), "
             "built with tvm.compile and compared with the same function unscheduled.")
    return render(KERNEL, NEEDS, case.to_json(), title=obs.headline()[:160], about=about, finding=meta.signature,
                  big={"script": "SCRIPT"})


def plan_text(case: SchedCase) -> str:
    """``plan.json``: the case's trace (TVM's JSON) and postprocessors."""
    return json.dumps({"trace": case.trace, "postprocs": list(case.postprocs)}, indent=1)


def sched_files(case: SchedCase, meta: FindingMeta, log: str) -> dict[str, str | bytes]:
    """The files of a sched finding folder (written when it is filed, before the gate runs)."""
    return {IR_FILE: case.script, PLAN_FILE: plan_text(case), CASE_FILE: json.dumps(case.to_json(), indent=1),
            LOG_FILE: log, REPRO_FILE: render_sched_repro(case, meta)}


def finding_case(folder: Path) -> SchedCase:
    """The case of a sched finding folder (``case.json``); a one-line error names what is wrong."""
    path = inside(Path(folder), CASE_FILE)
    try:
        data: Any = json.loads(read_inside(Path(folder), CASE_FILE))
        return SchedCase.from_json(data)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise SeedzerError(f"{path}: not a Seedzer schedule case ({type(exc).__name__}: {exc})") from exc


@dataclass
class SchedFinding:
    """A sched finding folder's contents: ``meta.json``, the case (its script is ``ir.py``, its plan
    ``plan.json``) and the log."""

    meta: FindingMeta
    case: SchedCase
    log: str = ""

    def files(self) -> dict[str, str | bytes]:
        """The folder's files besides ``meta.json``."""
        return sched_files(self.case, self.meta, self.log)

    @staticmethod
    def load(folder: Path) -> SchedFinding:
        """Read a sched finding folder; a one-line :class:`SeedzerError` names what is wrong."""
        folder = Path(folder)
        meta = FindingMeta.load(folder)
        log = read_inside(folder, LOG_FILE) if inside(folder, LOG_FILE).exists() else ""
        return SchedFinding(meta, finding_case(folder), log)


def write_case(folder: Path, case: SchedCase, meta: FindingMeta) -> Path:
    """Write a sched finding's ``case.json``, ``plan.json`` and ``repro.py`` (e.g. the case the gate
    settled on)."""
    write_atomic(folder / CASE_FILE, json.dumps(case.to_json(), indent=1))
    write_atomic(folder / PLAN_FILE, plan_text(case))
    write_atomic(folder / REPRO_FILE, render_sched_repro(case, meta))
    return folder / REPRO_FILE


def ensure_repro(folder: Path, meta: FindingMeta) -> Path:
    """The finding's ``repro.py``, written from its case first when the folder has none."""
    path = Path(folder) / REPRO_FILE
    if path.exists():
        return path
    return write_case(Path(folder), finding_case(folder), meta)
