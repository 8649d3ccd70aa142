"""Which triage (reduction + reproducer + report) applies to a finding, by its meta.json ``kind``.

:data:`TRIAGERS` maps a kind (``"lowlevel"``, ``"loader"``) to ``"module:function"``; the module is
imported only when a finding of that kind is triaged (reducers import TVM or onnx). A triager is
called as ``fn(folder, meta, options)`` and returns a :class:`TriageResult`. To add a kind, add an
entry (or call :func:`register`).
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from seedzer.errors import SeedzerError
from seedzer.store.meta import FindingMeta


@dataclass
class TriageOptions:
    """How to triage: time budget per finding, redo finished reductions, interpreter for repros."""

    minutes: float = 5.0
    force: bool = False
    python: str = sys.executable


@dataclass
class TriageResult:
    """What triaging one finding gave. Sizes are in ``unit`` (TVMScript lines, ONNX nodes...);
    ``passes_*`` count passes (None where a kind has none); ``status`` is ``reduced``,
    ``partial`` (budget ran out, resumable), ``not-reproduced``, ``unverified`` (the reduced repro
    failed differently in a clean process) or ``error``."""

    signature: str
    kind: str
    symptom: str
    where: str
    status: str
    size_before: int | None = None
    size_after: int | None = None
    unit: str = "lines"
    passes_before: int | None = None
    passes_after: int | None = None
    seconds: float = 0.0
    tests: int = 0
    note: str = ""

    def to_dict(self) -> dict[str, Any]:
        """JSON-friendly form."""
        return asdict(self)


Triager = Callable[[Path, FindingMeta, TriageOptions], TriageResult]

TRIAGERS: dict[str, str] = {
    "lowlevel": "seedzer.triage.reduce:triage_lowlevel",
    "loader": "seedzer.triage.loader_case:triage_loader_finding",
}
"""Finding kind -> ``"module:function"`` of its triager."""


def register(kind: str, target: str) -> None:
    """Make ``target`` (``"module:function"``) the triager of findings of ``kind``."""
    TRIAGERS[kind] = target


def triager_for(kind: str) -> Triager:
    """The triager of ``kind``; an unknown kind is a one-line error listing the known ones."""
    target = TRIAGERS.get(kind)
    if target is None:
        raise SeedzerError(f"no triage for findings of kind '{kind}' (known: {', '.join(sorted(TRIAGERS))})")
    module, _, name = target.partition(":")
    fn: Triager = getattr(importlib.import_module(module), name)
    return fn
