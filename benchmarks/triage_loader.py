"""Benchmark loader-finding reduction on a pool: every failing model reduced against its own failure.

Usage::

    python benchmarks/triage_load.py POOL_DIR --out DIR [--no-diff] [--seconds S] [--json FILE]

Loads every model of POOL_DIR as a campaign does (isolated, raw then folded), files each bug
observation through the one loader-finding path (:meth:`seedzer.finding.load.folder.LoadFinding.of`)
under ``DIR/<model>-<signature>/`` (once per model and signature) and triages it (reduction,
standalone ``repro.py`` verified in a clean process, ``report.md``). Unlike a campaign,
findings are not deduplicated across models, so every failing model gives a data point. Prints one
row per finding and the median node counts before and after.
"""

from __future__ import annotations

import json
import statistics
import time
from pathlib import Path

import click
from rich.console import Console
from rich.table import Table

from seedzer.commands.load import resolve_models
from seedzer.execute.isolated_load import OnnxLoader
from seedzer.finding.load.folder import LoadFinding
from seedzer.finding.load.triage import LoadTriageOptions, triage_load
from seedzer.finding.store import dump
from seedzer.load.loader import LoadOptions


def file_findings(pool: Path, out: Path, differential: bool) -> list[Path]:
    """Load every model of ``pool`` and write one loader finding folder per bug observation."""
    loader = OnnxLoader(LoadOptions(differential=differential, timeout=120.0))
    folders: list[Path] = []
    for model, _ in resolve_models(pool):
        for failure in loader.load(model).failures():
            finding = LoadFinding.of(model, failure)
            folder = out / f"{model.stem}-{finding.signature}"
            if folder not in folders:  # the raw and the folded attempt can fail the same way
                folders.append(dump(folder, finding))
    return folders


@click.command()
@click.argument("pool", type=click.Path(exists=True, path_type=Path))
@click.option("--out", type=click.Path(path_type=Path), required=True, help="Finding folders are written here.")
@click.option("--no-diff", is_flag=True, help="Skip the differential check (no mismatch findings).")
@click.option("--seconds", type=float, default=300.0, show_default=True, help="Reduction budget per finding.")
@click.option("--json", "json_path", type=click.Path(path_type=Path), default=None, help="Write the rows as JSON.")
def main(pool: Path, out: Path, no_diff: bool, seconds: float, json_path: Path | None) -> None:
    """Reduce every loader finding of POOL and print node counts before and after."""
    start = time.perf_counter()
    folders = file_findings(pool, out, not no_diff)
    click.echo(f"{len(folders)} loader finding(s) filed in {time.perf_counter() - start:.0f} s", err=True)
    rows = []
    for folder in folders:
        res = triage_load(folder, LoadTriageOptions(seconds=seconds))
        rows.append({"finding": folder.name, **res.__dict__})
        click.echo(f"{folder.name}: {res.original_nodes} -> {res.nodes} nodes, verified={res.verified}", err=True)
    table = Table(title=f"loader reduction on {pool}")
    for col in ("finding", "symptom", "step", "nodes", "loads", "seconds", "complete", "repro"):
        table.add_column(col)
    for r in rows:
        table.add_row(r["finding"], r["symptom"], r["step"], f"{r['original_nodes']} -> {r['nodes']}",
                      str(r["evaluations"]), f"{r['seconds']:.0f}", str(r["complete"]),
                      {True: "fails (exit 1)", False: f"differs ({r['repro_exit']})", None: "-"}[r["verified"]])
    Console(width=200).print(table)
    if rows:
        before = statistics.median(r["original_nodes"] for r in rows)
        after = statistics.median(r["nodes"] for r in rows)
        verified = sum(1 for r in rows if r["verified"])
        click.echo(f"median nodes {before} -> {after}; {verified}/{len(rows)} reduced repros fail the same way; "
                   f"{time.perf_counter() - start:.0f} s in all")
    if json_path is not None:
        json_path.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
