"""The folder of a load finding (a pool model that failed to load): every file name it has, written
when it is filed and read back, whichever Seedzer version wrote it (:class:`LoadFinding`).

A load finding folder holds ``meta.json`` (:class:`~seedzer.finding.meta.FindingMeta`, kind
``load``, formerly ``loader``, ``model`` = ``model.onnx``), ``model.onnx`` (the model the failing attempt imported:
the constant-folded one when the finding came from the folded attempt), ``case.json`` (the loader
kernel's case, :class:`seedzer.kernel.load.observe.LoadCase`, with the failure as its expected
observation), ``repro.py`` (:func:`seedzer.finding.repro.render` of that case, the model embedded when
small) and ``log.txt``. Its name is the raw signature
``oracles.signature.raw_key(SALT, observation)``. The campaign (through
:class:`~seedzer.finding.store.FindingStore`) and ``seedzer load --out`` write the same folders;
nothing here imports TVM or onnx at import time, so the campaign process can call it.

Older folders: campaigns wrote ``meta.json`` with an ``outcome`` (its ``detail`` naming the step and
the attempt) and ``model``, the absolute path of the pool model; ``seedzer load --out`` wrote
``finding.json`` beside ``model.onnx``. For a folder without ``model.onnx`` the path in
``meta.json`` is used only when it is an existing ``.onnx`` file (and folded again when the finding
came from the folded attempt); without ``case.json`` the case is made from the model.
"""

from __future__ import annotations

import base64
import dataclasses
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from seedzer.errors import SeedzerError
from seedzer.finding.kind import Observed, Provenance, new_meta
from seedzer.finding.layout import LEGACY_META_FILE, META_FILE, REPRO_FILE
from seedzer.finding.meta import FindingMeta, FindingSettings, canonical_kind
from seedzer.finding.repro import render
from seedzer.kernel.common import MODEL_VS_ONNXRUNTIME, Observation, Stage, Symptom
from seedzer.load.attempt import target_spec
from seedzer.load.loader import MODEL_FILE, LoaderFailure
from seedzer.oracles.signature import raw_key

KERNEL = "onnx.inputs+onnx.runtime+onnx.conditioning+onnx.model+onnx.undefined+load.observe"
NEEDS = "numpy onnx onnxruntime"
"""The kernel modules a load ``repro.py`` carries, and what it needs from PyPI beside apache-tvm."""
SALT = "loader"
"""What load signatures hash as their kind (the kind's name when its first findings were filed)."""
CASE_FILE, LOG_FILE = "case.json", "log.txt"
"""The load kind's own files beside ``MODEL_FILE`` (the house's are in :mod:`seedzer.finding.layout`)."""
KIND_NAME = "load"
"""The ``kind`` of a load finding's ``meta.json``."""
EMBED_LIMIT = 1 << 20
"""Models up to this many bytes are embedded in ``repro.py``; a larger one is read from beside it."""

_OP_REPR = re.compile(r"In ir\.Op\(.*?name=\"([\w.]+)\".*?support_level=\d+\),?")


def load_signature(observation: Observation) -> str:
    """The raw signature of a load finding (the name of its folder)."""
    return raw_key(SALT, observation).digest()


def short_message(message: str) -> str:
    """The first line of an error, with TVM's long ``In ir.Op(...)`` operator repr shortened."""
    lines = [ln.strip() for ln in message.splitlines() if ln.strip()]
    return _OP_REPR.sub(r"In \1:", lines[0] if lines else "").strip()


def with_expected(case: dict[str, Any], observation: Observation) -> dict[str, Any]:
    """A loader case (JSON) whose expected failure is ``observation``."""
    return {**case, "expected": observation.to_json()}


def repro_text(case: dict[str, Any], model: bytes, signature: str = "", about: str = "") -> str:
    """The standalone ``repro.py`` of a loader case (JSON, with its expected failure): the model is
    embedded when it is at most :data:`EMBED_LIMIT` bytes, else read from ``model.onnx`` beside it."""
    big = None
    if len(model) <= EMBED_LIMIT:
        case = {**case, "model": base64.b64encode(model).decode(), "model_file": None}
        big = {"model": "MODEL"}
    else:
        case = {**case, "model": None, "model_file": MODEL_FILE}
    expected = Observation.from_json(case["expected"]) if case.get("expected") else Observation.ok()
    title = f"{expected.symptom.value} at loader step {expected.pass_name or '?'}: {short_message(expected.message)}"
    return render(KERNEL, NEEDS, case, title=title[:200], about=about, finding=signature, big=big)


def _read(path: Path) -> str:
    try:
        return path.read_text(errors="replace")
    except OSError:
        return ""


def _metadata(folder: Path) -> tuple[Path, dict[str, Any], FindingMeta]:
    for name in (META_FILE, LEGACY_META_FILE):
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
    if name == META_FILE and canonical_kind(data.get("kind")) != KIND_NAME:
        raise SeedzerError(f"{path}: not a load finding (kind {data.get('kind')!r})")
    try:
        meta = FindingMeta.from_json({**data, "kind": KIND_NAME}, str(path))
    except SeedzerError as exc:
        reason = str(exc).removeprefix(f"{path}: ")
        raise SeedzerError(f"{path}: unreadable finding metadata ({reason})") from exc
    return path, data, meta


