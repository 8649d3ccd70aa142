"""Fill a pool: seeds per attempt, serial or parallel workers, resume, progress, summary.

Attempt ``i`` of a run with seed ``S`` uses NNSmith seed :func:`derive_seed` ``(S, i)``. Results
are committed in attempt order whatever the number of jobs, so a pool's content depends only on
the heuristic, the seed and the count. Every attempt, kept or rejected, is recorded in the
manifest, so a re-run skips the attempts already made and continues to the requested count.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import itertools
import multiprocessing
import time
from collections import Counter, deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from seedzer.errors import ConfigError, PoolError
from seedzer.generate.errors import GenerationError, Rejected
from seedzer.generate.heuristics import Heuristic, candidate_target, load_heuristic
from seedzer.generate.options import GenerationOptions, generation_from_dict
from seedzer.generate.progress import ProgressBar
from seedzer.generate.seed_pool import MANIFEST, PoolWriter, read_manifest, refuse_foreign
from seedzer.protocols import GeneratedModel, Generator
from seedzer.store.lock import DirLock

GIVE_UP_AFTER = 50  # attempts without a single model before a run is declared impossible
ATTEMPTS_PER_MODEL = 20  # a run stops after this many attempts per missing model


@dataclass
class GenerateSummary:
    """What one ``generate_pool`` call did."""

    made: int
    rejected: dict[str, int]
    seconds: float
    out: Path
    total: int = 0
    requested: int = 0
    attempts: int = 0
    heuristic: str = ""
    notes: list[str] = field(default_factory=list)

    @property
    def models_per_min(self) -> float:
        """Models made per minute of wall-clock time in this run."""
        return 60.0 * self.made / self.seconds if self.seconds > 0 else 0.0


@dataclass
class AttemptResult:
    """One attempt's outcome: a model, or a rejection reason."""

    index: int
    seed: int
    model: GeneratedModel | None = None
    reason: str = ""
    detail: str = ""


def derive_seed(seed: int, index: int) -> int:
    """The NNSmith seed of attempt ``index`` of a run seeded ``seed`` (32 bits, stable)."""
    digest = hashlib.sha256(f"seedzer:{seed}:{index}".encode()).digest()
    return int.from_bytes(digest[:4], "big")


def run_attempt(produce: Callable[[int], GeneratedModel], index: int, seed: int) -> AttemptResult:
    """Call ``produce(seed)``; rejections and unexpected errors become counted reasons."""
    try:
        return AttemptResult(index, seed, model=produce(seed))
    except Rejected as exc:
        return AttemptResult(index, seed, reason=exc.reason, detail=exc.detail)
    except Exception as exc:  # a generator bug on one seed must not end the run
        return AttemptResult(index, seed, reason=f"error: {type(exc).__name__}", detail=str(exc)[:300])


# ---- worker side (spawned processes) ---------------------------------------------------------

_WORKER: Generator | None = None


def _init_worker(opts: dict[str, Any], cache_dir: str) -> None:
    global _WORKER
    from seedzer.generate.nnsmith_adapter import NNSmithGenerator

    _WORKER = NNSmithGenerator(generation_from_dict(opts), Path(cache_dir))


def _work(index: int, seed: int) -> AttemptResult:
    assert _WORKER is not None, "the pool's initializer makes the worker's generator"
    return run_attempt(_WORKER.generate, index, seed)


def _parallel(
    jobs: int, opts: GenerationOptions, cache_dir: Path, todo: Iterator[int], seed: int
) -> Iterator[AttemptResult]:
    """Results of attempts ``todo`` computed by ``jobs`` spawned workers, yielded in order."""
    ctx = multiprocessing.get_context("spawn")  # never fork a process that imported torch
    pool = ProcessPoolExecutor(
        jobs, mp_context=ctx, initializer=_init_worker, initargs=(opts.to_dict(), str(cache_dir))
    )
    pending: deque[Future[AttemptResult]] = deque()
    try:
        for index in itertools.islice(todo, 4 * jobs):
            pending.append(pool.submit(_work, index, derive_seed(seed, index)))
        while pending:
            try:
                result = pending.popleft().result()
            except BrokenProcessPool:
                raise GenerationError("a generation worker died (out of memory or crashed); re-run to resume") from None
            for index in itertools.islice(todo, 1):
                pending.append(pool.submit(_work, index, derive_seed(seed, index)))
            yield result
    finally:
        for fut in pending:
            fut.cancel()
        pool.shutdown(wait=False, cancel_futures=True)


def _serial(produce: Callable[[int], GeneratedModel], todo: Iterator[int], seed: int,
            pace: Callable[[], object] | None = None) -> Iterator[AttemptResult]:
    for index in todo:
        if pace is not None:  # a CPU-share governor: sleeps between attempts
            pace()
        yield run_attempt(produce, index, derive_seed(seed, index))


