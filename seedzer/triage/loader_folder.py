"""Reading a loader finding folder, whichever Seedzer version wrote it.

The current layout (:mod:`seedzer.triage.loader_finding`) has ``meta.json``, ``model.onnx`` and
``case.json``. Older campaigns wrote ``meta.json`` with an ``outcome`` (its ``detail`` naming the
step and the attempt) and ``model``, the absolute path of the pool model; ``seedzer load --out``
wrote ``finding.json`` beside ``model.onnx``. For a folder without ``model.onnx`` the path in
``meta.json`` is used only when it is an existing ``.onnx`` file (and folded again when the finding
came from the folded attempt); without ``case.json`` the case is made from the model.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from seedzer.errors import SeedzerError
from seedzer.kernel.common import MODEL_VS_ONNXRUNTIME, Observation, Stage, Symptom
from seedzer.load.attempt import target_spec
from seedzer.load.loader import MODEL_FILE
from seedzer.store.meta import FindingMeta
from seedzer.triage.loader_finding import CASE_FILE, LOG_FILE


@dataclass(frozen=True)
class LoaderFinding:
    """A loader finding as read from its folder: its observation (``pass_name`` = the loader step),
    the model it happened on (the folded one for the folded attempt), its case (None for older
    folders) and, for older folders, the input seed and target their outcome recorded."""

    folder: Path
    meta: FindingMeta
    observation: Observation
    model: bytes
    model_name: str
    case: dict[str, Any] | None
    attempt: str = "raw"
    log: str = ""
    input_seed: int | None = None
    target: str | None = None

    @property
    def signature(self) -> str:
        """The finding's (raw) signature."""
        return self.meta.signature


def _read(path: Path) -> str:
    try:
        return path.read_text(errors="replace")
    except OSError:
        return ""


def _metadata(folder: Path) -> tuple[Path, dict[str, Any], FindingMeta]:
    for name in ("meta.json", "finding.json"):
        path = folder / name
        if path.is_file():
            break
    else:
        raise SeedzerError(f"{folder}: not a finding folder (no meta.json or finding.json)")
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise SeedzerError(f"{path}: unreadable finding metadata ({exc})") from exc
    if not isinstance(data, dict):
        raise SeedzerError(f"{path}: unreadable finding metadata (not a JSON object)")
    if name == "meta.json" and data.get("kind") != "loader":
        raise SeedzerError(f"{path}: not a loader finding (kind {data.get('kind')!r})")
    try:
        meta = FindingMeta.from_json({**data, "kind": "loader"}, str(path))
    except SeedzerError as exc:
        reason = str(exc).removeprefix(f"{path}: ")
        raise SeedzerError(f"{path}: unreadable finding metadata ({reason})") from exc
    return path, data, meta


def read_finding(folder: Path) -> LoaderFinding:
    """Read a loader finding folder; a one-line :class:`SeedzerError` names what is wrong."""
    folder = Path(folder)
    path, data, meta = _metadata(folder)
    obs, attempt, log = meta.observation, str(meta.extra.get("attempt") or "raw"), _read(folder / LOG_FILE)
    seed = target = None
    if "observation" not in data:  # an older record: the step and the attempt are in the outcome's detail
        detail = (data.get("outcome") or {}).get("detail") or {}
        obs = dataclasses.replace(obs, pass_name=str(detail.get("step") or detail.get("substage") or "import"))
        if obs.symptom is Symptom.MISMATCH:
            obs = dataclasses.replace(obs, stage=Stage.COMPARE, pass_name="compare", comparison=MODEL_VS_ONNXRUNTIME)
        attempt = str(detail.get("attempt") or "raw")
        log = log or str(detail.get("traceback") or "")
        seed = int(detail["input_seed"]) if isinstance(detail.get("input_seed"), int) else None
        target = str(detail["target"]) if detail.get("target") else None
    case = json.loads((folder / CASE_FILE).read_text()) if (folder / CASE_FILE).is_file() else None
    if (folder / MODEL_FILE).is_file():
        model, name = (folder / MODEL_FILE).read_bytes(), meta.origin or MODEL_FILE
    else:
        source = Path(str(meta.model or ""))
        if not (source.is_absolute() and source.suffix == ".onnx" and source.is_file()):
            raise SeedzerError(f"{path}: the finding's model {source} does not exist (and the folder has no "
                               f"{MODEL_FILE})")
        model, name = source.read_bytes(), source.name
        if attempt == "folded":
            model = _folded(model, name)
    return LoaderFinding(folder, meta, obs, model, name, case, attempt, log, seed, target)


def _folded(data: bytes, name: str) -> bytes:
    """The constant-folded model of an older finding of the folded attempt (itself if nothing folds)."""
    import onnx

    from seedzer.load.folding import FoldError, fold_constants
    from seedzer.load.onnx_import import InvalidModel, input_specs

    try:
        model = onnx.load_model_from_string(data)
        specs, _ = input_specs(model, name)
        return bytes(fold_constants(model, input_shapes={s.name: list(s.shape) for s in specs}).model
                     .SerializeToString())
    except (FoldError, InvalidModel, ValueError):
        return data


def base_case(found: LoaderFinding, timeout: float) -> dict[str, Any]:
    """The finding's loader case (JSON): its ``case.json``, else one made from its model (input
    specs, the recorded seed and target, the differential check when the failure needs it).
    Makes the case with the loader kernel (imports TVM) for older folders; raises
    :class:`~seedzer.load.onnx_import.InvalidModel` when the model's inputs cannot be described."""
    if found.case is not None:
        return dict(found.case)
    import onnx

    from seedzer.kernel.loader import DIFFERENTIAL_STEPS, INPUT_SEED, LoaderCase
    from seedzer.load.onnx_import import input_specs

    specs, _ = input_specs(onnx.load_model_from_string(found.model), found.model_name)
    obs = found.observation
    differential = obs.symptom is Symptom.MISMATCH or obs.pass_name in DIFFERENTIAL_STEPS
    case = LoaderCase(tuple(s.as_tuple() for s in specs), model_file=MODEL_FILE,
                      input_seed=INPUT_SEED if found.input_seed is None else found.input_seed,
                      target=target_spec(found.target or "llvm"), differential=differential, timeout=timeout)
    return case.to_json()
