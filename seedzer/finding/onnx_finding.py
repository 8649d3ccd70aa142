"""What the ONNX-model finding kinds (``loader``, ``graph``) share beside the graph reduction
(:mod:`seedzer.finding.onnx_reduce`): reading a finding's model, its operators, the environment a
report states, and a triage's saved state."""

from __future__ import annotations

import json
import platform
from importlib import metadata
from pathlib import Path
from typing import Any, Protocol

import onnx

from seedzer.errors import SeedzerError
from seedzer.finding.repro import TVM_VERSION


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