# ---- the fill loop ---------------------------------------------------------------------------


def _nothing_made(name: str, attempts: int, rejected: Counter[str]) -> GenerationError:
    top = "; ".join(f"{r} x{n}" for r, n in rejected.most_common(3))
    return GenerationError(f"heuristic {name}: no valid model after {attempts} attempts ({top})")


def _fill(
    writer: PoolWriter, target: int, results: Iterator[AttemptResult], bar: ProgressBar, name: str, limit: int
) -> tuple[int, Counter[str], int]:
    """Commit results until the pool holds ``target`` models or ``limit`` attempts were made."""
    made, attempts, rejected = 0, 0, Counter[str]()
    if writer.count >= target:
        return made, rejected, attempts
    try:
        for res in results:
            attempts += 1
            if res.model is not None and writer.add_model(res.index, res.seed, res.model) is not None:
                made += 1
            elif res.model is not None:
                rejected["duplicate"] += 1
            else:
                writer.add_rejected(res.index, res.seed, res.reason, res.detail)
                rejected[res.reason] += 1
            bar.update(writer.count, sum(rejected.values()))
            if writer.count >= target:
                break
            if writer.count == 0 and attempts >= min(GIVE_UP_AFTER, limit):
                raise _nothing_made(name, attempts, rejected)
            if attempts >= limit:
                break
        if writer.count == 0 and attempts:
            raise _nothing_made(name, attempts, rejected)
    finally:
        close = getattr(results, "close", None)
        if close is not None:
            close()
    return made, rejected, attempts


def _tools() -> dict[str, str]:
    out = {}
    for pkg in ("nnsmith", "torch", "onnx", "onnxruntime", "z3-solver"):
        try:
            out[pkg] = importlib.metadata.version(pkg)
        except importlib.metadata.PackageNotFoundError:
            out[pkg] = "missing"
    return out


def _results(
    opts: GenerationOptions, writer: PoolWriter, *, jobs: int, seed: int, cache_dir: Path, source: str,
    first_index: int = 0, pace: Callable[[], object] | None = None, varied: dict[str, float] | None = None,
) -> Iterator[AttemptResult]:
    """The attempts not yet in the pool, as results in attempt order (zoo, serial or parallel; with
    ``varied``, serial, each model with its own attribute values drawn with those weights:
    :class:`~seedzer.generate.attribute_arms.VariedGenerator`)."""
    if opts.source == "zoo":
        from seedzer.generate.zoo import zoo_model, zoo_models

        files = zoo_models(opts)
        return (
            run_attempt(functools.partial(zoo_model, files[i]), i, derive_seed(seed, i))
            for i in range(len(files))
            if i not in writer.tried
        )
    from seedzer.generate.nnsmith_adapter import NNSmithGenerator, build_opset, prepare_nnsmith

    todo = (i for i in itertools.count(first_index) if i not in writer.tried)
    try:  # fail fast, on one line naming the heuristic, when the options leave no op to use
        if varied is not None:
            from seedzer.generate.attribute_arms import VariedGenerator

            build_opset(prepare_nnsmith(cache_dir), opts)
            return _serial(VariedGenerator(opts, varied, cache_dir).generate, todo, seed, pace)
        if jobs > 1:
            build_opset(prepare_nnsmith(cache_dir), opts)
            return _parallel(jobs, opts, cache_dir, todo, seed)
        return _serial(NNSmithGenerator(opts, cache_dir).generate, todo, seed, pace)
    except Rejected as exc:
        raise ConfigError(f"{source}: generation: {exc.detail}") from None


def _generate_into(
    h: Heuristic,
    opts: GenerationOptions,
    pool_dir: Path,
    requested: int,
    *,
    jobs: int,
    seed: int,
    progress: bool,
    cache_dir: Path,
    limit: int | None,
    first_index: int = 0,
    pace: Callable[[], object] | None = None,
    varied: dict[str, float] | None = None,
) -> GenerateSummary:
    start = time.monotonic()
    header = {
        "heuristic": h.name,
        "heuristic_file": str(h.path),
        "generation": opts.to_dict(),
        "seed": seed,
        "tools": _tools(),
        "requested": requested,
        **({"attribute_weights": varied} if varied is not None else {}),
    }
    notes: list[str] = []
    target = requested
    if opts.source == "zoo":
        from seedzer.generate.zoo import zoo_models

        available = len(zoo_models(opts))
        if requested > available:
            notes.append(f"the zoo has {available} models; the pool holds all of them")
            target = available
    made, attempts, rejected = 0, 0, Counter[str]()
    with PoolWriter(pool_dir, header) as writer:
        missing = max(0, target - writer.count)
        if missing:
            with ProgressBar(f"{h.name} → {pool_dir}", target, enabled=progress) as bar:
                bar.update(writer.count, 0)
                results = _results(opts, writer, jobs=jobs, seed=seed, cache_dir=cache_dir, source=str(h.path),
                                   first_index=first_index, pace=pace, varied=varied)
                cap = limit if limit is not None else max(GIVE_UP_AFTER, ATTEMPTS_PER_MODEL * missing)
                made, rejected, attempts = _fill(writer, target, results, bar, h.name, cap)
        total = writer.count
    if total < target:
        notes.append(f"stopped after {attempts} attempts with {total} of {target} models")
    seconds = time.monotonic() - start
    return GenerateSummary(
        made, dict(rejected.most_common()), seconds, pool_dir, total, requested, attempts, h.name, notes
    )


