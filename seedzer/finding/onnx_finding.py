"""What the ONNX-model finding kinds (``loader``, ``graph``) share beside the graph reduction
(:mod:`seedzer.finding.onnx_reduce`): reading a finding's model, its operators, the environment a
report states, and a triage's saved state."""

from __future__ import annotations

import json
import platform
import re
from importlib import metadata
from pathlib import Path
from typing import Any, Protocol

import onnx

from seedzer.errors import SeedzerError
from seedzer.finding.repro import TVM_VERSION
from seedzer.kernel.common import Observation, Symptom
from seedzer.kernel.messages import key_line


def parse_model(data: bytes, where: object) -> onnx.ModelProto:
    """The ONNX model in ``data``; a one-line error naming ``where`` when it is no readable model."""
    try:
        return onnx.load_model_from_string(data)
    except Exception as exc:  # protobuf's DecodeError and friends
        raise SeedzerError(f"{where}: the finding's model is not a readable ONNX model ({exc})") from exc


def op_types(model: onnx.ModelProto) -> list[str]:
    """The model's operator types, each once, in graph order."""
    return list(dict.fromkeys(n.op_type for n in model.graph.node))


def _version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "not installed"


def environment() -> str:
    """Markdown list of the versions a maintainer needs."""
    rows = [("TVM", f"apache-tvm=={TVM_VERSION} (PyPI wheel, llvm target, CPU)")]
    rows += [(d, _version(d)) for d in ("onnx", "onnxruntime", "numpy")]
    rows.append(("Python", f"{platform.python_version()} on {platform.system()} {platform.machine()}"))
    return "\n".join(f"- {name}: {value}" for name, value in rows)


class Triaged(Protocol):
    """What a triage result says of itself (each ONNX kind's result type)."""

    reproduced: bool
    verified: bool | None
    complete: bool


def triage_status(res: Triaged) -> str:
    """A triage's status: ``not-reproduced``, ``unverified`` (the reduced repro failed differently in
    a clean process), ``reduced`` or ``partial`` (the budget ran out; resumable)."""
    if not res.reproduced:
        return "not-reproduced"
    if res.verified is False:
        return "unverified"
    return "reduced" if res.complete else "partial"


def load_state(path: Path, signature: str) -> dict[str, Any] | None:
    """A triage's saved state in ``path`` when it belongs to the finding ``signature`` (None otherwise)."""
    try:
        state = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return state if isinstance(state, dict) and state.get("signature") == signature else None


_SITE = re.compile(r"(?<=File \")[^\"]*/site-packages/")


def failure_text(observation: Observation, step: str, mismatch: str, log: str) -> str:
    """What a report says happened: for a wrong result ``mismatch`` (its lead sentence) and the
    difference, else the process dying or not finishing during ``step``, the IR ill-formed after it,
    or the error it raised; then the last Python frames of ``log`` (site-packages paths shortened)."""
    o = observation
    if o.symptom is Symptom.MISMATCH:
        text = f"{mismatch}:\n\n```\n{o.message.strip()}\n```"
    elif o.symptom is Symptom.CRASH:
        text = f"The process dies during `{step}`: {o.message}."
    elif o.symptom is Symptom.HANG:
        text = f"`{step}` does not finish: {o.message}."
    elif o.symptom is Symptom.ILLFORMED:
        text = f"`relax.analysis.well_formed` rejects the output of `{step}`:\n\n```\n{key_line(o.message)}\n```"
    else:
        text = f"`{step}` raises:\n\n```\n{key_line(o.message)}\n```"
    frames = [_SITE.sub("", ln.strip()) for ln in log.strip().splitlines() if ln.strip().startswith("File ")][-4:]
    if frames:
        text += "\n\nLast frames (when the finding was filed):\n\n```\n" + "\n".join(frames) + "\n```"
    return text


def exit_text(returncode: int | None) -> str:
    """How a report states the exit of the reduced ``repro.py`` in a clean interpreter."""
    if returncode is None:
        return "did not finish in time"
    if returncode < 0:
        return f"dies by signal {-returncode}"
    return f"exits with status {returncode}"
