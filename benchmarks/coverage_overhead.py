"""Benchmark the breakpoints coverage backend on the import+compile workload.

Usage::

    python benchmarks/coverage_overhead.py [--processes 3] [--rounds 4] [--rebuild] [--json FILE]

Prints: the block table's first build time (``--rebuild`` times a real build into a temporary cache;
otherwise the time recorded when the cached table was built), the cache hit time, a demonstration
of invalidation (a copy of the library with one byte of ``.comment`` flipped gets a new table), and,
from ``--processes`` fresh processes per mode run alternately, each running the workload of
:mod:`seedzer.coverage.workload` ``--rounds`` times: the warm slowdown (median of rounds 2..N with
breakpoints over without), the first-run cost, blocks reached (TVM / LLVM) and the run-to-run noise
of the plain workload. No thresholds are asserted: the figures are for the README.
"""

from __future__ import annotations

import json
import shutil
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import click

from seedzer.coverage.blocktable import DEFAULT_CACHE, load_or_build, tvm_compiler_library
from seedzer.coverage.elf import ElfFile
from seedzer.coverage.selftest import compare, run_workload


def table_figures(rebuild: bool) -> dict[str, Any]:
    """First build time, cache hit time and the invalidation demonstration."""
    lib = tvm_compiler_library()
    out: dict[str, Any] = {}
    if rebuild:
        with tempfile.TemporaryDirectory() as tmp:
            t = time.perf_counter()
            table = load_or_build(lib, tmp, "blocks", progress=True)
            out["first_build_s"] = round(time.perf_counter() - t, 1)
    else:
        table = load_or_build(lib, DEFAULT_CACHE, "blocks", progress=True)
        out["first_build_s"] = table.meta.build_seconds
    out["blocks"] = table.meta.blocks
    out["llvm_blocks"] = table.meta.llvm_blocks
    hits = []
    for _ in range(5):
        t = time.perf_counter()
        load_or_build(lib, DEFAULT_CACHE, "blocks", progress=False)
        hits.append(time.perf_counter() - t)
    out["cache_hit_ms"] = round(1000 * statistics.median(hits), 2)
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / lib.name
        shutil.copy(lib, copy)
        cache = Path(tmp) / "cache"
        t = time.perf_counter()
        first = load_or_build(copy, cache, "functions", progress=False)
        miss = time.perf_counter() - t
        t = time.perf_counter()
        again = load_or_build(copy, cache, "functions", progress=False)
        hit = time.perf_counter() - t
        comment = ElfFile(copy).section(".comment")
        with open(copy, "r+b") as fh:
            fh.seek(comment.offset)
            byte = fh.read(1)
            fh.seek(comment.offset)
            fh.write(bytes([byte[0] ^ 0xFF]))
        t = time.perf_counter()
        changed = load_or_build(copy, cache, "functions", progress=False)
        rebuilt = time.perf_counter() - t
        out["invalidation"] = {
            "functions_table_miss_s": round(miss, 2), "hit_s": round(hit, 4), "after_byte_flip_s": round(rebuilt, 2),
            "same_build_id": first.meta.build_id == changed.meta.build_id,
            "rebuilt": changed.meta.sha1 != again.meta.sha1, "functions": first.meta.blocks,
        }
    return out


