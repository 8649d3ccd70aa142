"""The ONNX loader: raw model first, constant-folded model on failure, each attempt isolated.

The campaign-side half: it never imports TVM (nor onnx). Every attempt runs
:func:`seedzer.load.worker.run_attempt` in a process forked from the zygote, so a segfault or a hang
in TVM's importer becomes a loader finding instead of a dead campaign.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import tempfile
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from seedzer.execute.isolated import run_isolated
from seedzer.load.compare import INPUT_SEED
from seedzer.load.worker import LOG_FILE, PARTIAL_FILE, STEP_FILE, finding, run_attempt
from seedzer.outcome import Outcome, Stage
from seedzer.protocols import LoadedSeed, LoadResult
from seedzer.seed import JointSeed

DEFAULT_INPUT_SEED = INPUT_SEED
"""Seed of the random inputs of the differential check."""


@dataclass(frozen=True)
class LoadOptions:
    """How to load: differential check on/off, folding retry, target, input seed, limits.

    ``target`` is a TVM target kind (``llvm``) or a JSON dict string, e.g.
    ``{"kind": "llvm", "opt-level": 0}`` for faster builds.
    """

    differential: bool = True
    fold: bool = True
    roundtrip: bool = True
    target: str = "llvm"
    input_seed: int = DEFAULT_INPUT_SEED
    timeout: float = 300.0
    max_fold_bytes: int = 256 << 20  # folding.DEFAULT_MAX_FOLDED_BYTES (not imported: it loads onnx)

    def worker_options(self) -> dict[str, Any]:
        """The options the worker reads, as plain data."""
        return {
            "differential": self.differential,
            "roundtrip": self.roundtrip,
            "target": self.target,
            "input_seed": self.input_seed,
            "max_fold_bytes": self.max_fold_bytes,
        }


@dataclass
class ModelLoad(LoadResult):
    """A :class:`LoadResult` plus what the load report needs about each attempt.

    ``reached`` maps an attempt (``raw``/``folded``) to the steps it completed; ``matched`` is the
    differential verdict of the attempt that produced the seeds (None when not checked);
    ``folded_model`` holds the folded ONNX bytes only when a mismatch needs them for a reproducer.
    """

    path: str = ""
    attempts: list[str] = field(default_factory=list)
    reached: dict[str, list[str]] = field(default_factory=dict)
    matched: bool | None = None
    reference: str | None = None
    folded_nodes: int = 0
    bound_dims: dict[str, list[int]] = field(default_factory=dict)
    folded_model: bytes | None = None

    @property
    def final_attempt(self) -> str:
        """The attempt whose result counts: the last one made (``raw`` if none)."""
        return self.attempts[-1] if self.attempts else "raw"

    def final_reached(self) -> list[str]:
        """Steps the final attempt completed."""
        return self.reached.get(self.final_attempt, [])

    def findings(self) -> list[Outcome]:
        """Outcomes that are bugs (exception, crash, hang, mismatch), leaving out invalid inputs."""
        return [o for o in self.outcomes if o.symptom.is_bug]


def _read_text(path: Path, limit: int) -> str:
    try:
        return path.read_text(errors="replace")[-limit:]
    except OSError:
        return ""


def _died(outcome: Outcome, attempt: str, workdir: Path) -> dict[str, Any]:
    """Attempt data for a worker that crashed, hung or raised outside its own error handling."""
    data: dict[str, Any] = {"attempt": attempt, "seeds": [], "outcomes": [], "timings": {}, "reached": []}
    partial = workdir / PARTIAL_FILE
    if partial.is_file():
        with contextlib.suppress(ValueError, OSError):
            data = json.loads(partial.read_text())
    step = _read_text(workdir / STEP_FILE, 100).strip() or "parse"
    detail = {k: v for k, v in outcome.detail.items() if k == "traceback"}
    detail["log"] = _read_text(workdir / LOG_FILE, 3000)
    data.setdefault("outcomes", []).append(finding(outcome.symptom.value, step, attempt, outcome.message, **detail))
    data["retryable"] = True
    data["died"] = True
    return data


class OnnxLoader:
    """Loads ONNX models into PrimFunc joint seeds (implements the ``Loader`` protocol).

    With ``isolate`` (the default) each attempt runs in a forked child; without it, in this process
    (only for debugging: a TVM crash then kills the caller). ``attempt_fn`` replaces
    :func:`~seedzer.load.worker.run_attempt` (same signature, module-level so it pickles); tests use
    it to exercise crashes and hangs.
    """

    def __init__(
        self,
        options: LoadOptions | None = None,
        isolate: bool = True,
        attempt_fn: Callable[[str, str, dict[str, Any], str | None], dict[str, Any]] = run_attempt,
    ) -> None:
        self.options = options or LoadOptions()
        self.isolate = isolate
        self.attempt_fn = attempt_fn

    def _attempt(self, path: Path, attempt: str) -> dict[str, Any]:
        opts = self.options.worker_options()
        if not self.isolate:
            return self.attempt_fn(str(path), attempt, opts, None)
        workdir = Path(tempfile.mkdtemp(prefix="seedzer-load-"))
        try:
            res = run_isolated(
                self.attempt_fn, str(path), attempt, opts, str(workdir), timeout=self.options.timeout, stage=Stage.LOAD
            )
            if res.outcome is not None:
                return _died(res.outcome, attempt, workdir)
            value: dict[str, Any] = res.value
            return value
        finally:
            shutil.rmtree(workdir, ignore_errors=True)

    def load(self, path: Path) -> ModelLoad:
        """Load one model: raw first; if that yields no seeds, retry on the constant-folded model."""
        path = Path(path)
        result = ModelLoad(model=path.name, path=str(path))
        raw = self._attempt(path, "raw")
        _merge(result, raw, path.name)
        if result.seeds or not self.options.fold or not raw.get("retryable", True):
            return result
        folded = self._attempt(path, "folded")
        if folded.get("nothing_to_fold"):
            result.timings["fold"] = result.timings.get("fold", 0.0) + folded.get("timings", {}).get("fold", 0.0)
            return result
        _merge(result, folded, path.name)
        result.folded = True
        return result


def _merge(result: ModelLoad, data: dict[str, Any], origin: str) -> None:
    """Fold one attempt's plain-data result into ``result``."""
    attempt = str(data.get("attempt", "raw"))
    result.attempts.append(attempt)
    result.reached[attempt] = list(data.get("reached", []))
    result.outcomes.extend(Outcome.from_dict(o) for o in data.get("outcomes", []))
    for step, secs in data.get("timings", {}).items():
        result.timings[step] = result.timings.get(step, 0.0) + float(secs)
    seen = {s.seed.script for s in result.seeds}
    for s in data.get("seeds", []):
        if s["script"] in seen:
            continue
        seen.add(s["script"])
        result.seeds.append(LoadedSeed(JointSeed(s["script"], [], origin), op=s["op"], fused=bool(s["fused"])))
    result.matched = data.get("matched")
    result.reference = data.get("reference")
    result.folded_nodes = max(result.folded_nodes, int(data.get("folded_nodes", 0)))
    result.bound_dims = dict(data.get("bound_dims") or result.bound_dims)
    if data.get("folded_model"):
        result.folded_model = data["folded_model"]


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


def load_all(
    loader: OnnxLoader,
    paths: Iterable[Path],
    jobs: int = 1,
    on_result: Callable[[ModelLoad], None] | None = None,
) -> list[ModelLoad]:
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
