"""What loading ONNX models gives: options, one attempt's typed result, one model's result.

A model is loaded raw first and, when that yields no seeds, once more after ONNX constant folding
(:mod:`seedzer.load.folding`). Each attempt runs :func:`seedzer.load.attempt.run_attempt` (the
loader kernel's steps, :mod:`seedzer.kernel.load.observe`) in an isolated process
(:class:`seedzer.execute.isolated_load.OnnxLoader`) and returns an :class:`AttemptResult`; a
:class:`ModelLoad` gathers the attempts of one model. This module imports neither TVM nor onnx:
the campaign process reads these results.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from seedzer.kernel.common import Observation
from seedzer.load.bounds import Limits
from seedzer.protocols import LoadedSeed, LoadResult
from seedzer.seed import JointSeed

DEFAULT_INPUT_SEED = 20240601
"""Seed of the random inputs of the differential check (the loader kernel's ``INPUT_SEED``)."""

STEPS = ("parse", "fold", "import", "legalize", "fuse", "build", "run", "reference", "compare")
"""Steps of an attempt, in order: reading (and folding) the model, then the loader kernel's steps."""

SUBSTAGE = {"parse": "import", "fold": "import", "import": "import", "legalize": "legalize", "fuse": "legalize",
            "build": "build", "run": "run", "reference": "compare", "compare": "compare"}
"""The part of loading (import/legalize/build/run/compare) each step belongs to."""

MODEL_FILE = "model.onnx"
"""Name of the model in a load finding's folder (what an attempt's case refers to)."""


@dataclass(frozen=True)
class LoadOptions:
    """How to load: differential check on/off, folding retry, TVMScript round trip, target, input
    seed, limits. ``target`` is a kind (``llvm``) or a JSON object text such as
    ``{"kind": "llvm", "opt-level": 0}`` (faster builds)."""

    differential: bool = True
    fold: bool = True
    roundtrip: bool = True
    target: str = "llvm"
    input_seed: int = DEFAULT_INPUT_SEED
    timeout: float = 300.0
    max_fold_bytes: int = 256 << 20  # folding.DEFAULT_MAX_FOLDED_BYTES (not imported: it loads onnx)
    limits: Limits = field(default_factory=Limits)
    """Model bounds checked before anything runs, and the address space of each attempt's process."""


@dataclass(frozen=True)
class ScriptSeed:
    """One PrimFunc as TVMScript (named ``main``), the Relax function it was, and whether fused."""

    script: str
    op: str
    fused: bool


@dataclass
class AttemptResult:
    """One loading attempt (``raw`` or ``folded``) of one model.

    ``observations`` are its failures and ``invalid`` notes in step order; ``case`` is the loader
    kernel's case of this attempt in JSON form (:class:`seedzer.kernel.load.observe.LoadCase`, the model
    named :data:`MODEL_FILE`, no expected failure): what a finding's ``case.json`` is made from;
    ``model`` holds the model the attempt imported when it is not the file (the folded one);
    ``tracebacks`` the traceback of each failed step, ``log`` the output of an attempt that died.
    """

    attempt: str
    observations: list[Observation] = field(default_factory=list)
    seeds: list[ScriptSeed] = field(default_factory=list)
    reached: list[str] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)
    retryable: bool = True
    folded_nodes: int = 0
    nothing_to_fold: bool = False
    bound_dims: dict[str, list[int]] = field(default_factory=dict)
    matched: bool | None = None
    reference: str | None = None
    case: dict[str, Any] | None = None
    tracebacks: dict[str, str] = field(default_factory=dict)
    log: str = ""
    died: bool = False
    killed: bool = False
    """Its process was SIGKILLed from outside (an operator, the OOM killer): it says nothing about the model."""
    model: bytes | None = None

    def to_json(self) -> dict[str, Any]:
        """JSON form (the checkpoint an attempt leaves behind; ``model`` is not included)."""
        data = {k: v for k, v in self.__dict__.items() if k not in ("model", "observations", "seeds")}
        data["observations"] = [o.to_json() for o in self.observations]
        data["seeds"] = [[s.script, s.op, s.fused] for s in self.seeds]
        return data

    @staticmethod
    def from_json(data: dict[str, Any]) -> AttemptResult:
        """Inverse of :meth:`to_json`."""
        known = set(AttemptResult.__dataclass_fields__) - {"model", "observations", "seeds"}
        out = AttemptResult(**{k: v for k, v in data.items() if k in known})
        out.observations = [Observation.from_json(o) for o in data.get("observations", [])]
        out.seeds = [ScriptSeed(str(s), str(op), bool(f)) for s, op, f in data.get("seeds", [])]
        return out


