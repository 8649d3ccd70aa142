"""The record of a plain reproducer: its text and what a report says about it (``minimal.json``)."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from seedzer.errors import SeedzerError
from seedzer.store.atomic import write_atomic

MINIMAL_FILE = "minimal.py"
"""The plain reproducer, beside ``repro.py`` in a finding folder."""
MINIMAL_RECORD = "minimal.json"
"""What was made and how it was verified (:class:`MinimalRecord`)."""
PASS_FAILURE, WRONG_RESULT, IMPORTER = "pass-failure", "wrong-result", "importer"
"""The forms a plain reproducer takes: a pass (or pass list) that raises, crashes or leaves ill-formed IR
on a printed module; a program whose two builds (or TVM and onnxruntime) disagree on fixed inputs; a
model TVM's ONNX importer or build fails on, built in code."""


@dataclass(frozen=True)
class MinimalProgram:
    """A plain reproducer as a kind made it.

    ``needs``: the PyPI packages it imports (``apache-tvm`` first); ``component``: what is at fault (a
    pass, the importer and its operator); ``passes``: the minimal pass list, as calls; ``check``: what
    it asserts, in one line; ``program_lines``: the lines of the printed module or built model;
    ``notes``: how it was made (where the module was cut, what shrinking removed)."""

    text: str
    needs: tuple[str, ...]
    form: str
    component: str
    passes: tuple[str, ...] = ()
    check: str = ""
    program_lines: int = 0
    notes: tuple[str, ...] = ()

    @property
    def lines(self) -> int:
        """Lines of ``minimal.py``."""
        return len(self.text.splitlines())


@dataclass(frozen=True)
class Made:
    """What a kind's search made: the program, and its model's validity by ONNX's checker, onnxruntime and
    ``onnx.reference`` where the program builds a model (judge -> answer)."""

    program: MinimalProgram
    validity: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class MinimalRecord:
    """``minimal.json``: the program's facts (text excluded) and its verification in a fresh
    environment (``verified`` None: not run; ``environment``: the environment's directory name;
    ``facts``: what that environment holds, as :class:`~seedzer.environments.facts.EnvironmentFacts`
    JSON; ``validity``: the model's verdicts by ONNX's checker, onnxruntime and ``onnx.reference``)."""

    lines: int
    needs: tuple[str, ...]
    form: str
    component: str
    passes: tuple[str, ...] = ()
    check: str = ""
    program_lines: int = 0
    notes: tuple[str, ...] = ()
    verified: bool | None = None
    exit_status: int | None = None
    verdict: str = ""
    environment: str = ""
    facts: dict[str, Any] = field(default_factory=dict)
    validity: dict[str, str] = field(default_factory=dict)
    why_not: str = ""
    """Why no plain reproducer was made (``lines`` 0)."""

    @staticmethod
    def absent(why: str) -> MinimalRecord:
        """The record of a finding that has no plain reproducer, saying why."""
        return MinimalRecord(0, (), "", "", why_not=why)

    @property
    def status(self) -> str:
        """One line for tables: ``45 lines, verified``, ``45 lines, not verified (...)`` or ``none (...)``."""
        if not self.lines:
            return f"none ({self.why_not})"
        if self.verified:
            return f"{self.lines} lines, verified"
        return f"{self.lines} lines, " + ("not run" if self.verified is None else f"not verified ({self.verdict})")

    @staticmethod
    def of(program: MinimalProgram, validity: dict[str, str] | None = None) -> MinimalRecord:
        """The record of a program not verified yet (``validity``: its model's, where it builds one)."""
        return MinimalRecord(program.lines, program.needs, program.form, program.component, program.passes,
                             program.check, program.program_lines, program.notes, validity=dict(validity or {}))

    def verified_by(self, ok: bool, exit_status: int | None, verdict: str, environment: str,
                    facts: dict[str, Any]) -> MinimalRecord:
        """The record after a run in a fresh environment."""
        return replace(self, verified=ok, exit_status=exit_status, verdict=verdict, environment=environment,
                       facts=facts)

    def to_json(self) -> dict[str, Any]:
        """JSON-friendly form."""
        data = asdict(self)
        data["needs"], data["passes"], data["notes"] = list(self.needs), list(self.passes), list(self.notes)
        return data

    @staticmethod
    def from_json(data: dict[str, Any]) -> MinimalRecord:
        """Inverse of :meth:`to_json`."""
        return MinimalRecord(int(data["lines"]), tuple(data.get("needs") or ()), str(data.get("form", "")),
                             str(data.get("component", "")), tuple(data.get("passes") or ()),
                             str(data.get("check", "")), int(data.get("program_lines", 0)),
                             tuple(data.get("notes") or ()), data.get("verified"), data.get("exit_status"),
                             str(data.get("verdict", "")), str(data.get("environment", "")),
                             dict(data.get("facts") or {}), dict(data.get("validity") or {}),
                             str(data.get("why_not", "")))


def write_minimal(folder: Path, program: MinimalProgram | None, record: MinimalRecord) -> Path:
    """Write ``minimal.py`` (removed when ``program`` is None) and ``minimal.json`` into ``folder``; the path
    of ``minimal.py``."""
    path = Path(folder) / MINIMAL_FILE
    if program is not None:
        write_atomic(path, program.text)
    elif path.exists():
        path.unlink()
    write_atomic(Path(folder) / MINIMAL_RECORD, json.dumps(record.to_json(), indent=1))
    return path


def read_record(folder: Path) -> MinimalRecord | None:
    """The folder's ``minimal.json`` (None when it has none; a one-line error when it is unreadable)."""
    path = Path(folder) / MINIMAL_RECORD
    if not path.is_file():
        return None
    try:
        return MinimalRecord.from_json(json.loads(path.read_text()))
    except (ValueError, KeyError, TypeError) as exc:
        raise SeedzerError(f"{path}: unreadable ({exc})") from None
