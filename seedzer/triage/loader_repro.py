"""Rendering the standalone ``repro.py`` of a loader finding (see :mod:`loader_standalone`).

The script is the case (the model embedded as base64, or saved beside it when large; input specs;
the expected failure) followed by :mod:`seedzer.triage.loader_standalone`'s code, which needs only
``pip install apache-tvm==<version> onnx onnxruntime numpy``.
"""

from __future__ import annotations

import base64
import inspect
import json
import textwrap
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

import onnx

from seedzer.load import compare
from seedzer.load.onnx_import import input_specs
from seedzer.outcome import Outcome
from seedzer.store.repro import TVM_VERSION
from seedzer.triage.loader_standalone import normalize
from seedzer.triage.onnx_graph import export

MARKER = "# --- reproducer code (everything below is copied into repro.py) ---"
COMPARE_IMPORT = "from seedzer.load.compare import compare_outputs, onnxruntime_outputs, random_inputs"
INLINED = (compare.random_inputs, compare.compare_outputs, compare.onnxruntime_outputs)
"""The loader functions whose source replaces :data:`COMPARE_IMPORT` in a reproducer."""
EMBED_LIMIT = 1 << 20
"""Models up to this many bytes are embedded in ``repro.py``; larger ones are saved beside it."""
MODEL_FILE = "model.min.onnx"

_HEADER = '''#!/usr/bin/env python3
"""Seedzer loader reproducer: {title}

Symptom: {symptom} at step {step} of TVM's ONNX import pipeline ({nodes} ONNX node(s): {ops})
Needs: pip install apache-tvm=={tvm_version} onnx onnxruntime numpy
Exit status: 1 = bug reproduced (a crash kills the process by its signal instead),
             0 = every step passed and TVM agrees with onnxruntime, 3 = a different failure.
"""
import sys

CASE = {case}
'''


@dataclass
class LoaderRepro:
    """The text of ``repro.py`` and the files to write beside it (name -> bytes)."""

    script: str
    files: dict[str, bytes] = field(default_factory=dict)


def standalone_code() -> str:
    """:mod:`loader_standalone` from its marker on, the compare import replaced by that code's source."""
    text = resources.files("seedzer.triage").joinpath("loader_standalone.py").read_text()
    code = text[text.index(MARKER) + len(MARKER) + 1 :]
    inlined = "\n\n".join(textwrap.dedent(inspect.getsource(fn)).strip() for fn in INLINED)
    line = next(ln for ln in code.splitlines() if ln.startswith(COMPARE_IMPORT))
    note = "# the loader's input generator, comparison and reference engine (seedzer.load.compare)"
    return code.replace(line, f"{note}\n\n{inlined}\n")


def expected_of(outcome: Outcome) -> dict[str, str]:
    """The ``expected`` entry of a case for a loader outcome: symptom, step and message key."""
    step = str(outcome.detail.get("step", outcome.detail.get("substage", "import")))
    return {"symptom": outcome.symptom.value, "step": step, "key": normalize(outcome.message)}


def make_case(
    model: onnx.ModelProto,
    outcome: Outcome,
    *,
    timeout: float = 60.0,
    embed_limit: int = EMBED_LIMIT,
) -> tuple[dict[str, Any], dict[str, bytes]]:
    """The case dict for ``model`` failing as ``outcome`` did, and the files it needs beside it."""
    specs, _ = input_specs(model, "model")
    data = export(model)
    case: dict[str, Any] = {
        "specs": [list(s.as_tuple()) for s in specs],
        "input_seed": int(outcome.detail.get("input_seed", compare.INPUT_SEED)),
        "target": str(outcome.detail.get("target", "llvm")),
        "tolerances": {k: list(v) for k, v in compare.TOLERANCES.items()},
        "timeout": float(timeout),
        "expected": expected_of(outcome),
    }
    files: dict[str, bytes] = {}
    if len(data) <= embed_limit:
        case["model_b64"] = base64.b64encode(data).decode()
    else:
        case["model_file"] = MODEL_FILE
        files[MODEL_FILE] = data
    return case, files


def render_loader_repro(model: onnx.ModelProto, outcome: Outcome, title: str, **kwargs: Any) -> LoaderRepro:
    """The standalone reproducer of ``model`` failing as ``outcome`` did (``kwargs`` go to :func:`make_case`)."""
    case, files = make_case(model, outcome, **kwargs)
    ops = ", ".join(dict.fromkeys(n.op_type for n in model.graph.node))
    header = _HEADER.format(
        title=title.replace('"""', "'''").replace("\\", "/"),
        symptom=outcome.symptom.value,
        step=case["expected"]["step"],
        nodes=len(model.graph.node),
        ops=ops,
        tvm_version=TVM_VERSION,
        case="{\n" + ",\n".join(f"    {json.dumps(k)}: {json.dumps(v)}" for k, v in case.items()) + ",\n}",
    )
    footer = '\n\nif __name__ == "__main__":\n    sys.exit(main(CASE))\n'
    return LoaderRepro(header + "\n" + standalone_code().rstrip() + footer, files)