@dataclass(frozen=True)
class LoaderFailure:
    """A bug observation of an attempt with what its finding folder needs: the attempt's case
    (JSON), the model it imported when that is not the file itself (folded) and its log."""

    observation: Observation
    attempt: str
    case: dict[str, Any]
    model: bytes | None = None
    log: str = ""


@dataclass
class ModelLoad(LoadResult):
    """A :class:`LoadResult` plus each attempt's result (``runs``) and what the load report needs:
    ``matched`` is the differential verdict of the last attempt (None when not checked)."""

    path: str = ""
    runs: list[AttemptResult] = field(default_factory=list)
    matched: bool | None = None
    reference: str | None = None
    folded_nodes: int = 0
    bound_dims: dict[str, list[int]] = field(default_factory=dict)

    @property
    def attempts(self) -> list[str]:
        """The attempts made, in order (``raw``, then ``folded``)."""
        return [r.attempt for r in self.runs]

    @property
    def reached(self) -> dict[str, list[str]]:
        """Steps each attempt completed."""
        return {r.attempt: r.reached for r in self.runs}

    @property
    def final_attempt(self) -> str:
        """The attempt whose result counts: the last one made (``raw`` if none)."""
        return self.attempts[-1] if self.runs else "raw"

    @property
    def killed(self) -> bool:
        """Whether an attempt was SIGKILLed from outside (then the load says nothing about the model)."""
        return any(r.killed for r in self.runs)

    def final_reached(self) -> list[str]:
        """Steps the final attempt completed."""
        return self.reached.get(self.final_attempt, [])

    def findings(self) -> list[Observation]:
        """Observations that are bugs (exception, crash, hang, mismatch), leaving out invalid inputs."""
        return [o for o in self.observations if o.symptom.is_bug]

    def failures(self) -> list[LoaderFailure]:
        """Every bug observation with its attempt's case, model and log (what a finding is made of);
        an attempt that died before it had a case (while reading the model) gives none."""
        out = []
        for run in self.runs:
            for obs in run.observations:
                if obs.symptom.is_bug and run.case is not None:
                    log = "\n".join(x for x in (run.tracebacks.get(obs.pass_name or ""), run.log) if x)
                    out.append(LoaderFailure(obs, run.attempt, run.case, run.model, log))
        return out

    def merge(self, run: AttemptResult) -> None:
        """Add one attempt's result."""
        self.runs.append(run)
        self.observations.extend(run.observations)
        for step, secs in run.timings.items():
            self.timings[step] = self.timings.get(step, 0.0) + float(secs)
        seen = {s.seed.script for s in self.seeds}
        for s in run.seeds:
            if s.script not in seen:
                seen.add(s.script)
                self.seeds.append(LoadedSeed(JointSeed(s.script, [], self.model), op=s.op, fused=s.fused))
        self.matched, self.reference = run.matched, run.reference
        self.folded_nodes = max(self.folded_nodes, run.folded_nodes)
        self.bound_dims = dict(run.bound_dims or self.bound_dims)


class ModelLoader(Protocol):
    """Anything that loads one model path into a :class:`ModelLoad`."""

    def load(self, path: Path) -> ModelLoad:
        """Load ``path``."""
        ...


def pool_models(pool: Path) -> list[Path]:
    """Model files of a pool directory: manifest order when ``manifest.json`` lists ``models[].file``,
    else ``*.onnx`` sorted by name. Listed files that do not exist are still returned (the loader
    reports them as unreadable)."""
    manifest = pool / "manifest.json"
    if manifest.is_file():
        try:
            data = json.loads(manifest.read_text())
        except ValueError:
            data = None
        models = data.get("models") if isinstance(data, dict) else None
        if isinstance(models, list):
            files = [m["file"] for m in models if isinstance(m, dict) and isinstance(m.get("file"), str)]
            if files:
                return [pool / f for f in files]
    return sorted(pool.glob("*.onnx"))


def load_all(loader: ModelLoader, paths: Iterable[Path], jobs: int = 1,
             on_result: Callable[[ModelLoad], None] | None = None) -> list[ModelLoad]:
    """Load every path with up to ``jobs`` isolated attempts in parallel; results in input order."""
    paths = list(paths)
    if jobs <= 1:
        results = []
        for p in paths:
            r = loader.load(p)
            if on_result:
                on_result(r)
            results.append(r)
        return results
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        futures = [pool.submit(loader.load, p) for p in paths]
        out = []
        for fut in futures:
            r = fut.result()
            if on_result:
                on_result(r)
            out.append(r)
        return out
