"""``meta.json`` of a finding: one typed record used by the store, the gate, triage and the reports.

Reads every version Seedzer has written: the ``outcome`` of older campaigns becomes the
observation, missing fields take their defaults, unknown ones are kept (``extra``) and written back.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from seedzer.errors import SeedzerError
from seedzer.finding.layout import META_FILE
from seedzer.finding.verdict import AtFault
from seedzer.kernel.common import Observation

KIND_ALIASES = {"lowlevel": "tir", "loader": "load"}
"""Older names of finding kinds (``meta.json`` and campaign.db written before each kind was named after
its level) -> today's."""
OLDEST_KIND = "tir"
"""The kind of a record that names none (the only kind there was)."""


def canonical_kind(name: str | None) -> str:
    """Today's name of the finding kind ``name`` (an older name, or none: :data:`OLDEST_KIND`)."""
    return KIND_ALIASES.get(name or OLDEST_KIND, name or OLDEST_KIND)


PENDING, BUG, NOT_A_BUG = "pending", "bug", "not-a-bug"
"""Verdicts of the filing gate."""
VERDICTS = (PENDING, BUG, NOT_A_BUG)


@dataclass
class FindingSettings:
    """The campaign settings a finding's reproducer needs: tolerances and stage time limits."""

    rtol: float = 1e-4
    atol: float = 1e-5
    timeouts: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class ModelRecord:
    """What an ONNX finding's failing model is (``meta.json``'s ``failing_model``): its file (the model that
    fails, the seed's model mutations applied), the seed it was made from (its file in the folder, the
    pool model's path and SHA-256), the failing model's SHA-256, the opset it declares and needs (by domain,
    ``""`` the default one) against the seed's, the model mutations applied, and what else the failure
    needs that the model does not hold (the Relax steps, Seedzer's own IR rewrites among them, the inputs,
    the comparison)."""

    file: str
    seed: str
    seed_origin: str = ""
    seed_sha256: str = ""
    sha256: str = ""
    opset: dict[str, int] = field(default_factory=dict)
    seed_opset: dict[str, int] = field(default_factory=dict)
    mutations: tuple[str, ...] = ()
    also: tuple[str, ...] = ()
    """What the failure needs besides the model, one sentence each (Relax steps, inputs, comparison)."""

    def opset_note(self) -> str:
        """One sentence on the opset the failing model declares, and whether the model mutations raised it."""
        mine = ", ".join(f"{d or 'ai.onnx'} {v}" for d, v in sorted(self.opset.items())) or "none declared"
        if self.opset == self.seed_opset:
            return f"opset: {mine} (the seed's)"
        seed = ", ".join(f"{d or 'ai.onnx'} {v}" for d, v in sorted(self.seed_opset.items())) or "none"
        return f"opset: {mine}, raised by the model mutations from the seed's {seed}: the model needs it"

    def to_json(self) -> dict[str, Any]:
        """JSON-friendly form."""
        data = asdict(self)
        data["mutations"], data["also"] = list(self.mutations), list(self.also)
        return data

    @staticmethod
    def from_json(data: dict[str, Any]) -> ModelRecord:
        """Inverse of :meth:`to_json` (unknown keys are ignored)."""
        return ModelRecord(str(data["file"]), str(data["seed"]), str(data.get("seed_origin") or ""),
                           str(data.get("seed_sha256") or ""), str(data.get("sha256") or ""),
                           {str(k): int(v) for k, v in (data.get("opset") or {}).items()},
                           {str(k): int(v) for k, v in (data.get("seed_opset") or {}).items()},
                           tuple(str(m) for m in data.get("mutations") or ()),
                           tuple(str(a) for a in data.get("also") or ()))


