"""A graph-level worker's memory across test cases (:class:`GraphMemo`), and the seam of its builds.

The graph kernel (:mod:`seedzer.kernel.graph.observe`) asks a memo, when it is given one, for what
depends only on the model (its import, TVM's default outputs, a mutant's validity, onnxruntime's
refusal) and builds the fuzzed module through :meth:`GraphMemo.build`: here plainly ``tvm.compile``,
in a worker one that may reuse the build of a structurally equal module
(:mod:`seedzer.levels.graph.build_reuse`). A reproducer runs without a memo.

Depends on numpy and the kernel modules before it only (copied verbatim into repro.py).
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import numpy as np

from seedzer.kernel.onnx.model import build
from seedzer.kernel.onnx.validity import Validity

# --- kernel code (everything below is copied verbatim into repro.py) ---
MEMO_SIZE = 128
"""How many entries of each table a :class:`GraphMemo` keeps: more than a pool's models (a pool of 20
models thrashed a memory of 16, rebuilding TVM's default pipeline for a third of the test cases), and
the imported modules of the mutants a worker runs again."""


class GraphMemo:
    """A worker's memory across graph cases: imported modules by model, TVM's default outputs by
    model, input seed and target, mutants' validity by model and input seed, and onnxruntime's
    refusal of a model (the oldest are forgotten beyond ``size`` of each)."""

    def __init__(self, size: int = MEMO_SIZE) -> None:
        self.size = size
        self.imported: OrderedDict[str, Any] = OrderedDict()
        self.defaults: OrderedDict[str, list[np.ndarray]] = OrderedDict()
        self.valid: OrderedDict[str, Validity] = OrderedDict()
        """The specification's verdict on each mutant and input seed."""
        self.refusals: OrderedDict[str, str] = OrderedDict()
        """Why onnxruntime refuses each model ("": it runs it)."""

    def get(self, table: OrderedDict[str, Any], key: str) -> Any:
        """The remembered value of ``key`` (None if forgotten)."""
        if key in table:
            table.move_to_end(key)
            return table[key]
        return None

    def put(self, table: OrderedDict[str, Any], key: str, value: Any) -> None:
        """Remember ``value`` under ``key``."""
        table[key] = value
        while len(table) > self.size:
            table.popitem(last=False)

    def build(self, mod: Any, target: Any) -> Any:
        """``tvm.compile`` of the fuzzed module after the case's steps (a worker's memo may reuse the
        executable of a structurally equal module it built before)."""
        return build(mod, target)
