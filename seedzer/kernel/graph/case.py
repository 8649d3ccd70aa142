"""The graph-level test case: a model, a Relax pass sequence and how to judge it (TVM-free).

A :class:`GraphCase` is what a graph-level fuzz worker runs, what a ``graph`` finding's ``case.json``
holds and what its ``repro.py`` carries as ``CASE``: an ONNX model (embedded in base64, else a file
beside the reproducer), its input specs, the Relax passes to run after import (each a
:class:`GraphPass`: ``relax.X`` and its keyword arguments), the input seed and the expected failure.
The steps themselves are :mod:`seedzer.kernel.graph.observe`; this module holds only data, so the campaign
process handles graph cases without importing TVM.

Depends on the standard library and :mod:`seedzer.kernel.common` only (copied verbatim into repro.py).
"""

from __future__ import annotations

import base64
import dataclasses
from typing import Any

from seedzer.kernel.common import Observation

# --- kernel code (everything below is copied verbatim into repro.py) ---
GRAPH_INPUT_SEED = 20240601
"""Default seed of a graph case's random inputs (the loader's)."""
INEXACT_SLACK = 10.0
"""How much looser the comparison is after a pass that changes floating results by design (mixed
precision, fast math, matmul reassociation): both tolerances are multiplied by it."""
MUTATION_PREFIX = "mutate."
"""Prefix of a Relax IR mutation step's name (``"mutate.SplitDataflow"``, see
:mod:`seedzer.kernel.graph.relax_mutations`); a Relax pass's is ``relax.``."""
WELL_FORMED = ":well-formed"
"""Suffix of the step that checks a pass's output (``relax.X:well-formed``)."""
CONSISTENT = ":consistent"
"""Suffix of the step that checks a Relax mutation's output is a consistent program (``mutate.X:consistent``)."""
MUTANT_VS_SEED = "mutant-vs-seed"
"""A metamorphic mismatch: the model mutated by UOC/PIOC relations, built by TVM, against TVM's default
pipeline on the seed model (the relations keep its outputs)."""
DEFAULT_BUILD = "default"
"""The program built by TVM's default pipeline alone from the imported model (the reference)."""


@dataclasses.dataclass(frozen=True)
class GraphPass:
    """One Relax pass of a sequence: ``relax.X`` (``tvm.relax.transform.X``) and its keyword arguments."""

    name: str
    args: dict[str, Any] = dataclasses.field(default_factory=dict)

    def label(self) -> str:
        """``relax.X`` or ``relax.X[k=v, ...]``."""
        items = ", ".join(f"{k}={v!r}" for k, v in sorted(self.args.items()))
        return self.name + (f"[{items}]" if items else "")

    def to_json(self) -> dict[str, Any]:
        """JSON-friendly form: ``{"pass": ..., "args": {...}}``."""
        return {"pass": self.name, "args": dict(self.args)}

    @staticmethod
    def from_json(data: dict[str, Any]) -> GraphPass:
        """Inverse of :meth:`to_json` (also reads ``name`` for ``pass``)."""
        return GraphPass(str(data.get("pass", data.get("name"))), dict(data.get("args") or {}))


MODEL_MUTATION_KINDS = ("uoc", "pioc", "edge", "insert")
"""Kinds of :class:`ModelMutation`: universal and per-input opaque conditions (MT-DLComp's UOC and
PIOC, with garbage nodes), a spec-edge attribute or operand change, and the insertion of an operator
of TVM's importer (:mod:`seedzer.kernel.graph.insertion`)."""
DIFFERENTIAL_KINDS = frozenset({"edge", "insert"})
"""Model mutations that change what the model computes: the case is then judged against the
specification's engines (onnxruntime, onnx.reference) on the mutated model."""
RANDOM_INPUTS, SPECIAL_INPUTS = "random", "special"
INPUT_MODES = (RANDOM_INPUTS, SPECIAL_INPUTS)
"""A graph case's input modes (:mod:`seedzer.kernel.graph.inputs`): random values, or the special
values the specification defines (NaN, +-Inf, -0, denormals, extremes, index ends)."""


