"""Soundness of the model mutations (UOC, PIOC, spec-edge) on a pool of ONNX models, under onnxruntime.

Usage::

    python benchmarks/model_mutation_soundness.py --pool DIR [--count 1000] [--seed 0]

``--count`` chains of 1-5 UOC/PIOC mutations (a third UOC only, a third PIOC only, a third
mixed; each sampled on the model mutated so far, as MT-DLComp iterates) are applied to random pool
models; each mutated model must pass ``onnx.checker.check_model(full_check=True)`` and give the
seed's onnxruntime outputs: on another random input than the one the chain was applied with for
UOC-only chains, on the profiled input for chains with a PIOC. Outputs are compared bit for bit
(NaN equal) and within the loader's ``TOLERANCES``. Then ``--count`` spec-edge samples: each record
the sampler returns is re-applied and must pass the full check, strict shape inference and run on
onnxruntime. Prints the counts and failures by reason (figures, never asserted).
"""

from __future__ import annotations

import random
import sys
import time
from collections import Counter
from pathlib import Path

import click
import numpy as np
import onnx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from seedzer.kernel.graph.case import ModelMutation
from seedzer.kernel.graph.mutant import apply_model_mutations
from seedzer.kernel.load.observe import onnxruntime_outputs
from seedzer.kernel.onnx.model import TOLERANCES
from seedzer.mutate.graph.model_mutators import random_feeds, sample_model_mutation


def _reason(exc: BaseException) -> str:
    """``Type: first line`` of an exception, names and numbers kept short."""
    return f"{type(exc).__name__}: {str(exc).strip().splitlines()[0][:110] if str(exc).strip() else ''}"


def _close(expected: list[np.ndarray], actual: list[np.ndarray]) -> tuple[bool, bool, float]:
    """(bitwise equal, within TOLERANCES, largest absolute difference) of two output lists."""
    exact, close, worst = True, True, 0.0
    for e, a in zip(expected, actual, strict=True):
        if e.shape != a.shape or e.dtype != a.dtype:
            return False, False, float("inf")
        same = np.array_equal(e, a, equal_nan=e.dtype.kind in "fc")
        exact &= same
        if not same and e.dtype.kind == "f":
            rtol, atol = TOLERANCES.get(str(e.dtype), (0.0, 0.0))
            close &= bool(np.allclose(a, e, rtol=rtol, atol=atol, equal_nan=True))
            finite = np.isfinite(e) & np.isfinite(a)
            worst = max(worst, float(np.max(np.abs(e - a)[finite], initial=0.0)))
        elif not same:
            close = False
    return exact, close, worst


def _chains(models: list[tuple[str, onnx.ModelProto]], count: int, rng: random.Random) -> None:
    """Apply ``count`` random UOC/PIOC chains and check the outputs against the seeds'."""
    tally: Counter[str] = Counter()
    failures: Counter[str] = Counter()
    nodes: list[int] = []
    worst = 0.0
    for _ in range(count):
        path, model = rng.choice(models)
        feeds = random_feeds(model, rng.getrandbits(31))
        chain: list[ModelMutation] = []
        current, mode = model, rng.choice(["uoc", "pioc", "mixed"])
        try:
            for _step in range(rng.randint(1, 5)):
                record = sample_model_mutation(current, rng.choice(["uoc", "pioc"]) if mode == "mixed" else mode, rng)
                if record is None:
                    break
                chain.append(record)
                current = apply_model_mutations(current, [record], feeds)
            if not chain:
                tally["no target"] += 1
                continue
            replay = apply_model_mutations(model, chain, feeds)
            if replay.SerializeToString() != current.SerializeToString():
                failures["replay differs from step-by-step application"] += 1
            onnx.checker.check_model(replay, full_check=True)
            pioc = any(m.kind == "pioc" for m in chain)
            check = feeds if pioc else random_feeds(model, rng.getrandbits(31))
            exact, close, diff = _close(onnxruntime_outputs(model, check), onnxruntime_outputs(replay, check))
        except Exception as exc:
            failures[f"{path}: {_reason(exc)}"[:160]] += 1
            continue
        key = "uoc-only" if not pioc else "pioc-only" if all(m.kind == "pioc" for m in chain) else "uoc+pioc"
        tally[f"{key} chains"] += 1
        tally[f"{key} bitwise equal"] += exact
        tally[f"{key} within tolerance"] += close
        tally["mutations"] += len(chain)
        nodes.append(len(replay.graph.node) - len(model.graph.node))
        worst = max(worst, diff)
        if not close:
            failures[f"{key} outputs differ ({path}, {' '.join(m.label()[:60] for m in chain)})"] += 1
    print(f"UOC/PIOC chains: {count}")
    for key, value in sorted(tally.items()):
        print(f"  {key}: {value}")
    if nodes:
        print(f"  nodes added per chain: median {int(np.median(nodes))}, max {max(nodes)}; "
              f"largest |difference| {worst:.3g}")
    print(f"  failures: {sum(failures.values())}")
    for reason, n in failures.most_common(20):
        print(f"    {n:5d}  {reason}")


