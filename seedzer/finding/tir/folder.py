"""The folder of a TIR finding: every file name it has, written when it is filed and read back
(:class:`TirFinding`).

A TIR finding folder holds ``ir.py`` (the TVMScript the fuzzer ran), ``passes.json`` (its fuzzed
pass sequence), ``case.json`` (the kernel case: flat steps, inputs' seed, tolerances, checks, the
expected observation), ``log.txt`` and ``repro.py`` (its kernel case followed by the kernel's code,
:func:`seedzer.finding.repro.render`; rendering only reads text, so the campaign process writes it
when it files a finding), beside the house's ``meta.json``. Folders written before pass contracts
existed hold a ``case.json`` of the older format, whose flat steps ran the fuzzed passes (with their
repairs) before the whole pipeline: :func:`legacy_case` rebuilds that program exactly, so ``recheck``
can tell a failure that needs passes outside their contracts from one that does not. TVM-free.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from seedzer.config import stage_limits
from seedzer.errors import SeedzerError
from seedzer.finding.layout import REPRO_FILE
from seedzer.finding.meta import FindingMeta, FindingSettings, inside, read_inside
from seedzer.finding.repro import render
from seedzer.kernel.common import Observation, Symptom
from seedzer.kernel.tir.case import FUZZED, Case, Checks, Step
from seedzer.passes.tir.contracts import pipeline_steps, plan
from seedzer.seed import input_seed, passes_from_json
from seedzer.store.atomic import write_atomic

KERNEL, NEEDS = "tir.case+tir.lowering+tir.observe", "numpy"
"""The kernel modules a TIR ``repro.py`` carries, and what it needs from PyPI beside apache-tvm."""
KIND_NAME = "tir"
"""The ``kind`` of a TIR finding's ``meta.json`` (its level's name)."""
SALT = "lowlevel"
"""What TIR signatures hash as their kind (the kind's name when its first findings were filed)."""
IR_FILE, PASSES_FILE, CASE_FILE, LOG_FILE = "ir.py", "passes.json", "case.json", "log.txt"
"""The TIR kind's own files (the house's are in :mod:`seedzer.finding.layout`)."""
TRIAGE_LOG = "triage.log"
"""TVM's output while a finding is reduced (inside the house's ``reduced/``)."""
WITNESS_FILE = "witness.py"
"""For a bug filed through its witness (the gate's ``witness`` rule): the witness's TVMScript, the IR
just before the failing pass that fails the same way as a user program (``case.json`` runs it)."""
WITNESS_RULE = "witness"
"""The gate rule a bug filed through its witness is decided by."""


def stage_timeout(observation: Observation, settings: FindingSettings) -> float:
    """The time limit a reproducer of ``observation`` allows: its stage's limit (a hang must outlive it)."""
    timeouts = {**stage_limits(), **settings.timeouts}
    stage = observation.stage.value if observation.stage else "build"
    return float(timeouts.get(stage, 60.0)) if observation.symptom is Symptom.HANG else 2.0 * sum(timeouts.values())


def filed_case(ran: Case, observation: Observation, settings: FindingSettings, perf_factor: float = 2.0,
               perf_repeats: int = 3) -> Case:
    """The case a finding is filed with: the kernel case the worker ran (its script, steps and inputs),
    expecting ``observation``, with the finding's tolerances and time limit and only the check that
    shows it (the timing, for a ``perf`` finding); the verifier judges as it did in the worker
    (``intended_pragmas``) and a failure of the minimal lowering is judged as it was (``judge_minimal``)."""
    checks = Checks(perf=observation.symptom is Symptom.PERF, intended_pragmas=ran.checks.intended_pragmas,
                    judge_minimal=ran.checks.judge_minimal)
    return dataclasses.replace(ran, rtol=settings.rtol, atol=settings.atol, checks=checks, perf_factor=perf_factor,
                               perf_repeats=perf_repeats, timeout=stage_timeout(observation, settings),
                               expected=observation)


def new_case(script: str, passes_json: str, observation: Observation, settings: FindingSettings,
             perf_factor: float = 2.0, perf_repeats: int = 3) -> Case:
    """The case of a fuzzer test case planned anew from its script and pass sequence, expecting
    ``observation`` (for folders filed without a current ``case.json``; the campaign files the case
    its worker ran, :func:`filed_case`)."""
    ran = Case(script, tuple(plan(passes_from_json(passes_json))), input_seed(script))
    return filed_case(ran, observation, settings, perf_factor, perf_repeats)


@dataclass
class FindingCase:
    """A finding's case in the current model, and (for older findings) the program it was filed from."""

    case: Case
    legacy: Case | None = None


def legacy_case(data: dict[str, Any], script: str, meta: FindingMeta, settings: FindingSettings) -> Case:
    """The program an older Seedzer ran: its expanded steps (fuzzed passes with their repairs), then
    TVM's whole pipeline."""
    old = [Step(str(s["pass"]), dict(s.get("args") or {}), dict(s.get("config") or {}), FUZZED, True)
           for s in data.get("steps") or [] if s.get("pass") != "tirx.BindTarget"]
    obs = meta.observation
    perf = obs.symptom is Symptom.PERF
    return Case(script, tuple(old + pipeline_steps()), int(data.get("input_seed", input_seed(script))),
                rtol=settings.rtol, atol=settings.atol, checks=Checks(perf=perf), timeout=stage_timeout(obs, settings),
                expected=obs)


def finding_case(folder: Path, meta: FindingMeta) -> FindingCase:
    """The case of a TIR finding folder (see the module docstring)."""
    folder = Path(folder)
    script = read_inside(folder, IR_FILE)
    passes = read_inside(folder, PASSES_FILE) if inside(folder, PASSES_FILE).exists() else "[]"
    case_path = inside(folder, CASE_FILE)
    data: dict[str, Any] = {}
    if case_path.exists():
        try:
            data = json.loads(case_path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            raise SeedzerError(f"{case_path}: unreadable case ({exc})") from exc
    if "checks" in data:
        try:
            case = Case.from_json(data)
        except (KeyError, TypeError, ValueError) as exc:
            raise SeedzerError(f"{case_path}: not a Seedzer case ({exc})") from exc
        return FindingCase(case)
    try:
        current = new_case(script, passes, meta.observation, meta.settings)
    except (KeyError, ValueError) as exc:
        raise SeedzerError(f"{folder / PASSES_FILE}: unusable pass sequence ({exc})") from exc
    legacy = legacy_case(data, script, meta, meta.settings) if data.get("steps") else None
    return FindingCase(current, legacy)


def fuzzed_line(case: Case, meta: FindingMeta) -> str:
    """The reproducer's line on the case's fuzzed passes: before the gate, those it runs; after it, only
    those the bug needs (the culprit and the passes that only reach it), with how many more it runs."""
    fuzzed = [s for s in case.steps if s.role == FUZZED]
    if not fuzzed:
        return "Fuzzed passes: none (TVM's default pipeline alone)"
    if not meta.culprit:
        return ("Fuzzed passes inserted into TVM's default pipeline (not bisected yet): "
                + ", ".join(s.label() for s in fuzzed))
    needed = set(meta.culprit) | set(meta.at_fault.reached if meta.at_fault is not None else ())
    minimal = [s.label() for s in fuzzed if s.name in needed]
    rest = len(fuzzed) - len(minimal)
    more = f" (the case runs {rest} more it does not need)" if rest else ""
    return f"Fuzzed passes the bug needs (the gate's bisection): {', '.join(minimal) or 'none'}{more}"


def render_tir_repro(case: Case, meta: FindingMeta) -> str:
    """The standalone reproducer of a TIR finding's case."""
    obs = case.expected or meta.observation
    about = (f"Expected: {obs.headline()[:300]}\n{fuzzed_line(case, meta)}\n"
             + (f"Culprit (bisection): {' + '.join(meta.culprit)}\n" if meta.culprit else "")
             + "Programs: opt = every step; reference = the pipeline alone (what tvm.compile builds); minimal = the "
             "pipeline without its optional passes.")
    return render(KERNEL, NEEDS, case.to_json(), title=obs.headline()[:160], about=about, finding=meta.signature,
                  big={"script": "SCRIPT"})


def tir_files(case: Case, meta: FindingMeta, passes_json: str, log: str) -> dict[str, str | bytes]:
    """The files of a TIR finding folder (written when it is filed, before the gate runs)."""
    return {IR_FILE: case.script, PASSES_FILE: json.dumps(json.loads(passes_json or "[]"), indent=1),
            CASE_FILE: json.dumps(case.to_json(), indent=1), LOG_FILE: log,
            REPRO_FILE: render_tir_repro(case, meta)}


@dataclass
class TirFinding:
    """A TIR finding folder's contents: ``meta.json``, the case (its script is ``ir.py``), the fuzzed pass
    sequence (``passes.json``), the log, and for a folder an older Seedzer filed, the program it ran."""

    meta: FindingMeta
    case: Case
    passes: str = "[]"
    log: str = ""
    legacy: Case | None = field(default=None, compare=False)

    def files(self) -> dict[str, str | bytes]:
        """The folder's files besides ``meta.json``."""
        return tir_files(self.case, self.meta, self.passes, self.log)

    @staticmethod
    def load(folder: Path) -> TirFinding:
        """Read a TIR finding folder (any version); a one-line :class:`SeedzerError` names what is wrong."""
        folder = Path(folder)
        meta = FindingMeta.load(folder)
        found = finding_case(folder, meta)
        passes = read_inside(folder, PASSES_FILE) if inside(folder, PASSES_FILE).exists() else "[]"
        log = read_inside(folder, LOG_FILE) if inside(folder, LOG_FILE).exists() else ""
        return TirFinding(meta, found.case, passes, log, found.legacy)


def write_case(folder: Path, case: Case, meta: FindingMeta) -> Path:
    """Write a TIR finding's ``case.json`` and ``repro.py`` (e.g. the case the gate settled on)."""
    write_atomic(folder / CASE_FILE, json.dumps(case.to_json(), indent=1))
    write_atomic(folder / REPRO_FILE, render_tir_repro(case, meta))
    if meta.extra.get("gate_rule") == WITNESS_RULE:
        write_atomic(folder / WITNESS_FILE, case.script)
    return folder / REPRO_FILE


def ensure_repro(folder: Path, meta: FindingMeta) -> Path:
    """The finding's ``repro.py``, written from its case first when the folder has none."""
    path = Path(folder) / REPRO_FILE
    if path.exists():
        return path
    return write_case(Path(folder), finding_case(folder, meta).case, meta)
