"""The kernel case of a low-level finding, read from its folder or built when it is filed.

A finding folder holds ``ir.py`` (the TVMScript the fuzzer ran), ``passes.json`` (its fuzzed pass
sequence) and ``case.json`` (the kernel case: flat steps, inputs' seed, tolerances, checks, the
expected observation). Folders written before pass contracts existed hold a ``case.json`` of the
older format, whose flat steps ran the fuzzed passes (with their repairs) before the whole pipeline:
:func:`legacy_case` rebuilds that program exactly, so ``recheck`` can tell a failure that needs
passes outside their contracts from one that does not. TVM-free.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from seedzer.errors import SeedzerError
from seedzer.kernel.common import FUZZED, Case, Checks, Observation, Step, Symptom
from seedzer.mutate.contracts import pipeline_steps, plan
from seedzer.seed import input_seed, passes_from_json
from seedzer.store.meta import FindingMeta, FindingSettings, inside

DEFAULT_TIMEOUTS = {"mutate": 20.0, "pass": 20.0, "build": 60.0, "run": 20.0, "compare": 20.0}


def stage_timeout(observation: Observation, settings: FindingSettings) -> float:
    """The time limit a reproducer of ``observation`` allows: its stage's limit (a hang must outlive it)."""
    timeouts = {**DEFAULT_TIMEOUTS, **settings.timeouts}
    stage = observation.stage.value if observation.stage else "build"
    return float(timeouts.get(stage, 60.0)) if observation.symptom is Symptom.HANG else 2.0 * sum(timeouts.values())


def new_case(script: str, passes_json: str, observation: Observation, settings: FindingSettings,
             perf_factor: float = 2.0, perf_repeats: int = 3) -> Case:
    """The case of a fuzzer test case, as the worker ran it, expecting ``observation``."""
    checks = Checks(perf=observation.symptom is Symptom.PERF)
    return Case(script, tuple(plan(passes_from_json(passes_json))), input_seed(script), rtol=settings.rtol,
                atol=settings.atol, checks=checks, perf_factor=perf_factor, perf_repeats=perf_repeats,
                timeout=stage_timeout(observation, settings), expected=observation)


def _read(folder: Path, name: str) -> str:
    path = inside(folder, name)
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise SeedzerError(f"{path}: unreadable ({exc})") from exc


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
    """The case of a low-level finding folder (see the module docstring)."""
    folder = Path(folder)
    script = _read(folder, "ir.py")
    passes = _read(folder, "passes.json") if inside(folder, "passes.json").exists() else "[]"
    case_path = inside(folder, "case.json")
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
        raise SeedzerError(f"{folder / 'passes.json'}: unusable pass sequence ({exc})") from exc
    legacy = legacy_case(data, script, meta, meta.settings) if data.get("steps") else None
    return FindingCase(current, legacy)


def ancestors(campaign: Path, parent: str | None, parents_of: dict[str, str | None]) -> list[tuple[str, str]]:
    """``(label, TVMScript)`` of the original seed and the unmutated parent of a finding, least
    mutated first, read from the campaign's corpus (``parents_of`` maps corpus ids to parent ids)."""
    if not parent:
        return []
    chain = [parent]
    while parents_of.get(chain[-1]) and len(chain) < 10_000:
        chain.append(str(parents_of[chain[-1]]))
    root, nearest = chain[-1], chain[0]
    wanted = [("the original seed", root)] + ([("the unmutated parent", nearest)] if nearest != root else [])
    out: list[tuple[str, str]] = []
    for label, seed_id in wanted:
        try:
            out.append((label, inside(Path(campaign) / "corpus", f"{seed_id}.py").read_text(encoding="utf-8")))
        except (OSError, UnicodeDecodeError, SeedzerError):
            continue
    return out
