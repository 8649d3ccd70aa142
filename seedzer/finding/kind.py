"""The seam of a finding kind: what the house asks of a kind, and the data it hands over.

A kind (one sub-package of :mod:`seedzer.finding`) implements :class:`FindingKind`; the campaign,
``recheck``, ``replay`` and ``triage`` call only these methods, through
:func:`seedzer.finding.registry.kind`, and never branch on a kind's name.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Protocol

from seedzer.finding.gate import GateSettings
from seedzer.finding.meta import FindingMeta


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


@dataclass
class GateContext:
    """What the campaign or ``recheck`` knows of a candidate beyond its folder: the gate's settings,
    the ``(label, TVMScript)`` of its less mutated ancestors (least mutated first) and the case the
    worker ran (None: read it from the folder)."""

    settings: GateSettings = field(default_factory=GateSettings)
    ancestors: list[tuple[str, str]] = field(default_factory=list)
    case: Any = None
    timeout: float | None = None
    """A fixed time limit for re-running the candidate (None: the kind's own, from its case)."""
    models: str | None = None
    """Where a finding of an older Seedzer whose model file has moved finds it (by its file name)."""


@dataclass
class GateCall:
    """The gate of one candidate as a call a forked process can make: ``fn(*args)`` returns a
    :class:`~seedzer.finding.verdict.Verdict` (``fn`` is a module-level function, ``args`` picklable
    without importing TVM in the campaign process)."""

    fn: Callable[..., Any]
    args: tuple[Any, ...]


class FindingKind(Protocol):
    """One kind of finding (see the module docstring)."""

    name: str
    """The ``kind`` of its ``meta.json``."""
    kernel: str
    """The kernel module (``seedzer.kernel.<kernel>``) its ``repro.py`` carries after the shared ones."""
    needs: str
    """What its ``repro.py`` needs from PyPI beside ``apache-tvm``."""

    def gate_call(self, folder: Path, meta: FindingMeta, context: GateContext) -> GateCall:
        """The filing gate's call for the candidate in ``folder``."""
        ...

    def write_case(self, folder: Path, meta: FindingMeta, case: Any) -> None:
        """Rewrite the folder's case and ``repro.py`` from the case the gate judged a bug."""
        ...

    def ensure_repro(self, folder: Path, meta: FindingMeta) -> Path:
        """The finding's ``repro.py``, written from its case first where the folder has none."""
        ...

    def triage(self, folder: Path, meta: FindingMeta, options: TriageOptions) -> TriageResult:
        """Reduce the finding, write its reduced ``repro.py`` and ``report.md``."""
        ...