@dataclass
class FindingMeta:
    """Everything known about one finding (one folder under ``findings/``).

    ``signature`` is the raw signature (the folder's name); the gate adds ``verdict``,
    ``verdict_reason``, the ``culprit`` passes and the ``root_signature`` a bug is filed under.
    """

    signature: str
    kind: str
    observation: Observation
    status: str = "new"
    verdict: str = PENDING
    verdict_reason: str = ""
    root_signature: str | None = None
    culprit: list[str] = field(default_factory=list)
    first_seen: float = 0.0
    parent: str | None = None
    origin: str = ""
    mutators: list[str] = field(default_factory=list)
    worker: int | None = None
    testcase: int | None = None
    model: str | None = None
    tvm: str = ""
    seedzer: str = ""
    settings: FindingSettings = field(default_factory=FindingSettings)
    known_issue: str | None = None
    confirm_returncode: int | None = None
    gate_seconds: float | None = None
    at_fault: AtFault | None = None
    """A bug's code at fault, its evidence and the passes that only reached it (the gate's)."""
    failing_model: ModelRecord | None = None
    """An ONNX finding's failing model: what ``model.onnx`` is and what else the failure needs (None: not
    known yet, e.g. a graph candidate with model mutations before its gate, or a folder of an older Seedzer)."""
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def is_bug(self) -> bool:
        """True once the gate (or ``recheck``) judged it a bug."""
        return self.verdict == BUG

    def to_json(self) -> dict[str, Any]:
        """JSON-friendly form (what ``meta.json`` holds)."""
        data = {f.name: getattr(self, f.name) for f in fields(self)
                if f.name not in ("extra", "observation", "at_fault", "failing_model")}
        data["settings"] = asdict(self.settings)
        if self.at_fault is not None:
            data["at_fault"] = self.at_fault.to_json()
        if self.failing_model is not None:
            data["failing_model"] = self.failing_model.to_json()
        data["observation"] = self.observation.to_json()
        return {**self.extra, **data}

    def dump(self, path: Path) -> str:
        """The text of ``meta.json`` (``path`` only names it in errors)."""
        try:
            return json.dumps(self.to_json(), indent=2, default=str)
        except (TypeError, ValueError) as exc:
            raise SeedzerError(f"{path}: cannot serialize finding metadata ({exc})") from exc

    @staticmethod
    def from_json(data: dict[str, Any], where: str = META_FILE) -> FindingMeta:
        """Build from a parsed ``meta.json``; a record that is not a finding is a one-line error."""
        if not isinstance(data, dict):
            raise SeedzerError(f"{where}: not a finding's metadata (a JSON object is expected)")
        raw = data.get("observation") or data.get("outcome")
        if not isinstance(raw, dict) or "symptom" not in raw:
            raise SeedzerError(f"{where}: no 'observation' (not a Seedzer finding)")
        try:
            observation = Observation.from_json(_legacy(raw) if "outcome" in data and "observation" not in data
                                                else raw)
        except (KeyError, ValueError, TypeError) as exc:
            raise SeedzerError(f"{where}: unreadable observation ({exc})") from exc
        known = {f.name for f in fields(FindingMeta)}
        kwargs = {k: v for k, v in data.items()
                  if k in known and k not in ("observation", "settings", "extra", "at_fault", "failing_model")}
        if isinstance(data.get("at_fault"), dict):
            try:
                kwargs["at_fault"] = AtFault.from_json(data["at_fault"])
            except KeyError as exc:
                raise SeedzerError(f"{where}: unreadable at_fault ({exc})") from exc
        if isinstance(data.get("failing_model"), dict):
            try:
                kwargs["failing_model"] = ModelRecord.from_json(data["failing_model"])
            except (KeyError, ValueError, TypeError, AttributeError) as exc:
                raise SeedzerError(f"{where}: unreadable failing_model ({exc})") from exc
        extra = {k: v for k, v in data.items() if k not in known and k != "outcome"}
        settings: dict[str, Any] = data["settings"] if isinstance(data.get("settings"), dict) else {}
        kwargs["settings"] = FindingSettings(float(settings.get("rtol", 1e-4)), float(settings.get("atol", 1e-5)),
                                             {str(k): float(v) for k, v in (settings.get("timeouts") or {}).items()})
        kwargs.setdefault("signature", Path(where).parent.name)
        kwargs["kind"] = canonical_kind(kwargs.get("kind"))
        if kwargs.get("verdict") not in VERDICTS:
            kwargs["verdict"] = PENDING
        try:
            return FindingMeta(observation=observation, extra=extra, **kwargs)
        except TypeError as exc:
            raise SeedzerError(f"{where}: unreadable finding metadata ({exc})") from exc

    @staticmethod
    def load(folder: Path) -> FindingMeta:
        """Read ``folder/meta.json``; a missing or corrupt file is a one-line error naming it."""
        path = Path(folder) / META_FILE
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            raise SeedzerError(f"{path}: not a finding's meta.json ({exc})") from exc
        return FindingMeta.from_json(data, str(path))


_LEGACY_ILLFORMED = re.compile(r"^IR is ill-formed after [\w.]+: \w+: ")


def _legacy(outcome: dict[str, Any]) -> dict[str, Any]:
    """An ``outcome`` written by Seedzer before observations, in the observation's terms: ill-formed
    messages lose the prefix the old oracle added; a mismatch does not say which builds disagreed."""
    data = dict(outcome)
    data["message"] = _LEGACY_ILLFORMED.sub("", str(data.get("message") or ""))
    if data.get("symptom") == "mismatch":
        data["pass_name"] = None
    return data


def inside(folder: Path, name: str) -> Path:
    """``folder/name``, refused (one line) when it would leave ``folder`` (absolute, ``..``, links)."""
    base = Path(folder).resolve()
    path = (base / name).resolve()
    if path != base and base not in path.parents:
        raise SeedzerError(f"{folder}: the path {name!r} leaves the finding's folder")
    return path


def read_inside(folder: Path, name: str) -> str:
    """The text of ``folder/name`` (:func:`inside`); a one-line error when it cannot be read."""
    path = inside(folder, name)
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise SeedzerError(f"{path}: unreadable ({exc})") from exc
