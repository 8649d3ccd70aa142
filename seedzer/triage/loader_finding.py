"""The one path of loader findings: the folder a failing model load is filed as.

A loader finding folder holds ``meta.json`` (:class:`~seedzer.store.meta.FindingMeta`, kind
``loader``, ``model`` = ``model.onnx``), ``model.onnx`` (the model the failing attempt imported:
the constant-folded one when the finding came from the folded attempt), ``case.json`` (the loader
kernel's case, :class:`seedzer.kernel.loader.LoaderCase`, with the failure as its expected
observation), ``repro.py`` (:func:`seedzer.store.repro.render` of that case, the model embedded when
small) and ``log.txt``. Its name is the raw signature
``oracles.signature.raw_key("loader", observation)``. The campaign (through
:class:`~seedzer.store.findings.FindingStore`) and ``seedzer load --out`` write the same folders;
nothing here imports TVM or onnx, so the campaign process can call it.
"""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path
from typing import Any

from seedzer import __version__
from seedzer.kernel.common import Observation
from seedzer.load.loader import MODEL_FILE, LoaderFailure
from seedzer.oracles.signature import raw_key
from seedzer.store.atomic import write_atomic
from seedzer.store.meta import FindingMeta, FindingSettings
from seedzer.store.repro import TVM_VERSION, render

CASE_FILE, REPRO_FILE, LOG_FILE = "case.json", "repro.py", "log.txt"
EMBED_LIMIT = 1 << 20
"""Models up to this many bytes are embedded in ``repro.py``; a larger one is read from beside it."""

_OP_REPR = re.compile(r"In ir\.Op\(.*?name=\"([\w.]+)\".*?support_level=\d+\),?")


def loader_signature(observation: Observation) -> str:
    """The raw signature of a loader finding (the name of its folder)."""
    return raw_key("loader", observation).digest()


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
    return render("loader", case, title=title[:200], about=about, finding=signature, big=big)


def loader_finding(model_path: Path, failure: LoaderFailure) -> tuple[FindingMeta, dict[str, str | bytes]]:
    """The ``meta.json`` record and the files of the finding ``failure`` of the model at
    ``model_path`` makes (see the module docstring); nothing is written."""
    obs = failure.observation
    signature = loader_signature(obs)
    model = failure.model if failure.model is not None else Path(model_path).read_bytes()
    case = with_expected({**failure.case, "model": None, "model_file": MODEL_FILE}, obs)
    about = (f"Model: {Path(model_path).name} ({failure.attempt} attempt"
             f"{', constant-folded' if failure.attempt == 'folded' else ''}), loaded by TVM's ONNX importer, "
             "lowered (LegalizeOps, the default pipeline's fusion), built and run, compared with onnxruntime.")
    meta = FindingMeta(signature=signature, kind="loader", observation=obs, model=MODEL_FILE,
                       origin=Path(model_path).name, tvm=TVM_VERSION, seedzer=__version__,
                       settings=FindingSettings(timeouts={"load": float(case.get("timeout") or 300.0)}),
                       extra={"attempt": failure.attempt, "source": str(Path(model_path).resolve())})
    files: dict[str, str | bytes] = {
        MODEL_FILE: model,
        CASE_FILE: json.dumps(case, indent=1),
        REPRO_FILE: repro_text(case, model, signature, about),
        LOG_FILE: obs.message + ("\n\n" + failure.log if failure.log else "") + "\n",
    }
    return meta, files


def write_loader_finding(folder: Path, meta: FindingMeta, files: dict[str, str | bytes]) -> Path:
    """Write a loader finding folder: its files, then ``meta.json`` (each atomically)."""
    folder = Path(folder)
    for name, data in files.items():
        write_atomic(folder / name, data)
    write_atomic(folder / "meta.json", meta.dump(folder / "meta.json"))
    return folder

