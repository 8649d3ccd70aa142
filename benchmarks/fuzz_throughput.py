"""Benchmark the fuzz loop: test cases per second per worker, and where an iteration's time goes.

Usage::

    python benchmarks/fuzz_throughput.py [--pool DIR] [--seconds 60] [--testcases N] [--coverage passes] [--jobs 1]
    python benchmarks/fuzz_throughput.py --from-campaign DIR [--late-share 0.5] [--seconds 60]
    python benchmarks/fuzz_throughput.py --level graph [--pool DIR] [--seconds 60] [--mutation STRATEGY] [--config FILE]
    python benchmarks/fuzz_throughput.py --level sched [--pool DIR] [--seconds 60]

Without ``--pool`` it generates a pool of 10-node models (the 'basic' heuristic) in a temporary
directory. It then runs a real campaign (forked workers, real TVM, the configured oracles) for
``--seconds`` of fuzzing and prints the rate and the split of an iteration: mutation, passes, TIR
build of the fuzzed program, lowering of the reference programs, LLVM JIT codegen, kernel runs, the
perf oracle's O3 builds and timing, the
campaign's own bookkeeping (judging, coverage merge, corpus and findings I/O, snapshots), and what
is left (pipes, scheduling, waiting); then the processor time of the workers (on a processor,
waiting for one while busy with a test case, waiting between test cases, from their own clocks) and
of the processes that compete with them (the campaign's, the filing gate's). Figures are printed,
never asserted: timings on a shared machine are noisy; compare ratios within one run.

``--testcases N`` stops the campaign after N test cases instead (``--seconds`` is then a cap). Use
it to compare ``--jobs`` settings: a campaign's test cases get dearer as it goes on (its corpus
holds ever more mutated, larger programs: one worker ran 16% fewer test cases in its second minute
than in its first), so two workers that ran for as long as one have run twice as many test cases
and reached dearer ones; with the same number of test cases both stand at the same point.

``--level graph`` fuzzes the graph level only (a pool model with a Relax pass sequence, built whole
and compared with TVM's default pipeline; ``import`` is the ONNX import, ``reference`` the default
pipeline's build and run, both cached per model by the worker; a fuzzed module equal to one the worker
built before reuses that build, counted in "programs not generated again", and ``FoldConstant``'s build of
a PrimFunc the worker built before reuses it, counted in "FoldConstant builds reused"), ``--level both``
the levels on by default at their configured weights; the default is the TIR level alone, as the figures of
earlier runs were. ``--level sched`` fuzzes the schedule level (a PrimFunc with a schedule trace: ``schedule``
is applying the trace's primitives one by one, each verified, and the postprocessors; ``reference`` the
unscheduled function's build and run, cached per PrimFunc by the worker; ``build``, ``run`` and ``compare``
the scheduled function's).
``--mutation STRATEGY`` makes the graph level mutate by one strategy only (``passes``, ``uoc``, ``pioc``,
``edge``, ``insert``: an importer operator inserted, ``special``: special input values): the cost
of a test case of that strategy, which with a campaign's yield per mutant gives the strategies'
yield per second (how ``graph.*``'s default weights were set).

Long mode, ``--from-campaign DIR``: the campaign is seeded with the corpus entries of another
(finished) campaign instead of a pool's models: the last ``--late-share`` of them by the time they
were added (``added_time``), its late, larger programs with long pass sequences. A campaign's late
cost (a 60-minute run slows from 15 to 3-5 test cases/s) is then measured in minutes. The imported
entries are mutated at once (the new campaign's coverage starts empty, so its first mutants are kept
more often than the source's were); with ``--execute-imported`` each runs once first, as seeds do
(500 late entries take about two minutes).
"""

from __future__ import annotations

import dataclasses
import tempfile
import time
from pathlib import Path

import click
from rich.console import Console
from rich.table import Table

from seedzer.campaign.loop import Campaign
from seedzer.campaign.monitor import QuietMonitor
from seedzer.campaign.seeds import imported_entries
from seedzer.campaign.stats import CampaignStats
from seedzer.config import load_config, parse_levels
from seedzer.generate import generate_pool
from seedzer.level_table import level_names