@dataclasses.dataclass(frozen=True)
class ModelMutation:
    """One ONNX model mutation, applied by :func:`seedzer.kernel.graph.model_mutations.apply_model_mutations`.

    ``kind`` is one of :data:`MODEL_MUTATION_KINDS`; ``target`` the output tensor name of the node the
    mutation attaches to (the tensor an insertion reads); ``operands`` the two tensors of a UOC zero;
    ``garbage`` the op kinds of the garbage subgraph (``"Conv"``, ``"MatMul"``, ``"Gemm"``, ``"Add"``,
    ``"Sub"``, ``"Mul"``); ``params`` a spec-edge change (``{"op": ..., "changes": [...]}``) or an
    insertion (``{"op": ..., "opset": ..., "nodes": [...], "exports": [...]}``); ``seed`` fixes
    generated weights and fresh names. Everything is JSON-able, so a record replays the same model.
    """

    kind: str
    target: str
    operands: tuple[str, ...] = ()
    garbage: tuple[str, ...] = ()
    params: dict[str, Any] = dataclasses.field(default_factory=dict)
    seed: int = 0

    def label(self) -> str:
        """``uoc@t(i,j)[Conv+Add]``, ``pioc@t[Mul]``, ``edge@t[Op: k=v; ...]`` or ``insert@t[Op v18]``."""
        text = f"{self.kind}@{self.target}"
        if self.operands:
            text += "(" + ",".join(self.operands) + ")"
        if self.garbage:
            text += "[" + "+".join(self.garbage) + "]"
        if "nodes" in self.params:
            opset = self.params.get("opset")
            text += f"[{self.params.get('op', '?')}{f' v{opset}' if opset else ''}]"
        elif self.params:
            changes = "; ".join(f"{c.get('attr', c.get('input'))}={c.get('value')!r}"[:40]
                                for c in self.params.get("changes", ()))
            text += f"[{self.params.get('op', '')}: {changes}]"
        return text

    def to_json(self) -> dict[str, Any]:
        """JSON-friendly form (lists for the tuples)."""
        return {"kind": self.kind, "target": self.target, "operands": list(self.operands),
                "garbage": list(self.garbage), "params": dict(self.params), "seed": self.seed}

    @staticmethod
    def from_json(data: dict[str, Any]) -> ModelMutation:
        """Inverse of :meth:`to_json` (unknown keys are ignored)."""
        return ModelMutation(str(data["kind"]), str(data["target"]), tuple(str(x) for x in data.get("operands") or ()),
                             tuple(str(x) for x in data.get("garbage") or ()), dict(data.get("params") or {}),
                             int(data.get("seed", 0)))


GraphSpec = tuple[str, str, tuple[int, ...]]
"""One graph input: name, numpy dtype name, concrete shape."""


@dataclasses.dataclass(frozen=True)
class GraphCase:
    """One graph-level test case (see the module docstring).

    ``exact`` off loosens the comparison by :data:`INEXACT_SLACK` (a pass of the sequence changes
    floating results by design). ``timeout`` bounds a reproducer that expects a hang.
    """

    specs: tuple[GraphSpec, ...]
    passes: tuple[GraphPass, ...] = ()
    model_mutations: tuple[ModelMutation, ...] = ()
    """Applied to the model, in order, before it is imported (:mod:`seedzer.kernel.graph.model_mutations`)."""
    model: str | None = None
    model_file: str | None = None
    input_seed: int = GRAPH_INPUT_SEED
    input_mode: str = RANDOM_INPUTS
    """How the inputs are drawn (one of :data:`INPUT_MODES`)."""
    target: Any = "llvm"
    exact: bool = True
    timeout: float = 300.0
    expected: Observation | None = None

    def to_json(self) -> dict[str, Any]:
        """JSON-friendly form (what ``case.json`` and a reproducer's ``CASE`` hold)."""
        data = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        data["specs"] = [[name, dtype, list(shape)] for name, dtype, shape in self.specs]
        data["passes"] = [p.to_json() for p in self.passes]
        data["model_mutations"] = [m.to_json() for m in self.model_mutations]
        data["expected"] = self.expected.to_json() if self.expected else None
        return data

    @staticmethod
    def from_json(data: dict[str, Any]) -> GraphCase:
        """Inverse of :meth:`to_json` (unknown keys are ignored)."""
        known = {f.name for f in dataclasses.fields(GraphCase)}
        kwargs = {k: v for k, v in data.items() if k in known}
        kwargs["specs"] = tuple((str(n), str(d), tuple(int(x) for x in s)) for n, d, s in data["specs"])
        kwargs["passes"] = tuple(GraphPass.from_json(p) for p in data.get("passes") or ())
        kwargs["model_mutations"] = tuple(ModelMutation.from_json(m) for m in data.get("model_mutations") or ())
        kwargs["expected"] = Observation.from_json(data["expected"]) if data.get("expected") else None
        return GraphCase(**kwargs)

    def with_model(self, data: bytes) -> GraphCase:
        """The same case with ``data`` embedded as its model."""
        return dataclasses.replace(self, model=base64.b64encode(data).decode(), model_file=None)

    def with_passes(self, passes: tuple[GraphPass, ...]) -> GraphCase:
        """The same case with another pass sequence."""
        return dataclasses.replace(self, passes=tuple(passes))

    @property
    def mutates_semantics(self) -> bool:
        """Whether a model mutation changed what the model computes (a spec-edge change, an inserted
        operator): the mutant must then be valid by the specification's engines."""
        return any(m.kind in DIFFERENTIAL_KINDS for m in self.model_mutations)

    @property
    def differential(self) -> bool:
        """Whether the case is judged against the specification's engines on the model it builds
        (a model mutation changed what the model computes, or the inputs are special), not against
        TVM's default pipeline on the seed model."""
        return self.mutates_semantics or self.input_mode != RANDOM_INPUTS
