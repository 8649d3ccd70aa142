"""Real TVM failures as the kernel records them (``tests/fixtures/frames/*.json``): the message and the TVM
frames (``Observation.frames``) of an error raised by the installed TVM, each with how it was made
(``how``). They were captured by running TVM's importer, passes and ``tvm.compile`` on small models and
PrimFuncs; the unit tests of the code at fault and of root keys read them instead of hand-written frames."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from seedzer.kernel.common import Observation, Stage

FRAMES = Path(__file__).parent / "fixtures" / "frames"


def real_failure(name: str, **changes: object) -> Observation:
    """The observation of the captured failure ``name`` (with ``changes`` to its fields: where it surfaced)."""
    data = json.loads((FRAMES / f"{name}.json").read_text())
    observed = Observation.from_json(data["observation"])
    return dataclasses.replace(observed, **changes) if changes else observed  # type: ignore[arg-type]


def at_import(name: str) -> Observation:
    """The captured failure as the graph or load kernel reports a failure of the import."""
    return real_failure(name, stage=Stage.LOAD, pass_name="import")
