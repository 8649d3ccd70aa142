"""The seam of a finding kind: what the house asks of a kind, and the data it hands over.

A kind (one sub-package of :mod:`seedzer.finding`, named as the level whose test cases it files) implements
:class:`FindingKind`; the campaign, ``recheck``, ``replay`` and ``triage`` call only these methods,
through :func:`seedzer.finding.registry.kind`, and never branch on a kind's name. Filing is two
steps: :meth:`FindingKind.signature` names the folder an :class:`Observed` failure belongs to (a
repeat is only counted), :meth:`FindingKind.file` makes the new folder's :class:`Finding` and the case
its gate judges.
"""

from __future__ import annotations

import importlib
import re
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Protocol

from seedzer import __version__
from seedzer.finding.gate import GateSettings
from seedzer.finding.known import predict
from seedzer.finding.meta import FindingMeta, FindingSettings
from seedzer.finding.minimal.verify import VerifySettings
from seedzer.finding.reducer import pass_methods
from seedzer.finding.repro import TVM_VERSION
from seedzer.kernel.common import Observation


@dataclass
class TriageOptions:
    """How to triage: time budget per finding, redo finished reductions, interpreter for repros, seconds
    the plain reproducer's search may take and where (how) it is verified."""

    minutes: float = 5.0
    force: bool = False
    python: str = sys.executable
    minimal_seconds: float = 180.0
    verify: VerifySettings = field(default_factory=VerifySettings)


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
    minimal_lines: int | None = None
    """Lines of the plain reproducer (``minimal.py``; None: none was made)."""
    minimal: str = ""
    """Its status: ``45 lines, verified``, ``none (why)``..."""

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


@dataclass(frozen=True)
class Provenance:
    """Where the test case of a failure came from: its parent corpus entry and that entry's pool model
    (``origin``), the mutations that made it, the worker and test case number that ran it."""

    parent: str | None = None
    origin: str = ""
    mutators: tuple[str, ...] = ()
    worker: int | None = None
    testcase: int | None = None


@dataclass(frozen=True)
class Observed:
    """One failure to file, as the campaign saw it: the judged observation, the kernel case that showed
    it (as its worker ran it, script included; for a pool model that failed to load, the
    :class:`~seedzer.load.loader.LoaderFailure`), where it came from, the fuzzed pass sequence (JSON)
    with the indices of the passes that left the IR unchanged, the log, and the pool model (``source``)
    of a load failure."""

    observation: Observation
    case: Any
    provenance: Provenance = Provenance()
    passes: str = "[]"
    unchanged: tuple[int, ...] = ()
    log: str = ""
    source: Path | None = None


@dataclass(frozen=True)
class FileSettings:
    """The campaign settings a filed case needs: tolerances and stage limits, and the perf oracle's."""

    finding: FindingSettings = field(default_factory=FindingSettings)
    perf_factor: float = 2.0
    perf_repeats: int = 3


def new_meta(signature: str, kind: str, observed: Observed, settings: FindingSettings, **fields: Any) -> FindingMeta:
    """The ``meta.json`` record of a newly filed finding of ``kind``: its observation and provenance,
    the versions that filed it, ``settings`` and the kind's own ``fields``."""
    p = observed.provenance
    return FindingMeta(signature, kind, observed.observation, parent=p.parent, origin=p.origin,
                       mutators=list(p.mutators), worker=p.worker, testcase=p.testcase, tvm=TVM_VERSION,
                       seedzer=__version__, settings=settings, **fields)


def candidate_meta(signature: str, kind: str, salt: str, observed: Observed, settings: FindingSettings,
                   names: Iterable[str], changed: Sequence[str], predictable: bool = True) -> FindingMeta:
    """The record of a fuzzer's candidate: :func:`new_meta` with the prediction of its root
    (:func:`seedzer.finding.known.predict` under the kind's ``salt``, from the IR's own ``names`` and
    the passes that ``changed`` the IR), so a known verdict can count it without a gate run. A failure no
    pass of the case can be guessed at (``predictable`` False: a graph case's import, build or run) gets
    none: a guess naming no pass would be no culprit."""
    extra = predict(salt, observed.observation, names, changed) if predictable else {}
    return new_meta(signature, kind, observed, settings, extra=extra)


class Finding(Protocol):
    """One finding folder's contents, as its kind writes them (:func:`seedzer.finding.store.dump`) and
    reads them back (each kind's ``Finding.load``): its ``meta.json`` and its own files."""

    meta: FindingMeta

    def files(self) -> dict[str, str | bytes]:
        """The kind's files of the folder (name -> content), ``meta.json`` excluded."""
        ...


@dataclass
class Filed:
    """What filing one new failure gives: the finding to write and the case its gate judges (None: the
    gate reads the folder)."""

    finding: Finding
    gate_case: Any = None

    @property
    def meta(self) -> FindingMeta:
        """The finding's record."""
        return self.finding.meta