def workload_figures(processes: int, rounds: int) -> dict[str, Any]:
    """Warm slowdown, first-run cost, blocks reached and noise from alternating fresh processes."""
    modes = {"plain": [], "breakpoints": ["--breakpoints"],
             "breakpoints_writable": ["--breakpoints", "--writable-text"]}
    runs: dict[str, list[dict[str, Any]]] = {m: [] for m in modes}
    common = ["--rounds", str(rounds)]
    for i in range(processes):
        for mode, extra in modes.items():
            rep = run_workload([*common, *extra])
            if "error" in rep:
                raise click.ClickException(f"{mode} run {i}: {rep['error']}")
            runs[mode].append(rep)
            click.echo(f"  process {i + 1}/{processes} {mode}: rounds {rep['seconds']}", err=True)
    warm = {m: statistics.median(s for r in reps for s in r["seconds"][1:]) for m, reps in runs.items()}
    first = {m: statistics.median(r["seconds"][0] for r in reps) for m, reps in runs.items()}
    plain_warm = [statistics.median(r["seconds"][1:]) for r in runs["plain"]]
    bp = runs["breakpoints"][0]
    new, llvm = sum(bp["new_blocks"]), sum(bp["new_llvm_blocks"])
    return {
        "warm_s": {m: round(v, 4) for m, v in warm.items()},
        "warm_slowdown": round(warm["breakpoints"] / warm["plain"], 3),
        "warm_slowdown_writable": round(warm["breakpoints_writable"] / warm["plain"], 3),
        "first_round_s": {m: round(v, 3) for m, v in first.items()},
        "first_run_cost_s": round(first["breakpoints"] - first["plain"], 3),
        "first_run_cost_writable_s": round(first["breakpoints_writable"] - first["plain"], 3),
        "arm_s": statistics.median(r["arm_seconds"] for r in runs["breakpoints"]),
        "blocks_reached": new, "blocks_reached_tvm": new - llvm, "blocks_reached_llvm": llvm,
        "new_blocks_per_round": bp["new_blocks"],
        "noise_cv_pct": round(100 * statistics.pstdev(plain_warm) / statistics.mean(plain_warm), 2),
        "noise_spread_pct": round(100 * (max(plain_warm) - min(plain_warm)) / statistics.median(plain_warm), 2),
        "identical_results": all(not compare(p, b) for p in runs["plain"] for b in runs["breakpoints"]),
    }


@click.command()
@click.option("--processes", type=click.IntRange(min=1), default=3, show_default=True,
              help="Fresh processes per mode (run alternately).")
@click.option("--rounds", type=click.IntRange(min=2), default=4, show_default=True,
              help="Workload rounds per process (the first is the cold one).")
@click.option("--rebuild", is_flag=True, help="Time a real block-table build into a temporary cache (~2 min).")
@click.option("--json", "json_path", type=click.Path(path_type=Path), default=None, help="Also write the figures.")
def main(processes: int, rounds: int, rebuild: bool, json_path: Path | None) -> None:
    """Measure the breakpoints backend: table build/cache, warm slowdown, first-run cost, blocks, noise."""
    figures = {"table": table_figures(rebuild), "workload": workload_figures(processes, rounds)}
    t, w = figures["table"], figures["workload"]
    inv = t["invalidation"]
    click.echo(f"block table: {t['blocks']} blocks ({t['llvm_blocks']} in the LLVM range), first build "
               f"{t['first_build_s']} s, cache hit {t['cache_hit_ms']} ms")
    click.echo(f"invalidation (copy, functions table of {inv['functions']}): miss {inv['functions_table_miss_s']} s,"
               f" hit {inv['hit_s']} s, after flipping a .comment byte (same build id: {inv['same_build_id']}) "
               f"rebuilt: {inv['rebuilt']} in {inv['after_byte_flip_s']} s")
    click.echo(f"warm round: plain {w['warm_s']['plain']} s, breakpoints {w['warm_s']['breakpoints']} s -> "
               f"slowdown {w['warm_slowdown']}x (writable-text mode {w['warm_slowdown_writable']}x)")
    click.echo(f"first-run cost: +{w['first_run_cost_s']} s (writable-text +{w['first_run_cost_writable_s']} s), "
               f"arming {w['arm_s']} s")
    click.echo(f"blocks reached: {w['blocks_reached']} (TVM {w['blocks_reached_tvm']}, LLVM "
               f"{w['blocks_reached_llvm']}); per round {w['new_blocks_per_round']}")
    click.echo(f"run-to-run noise of the plain workload: CV {w['noise_cv_pct']}%, spread {w['noise_spread_pct']}%; "
               f"identical results: {w['identical_results']}")
    if json_path:
        json_path.write_text(json.dumps(figures, indent=1))


if __name__ == "__main__":
    main()