def generate_pool(
    heuristic: str,
    count: int,
    out: Path,
    *,
    jobs: int = 1,
    seed: int = 0,
    max_nodes: int | None = None,
    progress: bool = True,
    cache_dir: Path | None = None,
    attempt_limit: int | None = None,
) -> GenerateSummary:
    """Generate (or resume) the pool ``out`` of ``count`` models for ``heuristic`` (name or path).

    Heuristics whose selection is not the identity generate ``oversample * count`` candidates into
    ``out/candidates`` and select ``count`` of them into ``out``. NNSmith's op-support cache goes to
    ``cache_dir`` (default: ``.nnsmith-cache`` next to ``out``). ``attempt_limit`` bounds the
    attempts of this run (default: 20 per missing model, at least 50).
    """
    from seedzer.config import MAX_JOBS, MAX_POOL

    if not 1 <= count <= MAX_POOL:
        raise ConfigError(f"--count: must be a positive integer of at most {MAX_POOL}, got {count}")
    if not 1 <= jobs <= MAX_JOBS:
        raise ConfigError(f"--jobs: must be a positive integer of at most {MAX_JOBS}, got {jobs}")
    h = load_heuristic(heuristic)
    opts = h.generation.with_max_nodes(max_nodes)
    out = Path(out)
    cache = Path(cache_dir) if cache_dir is not None else out.resolve().parent / ".nnsmith-cache"
    kwargs: dict[str, Any] = {
        "jobs": jobs,
        "seed": seed,
        "progress": progress,
        "cache_dir": cache,
        "limit": attempt_limit,
    }
    # Read-only checks first: a refused directory is left exactly as it was (not even a lock file).
    identity = {"heuristic": h.name, "generation": opts.to_dict(), "seed": seed}
    refuse_foreign(out)  # a directory of models without a manifest is not ours: refused, untouched
    if h.identity_selection:
        PoolWriter.check(out, identity)
    else:
        if (out / MANIFEST).exists() and "selected_from" not in read_manifest(out):
            raise PoolError(f"pool {out} already holds generated models; heuristic {h.name} selects, "
                            "so generate it into another directory")
        PoolWriter.check(out / "candidates", identity)
    with DirLock(out, what="pool"):  # held for the whole run: candidates and selection
        if h.identity_selection:
            return _generate_into(h, opts, out, count, **kwargs)
        from seedzer.generate.selection import select_pool

        target = candidate_target(h, count)
        summary = _generate_into(h, opts, out / "candidates", target, **kwargs)
        select_pool(h, out / "candidates", out, count, candidates=target)
        summary.total = len(read_manifest(out)["models"])
        summary.requested = count
        summary.out = out
        return summary


def generate_epoch_pool(h: Heuristic, opts: GenerationOptions, out: Path, count: int, *, seed: int, first_index: int,
                        cache_dir: Path, pace: Callable[[], object],
                        attributes: dict[str, float] | None = None) -> GenerateSummary:
    """Generate (or resume) a campaign epoch's pool ``out``: ``count`` models of ``opts`` (the heuristic's
    options with the epoch's learned weights), serially, ``pace`` called before every attempt (a CPU-share
    governor). Attempt indices start at ``first_index``, so the models of every epoch have names of their
    own (``model_<index>.onnx``). The heuristic's selection is not applied (every model made is kept).
    ``attributes``: the epoch's learned weights of attribute values; each model is then made with its own
    values (:mod:`seedzer.generate.attribute_arms`), recorded in its manifest entry."""
    from seedzer.generate.nnsmith_adapter import NNSmithGenerator  # noqa: F401  (fails early without NNSmith)

    out = Path(out)
    with DirLock(out, what="pool"):
        return _generate_into(h, opts, out, count, jobs=1, seed=seed, progress=False, cache_dir=cache_dir,
                              limit=None, first_index=first_index, pace=pace, varied=attributes)