GRAPH_STRATEGIES = ("passes", "uoc", "pioc", "edge", "insert", "special")
"""The graph level's mutation strategies (``levels.graph.*`` weights) ``--mutation`` may single out."""
WORKER_PARTS = ("mutate", "import", "schedule", "passes", "reference", "build", "run", "compare", "perf")
"""Worker-side timing keys (seconds summed over the run) in the order an iteration spends them:
mutation, the flat steps of the optimized program (TVM's pipeline with the insertions), those of the
minimal and reference programs, LLVM code generation of what is new (one JIT), the kernel runs, the
perf check (``import`` is the graph level's, ``schedule`` the schedule level's, ``compare`` both's)."""


class StopAfter(QuietMonitor):
    """A silent monitor that asks the campaign to stop once it has run ``limit`` test cases (0: never),
    and notes the campaign process's own CPU seconds while it fuzzes (it runs in this process)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.campaign: Campaign | None = None
        self.cpu_start: float | None = None
        self.cpu_seconds = 0.0

    def update(self, stats: CampaignStats) -> None:
        """Stop the campaign at the limit."""
        if stats.phase == "fuzzing":
            now = time.process_time()
            self.cpu_start = now if self.cpu_start is None else self.cpu_start
            self.cpu_seconds = now - self.cpu_start
        if self.limit and self.campaign is not None and stats.session_execs >= self.limit:
            self.campaign.stop()


def split_table(timings: dict[str, float], execs: int, wall: float, jobs: int) -> Table:
    """Per-iteration milliseconds and shares of worker time for each part of an iteration."""
    table = Table(title=f"one iteration, averaged over {execs} test cases")
    for col in ("part", "ms / test case", "share"):
        table.add_column(col, justify="right" if col != "part" else "left")
    budget = wall * jobs  # worker-seconds available
    parts = [(k, timings.get(k, 0.0)) for k in WORKER_PARTS]
    parts.append(("fuzzer bookkeeping", timings.get("bookkeeping", 0.0)))
    parts.append(("filing gate (CPU, zygote children)", timings.get("gate", 0.0)))
    accounted = sum(v for _, v in parts)
    parts.append(("other (pipes, scheduling, idle)", max(0.0, budget - accounted)))
    for name, seconds in parts:
        table.add_row(name, f"{1000 * seconds / max(execs, 1):.1f}", f"{100 * seconds / max(budget, 1e-9):.1f}%")
    return table


def processor_table(timings: dict[str, float], campaign_cpu: float, execs: int, wall: float, jobs: int) -> Table:
    """Where the workers' time went in processor terms: on a processor, waiting for one while busy
    with a test case (another process ran), between test cases (mostly a worker's set-up: its next
    task already waits in its pipe); and
    the processor time of the other processes that compete with them when every core has a worker."""
    table = Table(title="processor time, per test case")
    for col in ("", "ms / test case", "share"):
        table.add_column(col, justify="right" if col else "left")
    budget = wall * jobs
    busy, cpu = timings.get("worker_busy", 0.0), timings.get("worker_cpu", 0.0)
    rows = [("worker on a processor", cpu), ("worker waiting for a processor (busy, not running)", busy - cpu),
            ("worker between test cases", max(0.0, budget - busy)),
            ("campaign process (CPU)", campaign_cpu), ("filing gate (CPU)", timings.get("gate", 0.0))]
    for name, seconds in rows:
        table.add_row(name, f"{1000 * seconds / max(execs, 1):.1f}", f"{100 * seconds / max(budget, 1e-9):.1f}%")
    return table


@click.command()
@click.option("--pool", type=click.Path(exists=True, file_okay=False, path_type=Path), default=None,
              help="Seed pool to fuzz (default: generate 8 ten-node 'basic' models).")
@click.option("--models", type=int, default=8, show_default=True, help="Models to generate without --pool.")
@click.option("--seconds", type=float, default=60.0, show_default=True,
              help="Fuzzing time (loading excluded); with --testcases, the most it may take.")
@click.option("--testcases", type=int, default=0, show_default=True,
              help="Stop after this many test cases (0: run for --seconds); compare --jobs settings with it.")
@click.option("--coverage", default="passes", show_default=True, help="Coverage backend of the campaign.")
@click.option("--jobs", type=int, default=1, show_default=True, help="Worker processes.")
@click.option("--from-campaign", "source", type=click.Path(exists=True, file_okay=False, path_type=Path),
              default=None, help="Seed with the late corpus entries of this (finished) campaign instead of a pool.")
@click.option("--late-share", type=click.FloatRange(0.0, 1.0, min_open=True), default=0.5, show_default=True,
              help="With --from-campaign: the last share of its corpus entries, by the time they were added.")
@click.option("--execute-imported", is_flag=True, help="With --from-campaign: run each imported entry once first.")
@click.option("--level", type=click.Choice([*level_names(), "both"]), default="tir", show_default=True,
              help="The level fuzzed alone, or (both) the levels on by default at their configured weights.")
@click.option("--mutation", type=click.Choice(list(GRAPH_STRATEGIES)), default=None,
              help="The graph level mutates by this strategy only (the other weights 0): its cost per test case.")
@click.option("--config", "config_path", type=click.Path(exists=True, dir_okay=False, path_type=Path), default=None,
              help="A campaign configuration file (before/after figures of a setting, e.g. "
                   "levels.graph.llvm_opt_level); --seconds, --jobs, --coverage, --level and --mutation still "
                   "decide those.")
def main(pool: Path | None, models: int, seconds: float, testcases: int, coverage: str, jobs: int,
         source: Path | None, late_share: float, execute_imported: bool, level: str, mutation: str | None,
         config_path: Path | None) -> None:
    """Run a timed campaign and print test cases/s per worker with the split of an iteration."""
    console = Console(width=120)
    imported = imported_entries(source, late_share) if source is not None else None
    if imported is not None and not execute_imported:
        imported = [dataclasses.replace(e, executed=True) for e in imported]
    if imported is not None:
        console.print(f"seeds: the last {len(imported)} corpus entries ({100 * late_share:.0f}%) of {source}")
    with tempfile.TemporaryDirectory(prefix="seedzer-bench-") as tmp:
        if source is not None:
            pool = source
        elif pool is None:
            pool = Path(tmp) / "pool"
            t = time.perf_counter()
            generate_pool("basic", models, pool, seed=0, max_nodes=10, progress=False)
            console.print(f"generated {models} ten-node models in {time.perf_counter() - t:.1f} s")
        cfg = load_config(config_path)
        cfg.fuzz.minutes = seconds / 60.0
        cfg.fuzz.jobs = jobs
        cfg.fuzz.coverage = coverage
        if level != "both":
            cfg.levels = parse_levels(level, cfg.levels)
        if mutation is not None:
            for strategy in GRAPH_STRATEGIES:
                setattr(cfg.levels.settings()["graph"], strategy, 1.0 if strategy == mutation else 0.0)
        monitor = StopAfter(testcases)
        campaign = Campaign(Path(tmp) / "campaign", pool, cfg, monitor=monitor, imported=imported)
        monitor.campaign = campaign
        t = time.perf_counter()
        stats = campaign.run()
        total = time.perf_counter() - t
    fuzz_wall = stats.session_seconds
    execs = stats.session_execs
    rate = execs / fuzz_wall if fuzz_wall else 0.0
    seeded = f"{len(imported)} imported entries" if imported is not None else f"{stats.loaded_models} models loaded"
    console.print(f"pool {pool}: {seeded}, corpus {stats.corpus}, "
                  f"{total - fuzz_wall:.1f} s loading and shutdown")
    console.print(f"[bold]{execs} test cases in {fuzz_wall:.1f} s with {jobs} worker(s): "
                  f"{rate:.2f} test cases/s, {rate / jobs:.2f} per worker[/bold] (target: 15 per core)")
    for name, count in sorted(stats.level_execs.items()):
        console.print(f"  level {name}: {count} test cases, {count / max(fuzz_wall, 1e-9) / jobs:.2f} per worker per s")
    console.print(split_table(dict(stats.timings), execs, fuzz_wall, jobs))
    console.print(processor_table(dict(stats.timings), monitor.cpu_seconds, execs, fuzz_wall, jobs))
    cached = stats.timings.get("reused_builds", 0.0)
    folds = stats.timings.get("reused_folds", 0.0)
    codegen = stats.timings.get("reused_codegen", 0.0)
    console.print(f"programs not generated again (identical lowered IR seen before): {int(cached)} "
                  f"({100 * cached / max(execs, 1):.0f}% of test cases); FoldConstant builds reused: {int(folds)} "
                  f"({folds / max(execs, 1):.1f} per test case); LLVM code reused: {int(codegen)} "
                  f"({codegen / max(execs, 1):.1f} per test case); coverage {stats.coverage} ({coverage}); "
                  f"bugs {dict(stats.unique)}, not bugs {dict(stats.not_a_bug)}, pending {stats.pending}")


if __name__ == "__main__":
    main()
