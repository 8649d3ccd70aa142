"""A seed model and its recorded model mutations: the mutant a graph case imports.

:func:`apply_model_mutations` replays a sequence of
:class:`~seedzer.kernel.graph.case.ModelMutation` records on a model, in order, deterministically:
each kind by its replay (:data:`APPLY`: MT-DLComp's UOC and PIOC relations and spec-edge changes,
:mod:`seedzer.kernel.graph.model_mutations`; operator insertions,
:mod:`seedzer.kernel.graph.insertion`). A record that no longer fits the model mutated so far raises
``ValueError`` with a one-line reason, so a reducer that drops an earlier mutation sees it.

Depends on numpy, onnx and the kernel modules before it only (copied verbatim into repro.py).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import onnx

from seedzer.kernel.graph.case import ModelMutation
from seedzer.kernel.graph.insertion import apply_insert
from seedzer.kernel.graph.model_mutations import apply_edge, apply_pioc, apply_uoc, toposort

# --- kernel code (everything below is copied verbatim into repro.py) ---
Apply = Callable[[onnx.ModelProto, ModelMutation, dict[str, np.ndarray]], None]
APPLY: dict[str, Apply] = {
    "uoc": lambda model, m, feeds: apply_uoc(model, m),
    "pioc": apply_pioc,
    "edge": lambda model, m, feeds: apply_edge(model, m),
    "insert": lambda model, m, feeds: apply_insert(model, m),
}
"""The replay of each kind of model mutation (in place; PIOC profiles for the case's inputs)."""


def apply_model_mutations(model: onnx.ModelProto, mutations: Sequence[ModelMutation],
                          feeds: dict[str, np.ndarray]) -> onnx.ModelProto:
    """A copy of ``model`` with ``mutations`` applied in order (PIOCs profile for ``feeds``).

    Raises ValueError (one line) when a record no longer fits the model mutated so far."""
    out = onnx.ModelProto()
    out.CopyFrom(model)
    for m in mutations:
        apply = APPLY.get(m.kind)
        if apply is None:
            raise ValueError(f"unknown model mutation kind {m.kind!r} (one of {', '.join(APPLY)})")
        apply(out, m, feeds)
        toposort(out.graph)
    return out