@dataclass(frozen=True)
class Described:
    """A named part of a kind (a gate rule, a reduction pass) and what it does, from its docstring:
    the manual's tables are generated from these (``python -m seedzer.docs``)."""

    name: str
    doc: str

    @staticmethod
    def of(name: str, documented: object) -> Described:
        """``name`` with the first paragraph of ``documented``'s docstring, on one line (reST roles
        and literals reduced to their text)."""
        first = (getattr(documented, "__doc__", None) or "").strip().split("\n\n")[0]
        text = " ".join(first.split())
        text = re.sub(r":\w+:`~?([^`]+)`", lambda m: m.group(1).split(".")[-1], text)
        return Described(name, text.replace("``", "`"))


def _target(where: str) -> Any:
    module, _, attribute = where.partition(":")
    return getattr(importlib.import_module(module), attribute)


class DocumentedKind:
    """The part of :class:`FindingKind` every kind shares: its gate's rules and its reducer's passes,
    described from their docstrings. A kind names where they are (``"module:attribute"``, imported
    when asked: the campaign process never needs them)."""

    rules_at: ClassVar[str] = ""
    """The gate's ordered rules (objects with a ``name``, documented by their class)."""
    passes_at: ClassVar[tuple[str, ...]] = ()
    """The classes whose :func:`~seedzer.finding.reducer.defines_pass` methods are the reducer's passes, in order."""
    fault_rules_at: ClassVar[str] = ""
    """The ordered rules of the code at fault (a :class:`~seedzer.finding.fault.FaultRules`)."""

    def gate_rules(self) -> list[Described]:
        """Its gate's rules, in the order they judge."""
        return [Described.of(rule.name, type(rule)) for rule in _target(self.rules_at)]

    def reduction_passes(self) -> list[Described]:
        """Its reducer's passes, in the order they run."""
        return [Described.of(name, method) for where in self.passes_at
                for name, method in pass_methods(_target(where)).items()]

    def fault_rules(self) -> list[Described]:
        """Its rules of the code at fault, in the order they decide."""
        return [Described.of(rule.name, type(rule)) for rule in _target(self.fault_rules_at).rules] \
            if self.fault_rules_at else []

    def model_call(self, folder: Path, meta: FindingMeta) -> GateCall | None:
        """The call that writes the model a bug counted without a gate run fails on (its value: the model's
        record for ``meta.json``); None for a kind whose folder holds it from the start."""
        return None


class FindingKind(Protocol):
    """One kind of finding (see the module docstring)."""

    name: str
    """The ``kind`` of its ``meta.json``: the name of the level whose test cases it files."""
    salt: str
    """The word its signatures hash (:class:`~seedzer.oracles.signature.SignatureKey`): its name when
    its first findings were filed, kept so a root keeps its signature across versions."""
    kernel: str
    """The kernel module (``seedzer.kernel.<kernel>``) its ``repro.py`` carries after the shared ones."""
    needs: str
    """What its ``repro.py`` needs from PyPI beside ``apache-tvm``."""

    def signature(self, observed: Observed) -> str:
        """The raw signature (folder name) of ``observed``: occurrences with one signature are one finding."""
        ...

    def file(self, observed: Observed, settings: FileSettings) -> Filed:
        """The finding a new signature's first occurrence makes (raises
        :class:`~seedzer.errors.SeedzerError` with one line when it cannot be filed)."""
        ...

    def gate_call(self, folder: Path, meta: FindingMeta, context: GateContext) -> GateCall:
        """The filing gate's call for the candidate in ``folder``."""
        ...

    def rerun_call(self, folder: Path, meta: FindingMeta, timeout: float, max_memory: int) -> GateCall:
        """The call that runs the folder's case once more, alone in a fresh process within ``timeout``
        seconds and ``max_memory`` bytes of address space (0: unbounded): a slow or out-of-memory
        test case re-run at the full limits; its value is the
        :class:`~seedzer.kernel.common.Observation`. Raises :class:`~seedzer.errors.SeedzerError` for a
        kind whose folders hold no test case to run."""
        ...

    def write_case(self, folder: Path, meta: FindingMeta, case: Any) -> None:
        """Rewrite the folder's case and ``repro.py`` from the case the gate judged a bug."""
        ...

    def model_call(self, folder: Path, meta: FindingMeta) -> GateCall | None:
        """The call that writes the model a bug counted without a gate run fails on (its value: the model's
        record for ``meta.json``); None for a kind whose folder holds it from the start."""
        ...

    def ensure_repro(self, folder: Path, meta: FindingMeta) -> Path:
        """The finding's ``repro.py``, written from its case first where the folder has none."""
        ...

    def triage(self, folder: Path, meta: FindingMeta, options: TriageOptions) -> TriageResult:
        """Reduce the finding, write its reduced ``repro.py`` and ``report.md``."""
        ...

    def gate_rules(self) -> list[Described]:
        """Its gate's rules, in the order they judge."""
        ...

    def reduction_passes(self) -> list[Described]:
        """Its reducer's passes, in the order they run."""
        ...

    def fault_rules(self) -> list[Described]:
        """Its rules of the code at fault, in the order they decide."""
        ...
