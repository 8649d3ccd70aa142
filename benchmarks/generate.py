"""Benchmark seed generation: models/min on one core for float32 models of 5, 10 and 20 nodes.

Usage::

    python benchmarks/generate.py [--seconds 30] [--nodes 5 --nodes 10 --nodes 20] [--heuristic basic]

Each size runs one in-process NNSmith generator (torch on one thread, as a ``--jobs`` worker
does) for the given wall-clock budget after a warm-up, writing every model into a temporary pool
exactly as ``seedzer generate`` does (ONNX, reference .npz, manifest). Rates count kept models,
per wall-clock minute and per CPU-minute of this process (the latter is what one core delivers
when the machine is shared); rejections are listed by reason. Target: >= 500 models/min/core at
10 nodes.
"""

from __future__ import annotations

import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import click
from rich.console import Console
from rich.table import Table

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from seedzer.generate.driver import derive_seed, run_attempt
from seedzer.generate.heuristics import load_heuristic
from seedzer.generate.seed_pool import PoolWriter

TARGET_AT_10 = 500.0


def bench_size(heuristic: str, nodes: int, seconds: float, cache_dir: Path, workdir: Path) -> dict[str, object]:
    """Generate for ``seconds`` at ``nodes`` nodes; return kept/attempts/rate/rejections."""
    from seedzer.generate.nnsmith_adapter import NNSmithGenerator

    h = load_heuristic(heuristic)
    opts = h.generation.with_max_nodes(nodes)
    t0 = time.perf_counter()
    gen = NNSmithGenerator(opts, cache_dir)
    run_attempt(gen.generate, -1, derive_seed(99, nodes))  # warm-up: first-call costs in torch/ORT
    startup = time.perf_counter() - t0
    header = {"heuristic": h.name, "generation": opts.to_dict(), "seed": 0}
    rejected: Counter[str] = Counter()
    kept = attempts = 0
    with PoolWriter(workdir / f"pool{nodes}", header) as writer:
        start, cpu_start = time.perf_counter(), time.process_time()
        while time.perf_counter() - start < seconds:
            res = run_attempt(gen.generate, attempts, derive_seed(0, attempts))
            if res.model is not None and writer.add_model(attempts, res.seed, res.model) is not None:
                kept += 1
            else:
                reason = res.reason or "duplicate"
                rejected[reason] += 1
                if res.model is None:
                    writer.add_rejected(attempts, res.seed, reason, res.detail)
            attempts += 1
        elapsed = time.perf_counter() - start
        cpu = time.process_time() - cpu_start
    return {
        "nodes": nodes,
        "kept": kept,
        "attempts": attempts,
        "seconds": elapsed,
        "rate": 60.0 * kept / elapsed,
        "cpu_rate": 60.0 * kept / max(cpu, 1e-9),
        "startup": startup,
        "rejected": dict(rejected.most_common()),
    }


@click.command()
@click.option("--seconds", type=float, default=30.0, show_default=True, help="Measured time per size.")
@click.option("--nodes", "sizes", type=int, multiple=True, help="Sizes to measure [default: 5, 10, 20].")
@click.option("--heuristic", default="basic", show_default=True, help="Heuristic whose generation options to use.")
def main(seconds: float, sizes: tuple[int, ...], heuristic: str) -> None:
    """Print models/min per core at each size."""
    console = Console()
    results = []
    with tempfile.TemporaryDirectory(prefix="seedzer-bench-") as tmp:
        work = Path(tmp)
        for nodes in sizes or (5, 10, 20):
            r = bench_size(heuristic, nodes, seconds, work / "cache", work)
            results.append(r)
            console.print(
                f"{nodes:>3} nodes: {r['rate']:.0f} models/min wall, {r['cpu_rate']:.0f} per CPU-minute "
                f"({r['kept']} kept of {r['attempts']} "
                f"in {r['seconds']:.0f}s; start-up {r['startup']:.1f}s; rejected {r['rejected'] or 'none'})"
            )
    table = Table(title=f"seed generation, heuristic {heuristic}, one core, float32")
    for col in ("nodes", "models/min (wall)", "models/CPU-min", "kept", "attempts", "rejected"):
        table.add_column(col, justify="right" if col != "rejected" else "left")
    for r in results:
        rej = ", ".join(f"{k}: {v}" for k, v in r["rejected"].items()) or "none"  # type: ignore[attr-defined]
        table.add_row(
            str(r["nodes"]), f"{r['rate']:.0f}", f"{r['cpu_rate']:.0f}", str(r["kept"]), str(r["attempts"]), rej
        )
    console.print(table)
    at10 = [r for r in results if r["nodes"] == 10]
    if at10:
        ok = "meets" if float(at10[0]["rate"]) >= TARGET_AT_10 else "misses"  # type: ignore[arg-type]
        console.print(f"10 nodes: {float(at10[0]['rate']):.0f} models/min/core {ok} the {TARGET_AT_10:.0f} target")  # type: ignore[arg-type]


if __name__ == "__main__":
    main()
