"""Click commands: ``seedzer generate`` and ``seedzer pool stats|select``.

The main CLI group registers :data:`generate_cmd` and :data:`pool_group`; errors are raised as
:class:`~seedzer.errors.SeedzerError` subclasses for it to print on one line.
"""

from __future__ import annotations

from pathlib import Path

import click
from rich.text import Text

from seedzer.config import INT64, MAX_JOBS, MAX_POOL
from seedzer.console import SafeConsole, SafeTable, echo, visible
from seedzer.generate.driver import GenerateSummary, generate_pool
from seedzer.generate.heuristics import available_heuristics, load_heuristic
from seedzer.generate.selection import select_pool
from seedzer.generate.stats import pool_stats, render_stats


def print_summary(summary: GenerateSummary, console: SafeConsole) -> None:
    """The end-of-run summary: made, rejected by reason, models/min."""
    table = SafeTable(title=f"generate {summary.heuristic} → {summary.out}", show_header=False)
    table.add_column("key", style="bold")
    table.add_column("value")
    table.add_row("models in pool", f"{summary.total} / {summary.requested}")
    table.add_row("made this run", str(summary.made))
    table.add_row("attempts this run", str(summary.attempts))
    table.add_row("time", f"{summary.seconds:.1f} s")
    table.add_row("rate", f"{summary.models_per_min:.0f} models/min")
    for reason, n in summary.rejected.items():
        table.add_row(f"rejected: {reason}", str(n))
    for note in summary.notes:
        table.add_row("note", note)
    console.print(table)


@click.command("generate")
@click.option("--heuristic", "-H", required=True, help="Heuristic name (see heuristics/) or path to a .yaml/.py file.")
@click.option(
    "--count", "-n", type=click.IntRange(min=1, max=MAX_POOL), required=True,
    help="Number of models the pool should hold.",
)
@click.option(
    "--out", "-o", type=click.Path(file_okay=False, path_type=Path), required=True,
    help="Pool directory (created; an existing pool made with the same options is resumed).",
)  # fmt: skip
@click.option(
    "--jobs", "-j", type=click.IntRange(min=1, max=MAX_JOBS), default=1, show_default=True,
    help="Parallel worker processes.",
)
@click.option(
    "--seed", "-s", type=click.IntRange(min=-INT64 - 1, max=INT64), default=0, show_default=True,
    help="Run seed; model i uses a seed derived from it and i.",
)
@click.option(
    "--max-nodes", type=click.IntRange(min=1, max=100), default=None, help="Override the heuristic's max_nodes."
)
@click.option(
    "--cache-dir", type=click.Path(file_okay=False, path_type=Path), default=None,
    help="NNSmith op-support cache directory [default: .nnsmith-cache next to --out].",
)  # fmt: skip
@click.option("--no-progress", is_flag=True, help="Do not show the progress bar.")
def generate_cmd(
    heuristic: str, count: int, out: Path, jobs: int, seed: int, max_nodes: int | None,
    cache_dir: Path | None, no_progress: bool,
) -> None:  # fmt: skip
    """Generate (or resume) a seed pool of valid ONNX models for a heuristic."""
    summary = generate_pool(
        heuristic, count, out, jobs=jobs, seed=seed, max_nodes=max_nodes,
        progress=not no_progress, cache_dir=cache_dir,
    )  # fmt: skip
    print_summary(summary, SafeConsole())


@click.group("pool")
def pool_group() -> None:
    """Inspect seed pools and select sub-pools from them."""


@pool_group.command("stats")
@click.argument("pool_dir", type=click.Path(path_type=Path))
@click.option(
    "--top-ops", type=click.IntRange(min=1), default=25, show_default=True, help="Ops to list in the histogram."
)
def stats_cmd(pool_dir: Path, top_ops: int) -> None:
    """Show counts, rejections, op histogram, conv kernel sizes and size distribution of POOL_DIR."""
    render_stats(pool_stats(pool_dir), SafeConsole(), top_ops=top_ops)


@pool_group.command("select")
@click.option("--heuristic", "-H", required=True, help="Heuristic whose selection rule to apply (name or path).")
@click.option(
    "--count", "-n", type=click.IntRange(min=1, max=MAX_POOL), default=None,
    help="Models to keep [default: all that pass].",
)
@click.argument("src", type=click.Path(path_type=Path))
@click.argument("dst", type=click.Path(file_okay=False, path_type=Path))
def select_cmd(heuristic: str, count: int | None, src: Path, dst: Path) -> None:
    """Copy the models of pool SRC that HEURISTIC selects into pool DST (with a manifest)."""
    manifest = select_pool(load_heuristic(heuristic), src, dst, count)
    echo(f"selected {len(manifest['models'])} of {manifest['selection']['candidates']} models into {dst}")


@pool_group.command("heuristics")
def heuristics_cmd() -> None:
    """List the shipped heuristics with their descriptions."""
    console = SafeConsole()
    for name in available_heuristics():
        h = load_heuristic(name)
        console.print(Text.assemble((visible(name), "bold"), f": {visible(getattr(h, 'description', '') or h.path)}"))
