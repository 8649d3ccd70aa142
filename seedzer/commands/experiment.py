"""``seedzer experiment run|check``: run the trials an experiment YAML defines, then report on them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from seedzer.cli_group import SeedzerGroup
from seedzer.console import SafeConsole, SafeTable, echo
from seedzer.errors import SeedzerError

DEFAULT_RESULTS = Path("experiments/results")


@click.group("experiment", cls=SeedzerGroup, context_settings={"help_option_names": ["-h", "--help"]})
def experiment_group() -> None:
    """Run experiments: every heuristic's pool fuzzed in several timed trials, then a report.

    An experiment file (experiments/*.yaml) names the heuristics, trials, minutes per trial,
    snapshot period, jobs per trial, coverage backend and oracles; see experiments/README.md.
    """


def _summary_table(summary: Any) -> SafeTable:
    table = SafeTable(title=f"Experiment results: {summary.root}")
    for col in ("trial", "status", "elapsed", "execs", "coverage", "corpus", "unique findings"):
        table.add_column(col, justify="left" if col in ("trial", "status") else "right")
    for r in summary.results:
        s = r.snapshot
        cells = [f"{s.elapsed:.0f} s", str(s.execs), str(s.coverage), str(s.corpus), str(s.unique_findings)] \
            if s else ["-"] * 5
        table.add_row(r.trial.label, r.status, *cells)
    return table


@experiment_group.command("run")
@click.argument("file", type=click.Path(path_type=Path))
@click.option("--resume", is_flag=True,
              help="Continue earlier results: finished trials are kept, interrupted ones resumed.")
@click.option("--results", "results", type=click.Path(path_type=Path), default=DEFAULT_RESULTS, show_default=True,
              help="Directory under which <name>/<arm>/trial-<n>/ are written (an arm: <pool> or <pool>@<levels>).")
@click.option("--parallel", type=int, default=None,
              help="Trials at once (default: the file's 'parallel', else cores // jobs; with --ray the "
                   "cluster's CPUs // jobs).")
@click.option("--no-report", is_flag=True, help="Do not build the report when all trials are done.")
@click.option("--trials", type=int, default=None,
              help="Trials per arm instead of the file's (a shorter study; pair it with its own --results).")
@click.option("--minutes", type=float, default=None, help="Minutes per trial instead of the file's.")
@click.option("--ray", "ray_address", is_flag=False, flag_value="", default=None, metavar="[ADDRESS]",
              help="Run each trial as a task on a Ray cluster: at host:port, or bare for the cluster "
                   "started on this machine (else a private local one). Needs the extra seedzer[ray].")
def run_cmd(file: Path, resume: bool, results: Path, parallel: int | None, no_report: bool, trials: int | None,
            minutes: float | None, ray_address: str | None) -> None:
    """Generate missing pools, run every trial (resumable), print a summary and build the report.

    Each trial is a campaign (`seedzer fuzz`) in its own process and directory; a trial that
    finished is never rerun; after an interruption (Ctrl-C, kill, reboot) run again with --resume.

    With --ray, trials run on the cluster's nodes (num_cpus = the trial's jobs; without --parallel
    or the file's 'parallel', the cluster's CPUs // jobs at once) and their directories still end
    up under --results on this machine.

    Example: seedzer experiment run experiments/quick.yaml

    Example: seedzer experiment run experiments/seedzer-paper.yaml --trials 2 --minutes 3 --results short --ray
    """
    from seedzer.config import MAX_JOBS
    from seedzer.experiment.spec import load_spec, overridden
    from seedzer.experiment.trials import ExperimentRunner

    if parallel is not None and not 1 <= parallel <= MAX_JOBS:
        raise SeedzerError(f"--parallel: must be between 1 and {MAX_JOBS} (got {parallel})")
    spec = overridden(load_spec(file), trials=trials, minutes=minutes)
    launcher = None
    if ray_address is not None:
        from seedzer.execute.ray_cluster import connect
        from seedzer.experiment.ray_trials import RayLauncher

        info = connect(ray_address or None)
        echo(info.describe(), err=True)
        parallel = parallel or spec.parallel or max(1, int(info.cpus) // spec.jobs)
        launcher = RayLauncher()
    summary = ExperimentRunner(spec, results, resume=resume, parallel=parallel, launcher=launcher).run()
    SafeConsole(stderr=True).print(_summary_table(summary))
    ctx = click.get_current_context()
    if summary.interrupted:
        echo(f"interrupted: continue with `seedzer experiment run {file} --resume"
                   f"{'' if results == DEFAULT_RESULTS else f' --results {results}'}`", err=True)
        ctx.exit(130)
    failed = summary.count("failed")
    if not no_report and summary.count("done"):
        from seedzer.report.build import build_report

        rep = build_report(summary.root, warn=lambda m: echo(f"warning: {m}", err=True))
        echo(f"report: {rep.html}", err=True)
    if failed:
        echo(f"{failed} trial(s) failed (see fuzz.log in their directories); rerun with --resume", err=True)
        ctx.exit(1)


@experiment_group.command("check")
@click.argument("file", type=click.Path(path_type=Path))
def check_cmd(file: Path) -> None:
    """Validate an experiment file and print the trials it defines.

    Example: seedzer experiment check experiments/seedzer-paper.yaml
    """
    from seedzer.experiment.spec import heuristic_epochs, load_spec

    spec = load_spec(file)
    arms = spec.arms()
    trials = spec.trials * len(arms)
    what = (f"{len(spec.heuristics)} heuristics" + (f" x {len(spec.levels)} level settings" if spec.levels else "")
            + (f" x {len(spec.allocations)} allocations" if len(spec.allocations) > 1 else ""))
    echo(f"{file}: ok: {spec.name}: {what} x {spec.trials} trials = {trials} "
               f"campaigns of {spec.minutes:g} min ({spec.jobs} job(s) each; "
               f"{trials * spec.minutes * spec.jobs:g} core-minutes)")
    for arm in arms:
        levels = (f", levels {arm.levels}" if arm.levels else "") + (
            f", {arm.allocation} weights" if arm.allocation else "")
        plan = heuristic_epochs(arm.heuristic)
        epochs = (f" ({spec.pool_size(arm.heuristic)} models, grown in {plan.count} epochs of {plan.models})"
                  if plan is not None else "")
        shown = arm.name if spec.levels or len(spec.allocations) > 1 else arm.heuristic
        echo(f"  {shown}: pool {spec.pool_path(arm.heuristic)}{epochs}"
                   f"{levels}")
