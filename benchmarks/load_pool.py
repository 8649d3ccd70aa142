"""Benchmark the loader on a pool: funnel (raw vs folded), every failure by signature, time per step.

Usage::

    python benchmarks/load_pool.py POOL_DIR [--no-diff] [--jobs N] [--out DIR] [--json FILE]

Prints the load report tables (wide, so messages are readable) and a closing line with the share
of models that reach PrimFuncs raw and after folding, plus the wall time.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import click
from rich.console import Console

from seedzer.commands.load import resolve_models
from seedzer.commands.load_output import write_all
from seedzer.commands.load_report import build_report, render
from seedzer.execute.isolated_load import OnnxLoader
from seedzer.load.loader import LoadOptions, ModelLoad, load_all


@click.command()
@click.argument("pool", type=click.Path(exists=True, path_type=Path))
@click.option("--no-diff", is_flag=True, help="Skip the differential check.")
@click.option("--jobs", type=click.IntRange(min=1), default=1, show_default=True)
@click.option("--timeout", type=float, default=300.0, show_default=True)
@click.option("--out", type=click.Path(path_type=Path), default=None, help="Also write seeds and report here.")
@click.option("--json", "json_path", type=click.Path(path_type=Path), default=None, help="Write the report JSON.")
def main(pool: Path, no_diff: bool, jobs: int, timeout: float, out: Path | None, json_path: Path | None) -> None:
    """Load every model of POOL and print the load report."""
    models = [path for path, _ in resolve_models(pool)]
    options = LoadOptions(differential=not no_diff, timeout=timeout)
    console = Console(width=220)
    start = time.perf_counter()

    def progress(r: ModelLoad) -> None:
        secs = sum(r.timings.values())
        console.print(
            f"{r.model}: {len(r.seeds)} seeds, attempts {r.attempts}, matched {r.matched}, {secs:.1f}s in steps",
            highlight=False,
        )

    results = load_all(OnnxLoader(options), models, jobs=jobs, on_result=progress)
    wall = time.perf_counter() - start
    report = build_report(results, differential=options.differential)
    render(report, console, max_models=20)
    if out is not None:
        write_all(out, results, report)
    if json_path is not None:
        json_path.write_text(json.dumps(report.to_json(), indent=1, sort_keys=True))
    console.print(
        f"{report.models} models: PrimFuncs raw {report.percent('primfuncs', raw=True):.1f}%, "
        f"after folding {report.percent('primfuncs'):.1f}%"
        + (f", matched {report.percent('matched'):.1f}%" if options.differential else "")
        + f"; wall {wall:.1f}s ({wall / max(report.models, 1):.2f}s/model, jobs={jobs})",
        highlight=False,
    )


if __name__ == "__main__":
    main()
