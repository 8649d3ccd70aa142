"""Judging one reduction candidate in an isolated process, with the reproducer's own code.

Each candidate (a case: TVMScript + flat steps) runs :func:`seedzer.triage.standalone.observe` in a
child forked from the zygote (:func:`seedzer.execute.isolated.run_isolated`), because candidates
segfault and hang. The child publishes the stage and pass it is in through a small file, so a
death or a timeout is attributed like the fuzzer attributes it. The verdict is an *observed
outcome* dict (``symptom``, ``stage``, ``pass``, ``message``); :func:`signature_of` turns it into
the finding signature the reduction must preserve.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from dataclasses import dataclass, field
from typing import Any

from seedzer.execute.isolated import run_isolated
from seedzer.oracles.signature import signature
from seedzer.outcome import Outcome, Stage, Symptom

_SLOT = 512


def _child(case_json: str, progress_path: str) -> dict[str, Any]:
    from seedzer.triage import standalone

    fd = os.open(progress_path, os.O_WRONLY)

    def on_step(stage: str, name: str | None) -> None:
        os.pwrite(fd, json.dumps([stage, name]).encode()[:_SLOT].ljust(_SLOT), 0)

    try:
        return standalone.observe(json.loads(case_json), on_step)
    finally:
        os.close(fd)


def _where(path: str) -> tuple[str | None, str | None]:
    try:
        with open(path, "rb") as f:
            raw = f.read(_SLOT).strip()
        stage, name = json.loads(raw) if raw else (None, None)
        return stage, name
    except (OSError, ValueError):
        return None, None


def observe_isolated(case: dict[str, Any], timeout: float) -> dict[str, Any]:
    """Run ``case`` in an isolated child; a death is a ``crash``, a timeout a ``hang`` (both at the
    stage and pass the child last reported), a Python error that escapes is ``error``."""
    fd, path = tempfile.mkstemp(prefix="seedzer-check-")
    os.close(fd)
    try:
        res = run_isolated(_child, json.dumps(case), path, timeout=timeout, stage=Stage.PASS)
        if res.ok:
            return dict(res.value)
        assert res.outcome is not None
        symptom = res.outcome.symptom
        if symptom is Symptom.EXCEPTION or (symptom is Symptom.CRASH and "signal" not in res.outcome.message):
            return {"symptom": "error", "stage": None, "pass": None, "message": res.outcome.message}
        stage, name = _where(path)
        return {"symptom": symptom.value, "stage": stage, "pass": name, "message": res.outcome.message}
    finally:
        os.unlink(path)


LOOSE_PASS = frozenset({Symptom.MISMATCH, Symptom.PERF})
"""Symptoms whose pass is only the last pass that changed the IR: the reduction ignores it."""


def signature_of(observed: dict[str, Any]) -> str | None:
    """The finding signature of an observed outcome (None when it is not a bug). For a mismatch or
    a slowdown the pass is left out: it names the last pass that changed the IR, not a culprit."""
    try:
        symptom = Symptom(observed["symptom"])
    except ValueError:
        return None
    if not symptom.is_bug:
        return None
    stage = Stage(observed["stage"]) if observed.get("stage") in set(Stage) else None
    pass_name = None if symptom in LOOSE_PASS else observed.get("pass")
    return signature(Outcome(symptom, stage, pass_name, observed.get("message") or ""))


@dataclass
class Checker:
    """Tests candidates against a target signature, memoizing by content; counts tests."""

    base: dict[str, Any]
    target: str
    timeout: float
    tests: int = 0
    cache: dict[str, bool] = field(default_factory=dict)

    def case(self, script: str, steps: list[dict[str, Any]]) -> dict[str, Any]:
        """The base case with another script and step list."""
        return dict(self.base, script=script, steps=steps)

    def __call__(self, script: str, steps: list[dict[str, Any]]) -> bool:
        """Whether the candidate still fails with the target signature."""
        key = hashlib.sha256((script + "\x00" + json.dumps(steps, sort_keys=True)).encode()).hexdigest()
        if key not in self.cache:
            self.tests += 1
            observed = observe_isolated(self.case(script, steps), self.timeout)
            self.cache[key] = signature_of(observed) == self.target
        return self.cache[key]