@dataclass
class LoadFinding:
    """A load finding: its record, its observation (``pass_name`` = the load step), the model it
    happened on (the folded one for the folded attempt) and its name, its case (None for older
    folders), the attempt, the log, and for older folders the input seed and target their outcome
    recorded; ``folder`` is where it was read from (None for one not written yet)."""

    meta: FindingMeta
    observation: Observation
    model: bytes
    model_name: str
    case: dict[str, Any] | None
    attempt: str = "raw"
    log: str = ""
    input_seed: int | None = None
    target: str | None = None
    folder: Path | None = None

    @property
    def signature(self) -> str:
        """The finding's (raw) signature."""
        return self.meta.signature

    @property
    def where(self) -> Path:
        """The folder it was read from (a finding not written yet has none: a campaign bug)."""
        if self.folder is None:
            raise SeedzerError(f"load finding {self.signature}: not written to a folder yet")
        return self.folder

    def files(self) -> dict[str, str | bytes]:
        """The folder's files besides ``meta.json``: the model, the case, the reproducer and the log."""
        case = self.case or {}
        about = (f"Model: {self.model_name} ({self.attempt} attempt"
                 f"{', constant-folded' if self.attempt == 'folded' else ''}), loaded by TVM's ONNX importer, "
                 "lowered (LegalizeOps, the default pipeline's fusion), built and run, compared with onnxruntime.")
        return {MODEL_FILE: self.model, CASE_FILE: json.dumps(case, indent=1),
                REPRO_FILE: repro_text(case, self.model, self.signature, about), LOG_FILE: self.log}

    @staticmethod
    def of(model_path: Path, failure: LoaderFailure, provenance: Provenance | None = None) -> LoadFinding:
        """The finding ``failure`` of the pool model at ``model_path`` makes (nothing is written; an
        unreadable model is a one-line :class:`SeedzerError`)."""
        obs = failure.observation
        try:
            model = failure.model if failure.model is not None else Path(model_path).read_bytes()
        except OSError as exc:
            raise SeedzerError(f"{model_path}: cannot read the model ({exc.strerror or exc})") from None
        case = with_expected({**failure.case, "model": None, "model_file": MODEL_FILE}, obs)
        observed = Observed(obs, failure, provenance or Provenance(origin=Path(model_path).name), source=model_path)
        meta = new_meta(load_signature(obs), KIND_NAME, observed,
                        FindingSettings(timeouts={"load": float(case.get("timeout") or 300.0)}), model=MODEL_FILE,
                        extra={"attempt": failure.attempt, "source": str(Path(model_path).resolve())})
        log = obs.message + ("\n\n" + failure.log if failure.log else "") + "\n"
        return LoadFinding(meta, obs, model, Path(model_path).name, case, failure.attempt, log)

    @staticmethod
    def load(folder: Path, models: Path | None = None) -> LoadFinding:
        """Read a load finding folder; a one-line :class:`SeedzerError` names what is wrong. An older
        folder whose model file has moved finds it by its file name in ``models``."""
        folder = Path(folder)
        path, data, meta = _metadata(folder)
        obs, attempt, log = meta.observation, str(meta.extra.get("attempt") or "raw"), _read(folder / LOG_FILE)
        seed = target = None
        if "observation" not in data:  # an older record: the step and the attempt are in the outcome's detail
            detail = (data.get("outcome") or {}).get("detail") or {}
            obs = dataclasses.replace(obs, pass_name=str(detail.get("step") or detail.get("substage") or "import"))
            if obs.symptom is Symptom.MISMATCH:
                obs = dataclasses.replace(obs, stage=Stage.COMPARE, pass_name="compare",
                                          comparison=MODEL_VS_ONNXRUNTIME)
            attempt = str(detail.get("attempt") or "raw")
            log = log or str(detail.get("traceback") or "")
            seed = int(detail["input_seed"]) if isinstance(detail.get("input_seed"), int) else None
            target = str(detail["target"]) if detail.get("target") else None
        case = json.loads((folder / CASE_FILE).read_text()) if (folder / CASE_FILE).is_file() else None
        if (folder / MODEL_FILE).is_file():
            model, name = (folder / MODEL_FILE).read_bytes(), meta.origin or MODEL_FILE
        else:
            source = Path(str(meta.model or ""))
            moved = Path(models) / source.name if models is not None and source.suffix == ".onnx" else None
            if moved is not None and moved.is_file():
                source = moved
            elif not (source.is_absolute() and source.suffix == ".onnx" and source.is_file()):
                where = f"nor is it in {models}" if models is not None else "give --models DIR where it is now"
                raise SeedzerError(f"{path}: the finding's model {source} does not exist (the folder has no "
                                   f"{MODEL_FILE}; {where})")
            model, name = source.read_bytes(), source.name
            if attempt == "folded":
                model = _folded(model, name)
        return LoadFinding(meta, obs, model, name, case, attempt, log, seed, target, folder)


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


def base_case(found: LoadFinding, timeout: float) -> dict[str, Any]:
    """The finding's loader case (JSON): its ``case.json``, else one made from its model (input
    specs, the recorded seed and target, the differential check when the failure needs it).
    Makes the case with the loader kernel (imports TVM) for older folders; raises
    :class:`~seedzer.load.onnx_import.InvalidModel` when the model's inputs cannot be described."""
    if found.case is not None:
        return dict(found.case)
    import onnx

    from seedzer.kernel.load.observe import DIFFERENTIAL_STEPS, LoadCase
    from seedzer.kernel.onnx.model import INPUT_SEED
    from seedzer.load.onnx_import import input_specs

    specs, _ = input_specs(onnx.load_model_from_string(found.model), found.model_name)
    obs = found.observation
    differential = obs.symptom is Symptom.MISMATCH or obs.pass_name in DIFFERENTIAL_STEPS
    case = LoadCase(tuple(s.as_tuple() for s in specs), model_file=MODEL_FILE,
                      input_seed=INPUT_SEED if found.input_seed is None else found.input_seed,
                      target=target_spec(found.target or "llvm"), differential=differential, timeout=timeout)
    return case.to_json()