def _edges(models: list[tuple[str, onnx.ModelProto]], count: int, rng: random.Random) -> None:
    """Sample ``count`` spec-edge records and re-check each against the full checker and onnxruntime."""
    tally: Counter[str] = Counter()
    failures: Counter[str] = Counter()
    ops: Counter[str] = Counter()
    for _ in range(count):
        path, model = rng.choice(models)
        feeds = random_feeds(model, rng.getrandbits(31))
        record = sample_model_mutation(model, "edge", rng, feeds)
        if record is None:
            tally["no valid candidate"] += 1
            continue
        tally["sampled"] += 1
        ops[record.params["op"] + ":" + ",".join(str(c.get("attr", f"input{c.get('input')}"))
                                                  for c in record.params["changes"])] += 1
        try:
            mutated = apply_model_mutations(model, [record], feeds)
            onnx.checker.check_model(mutated, full_check=True)
            onnx.shape_inference.infer_shapes(mutated, strict_mode=True)
            onnxruntime_outputs(mutated, feeds)
            again = apply_model_mutations(model, [ModelMutation.from_json(record.to_json())], feeds)
            if again.SerializeToString() != mutated.SerializeToString():
                failures["JSON replay differs"] += 1
            tally["check + onnxruntime ok"] += 1
        except Exception as exc:
            failures[f"{path}: {record.label()[:60]}: {_reason(exc)}"[:160]] += 1
    print(f"spec-edge samples: {count}")
    for key, value in sorted(tally.items()):
        print(f"  {key}: {value}")
    print(f"  distinct changes: {len(ops)}; most common: " + ", ".join(f"{k} {v}" for k, v in ops.most_common(12)))
    print(f"  failures: {sum(failures.values())}")
    for reason, n in failures.most_common(20):
        print(f"    {n:5d}  {reason}")


@click.command()
@click.option("--pool", "pool", type=click.Path(exists=True, file_okay=False, path_type=Path), required=True)
@click.option("--count", default=1000, show_default=True, help="chains, and spec-edge samples")
@click.option("--seed", default=0, show_default=True)
def main(pool: Path, count: int, seed: int) -> None:
    """Check UOC/PIOC chains and spec-edge samples on the pool's models (see the module docstring)."""
    models = [(p.name, onnx.load(str(p))) for p in sorted(pool.glob("*.onnx"))]
    if not models:
        raise click.ClickException(f"no .onnx model in {pool}")
    rng = random.Random(seed)
    start = time.perf_counter()
    _chains(models, count, rng)
    print(f"  ({time.perf_counter() - start:.1f} s)")
    start = time.perf_counter()
    _edges(models, count, rng)
    print(f"  ({time.perf_counter() - start:.1f} s)")


if __name__ == "__main__":
    main()
