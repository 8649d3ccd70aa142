"""The ``seedzer`` command line. Every verb has ``--help``; user errors are one line, exit status 2."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

import click
from rich.console import Console

from seedzer import __version__
from seedzer.cli_group import SeedzerGroup
from seedzer.config import Config, load_config, reference
from seedzer.errors import SeedzerError

CONFIG_OPTION = click.option(
    "--config", "config_path", type=click.Path(path_type=Path), default=None,
    help="YAML configuration file (defaults apply to every field it omits; see `seedzer config show`).",
)
MONITOR_OPTION = click.option(
    "--monitor", type=click.Choice(["auto", "live", "plain", "quiet"]), default="auto", show_default=True,
    help="Status display: a live line on a terminal, periodic plain lines, or nothing.",
)


@click.group(cls=SeedzerGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="seedzer")
def main() -> None:
    """Seedzer: find bugs in Apache TVM with NNSmith seed pools and Tzer-style TIR/pass fuzzing."""


def _apply_overrides(cfg: Config, minutes: float | None, jobs: int | None, seed: int | None) -> Config:
    if minutes is not None:
        cfg.fuzz.minutes = minutes
    if jobs is not None:
        cfg.fuzz.jobs = jobs
    if seed is not None:
        cfg.fuzz.seed = seed
    if cfg.fuzz.minutes <= 0 or cfg.fuzz.jobs < 1:
        raise SeedzerError("--minutes must be > 0 and --jobs >= 1")
    return cfg


def _monitor(kind: str) -> Any:
    from seedzer.campaign.monitor import make_monitor

    return make_monitor("auto" if kind == "live" and sys.stderr.isatty() else kind)


def _fuzz(pool: Path, out: Path, cfg: Config, resume: bool, monitor: str) -> None:
    from seedzer.campaign.report import campaign_summary
    from seedzer.campaign.runner import Campaign

    Campaign(out, pool, cfg, resume=resume, monitor=_monitor(monitor)).run()
    Console().print(campaign_summary(out))


@main.command()
@click.option("--pool", "pool", type=click.Path(path_type=Path), required=True, help="Seed pool directory.")
@click.option("--out", "out", type=click.Path(path_type=Path), required=True, help="Campaign directory.")
@click.option("--minutes", type=float, default=None, help="Budget in minutes (total across resumes).")
@click.option("--jobs", type=int, default=None, help="Worker processes.")
@click.option("--seed", type=int, default=None, help="Fuzzing rng seed.")
@click.option("--resume", is_flag=True, help="Continue the campaign in --out where it stopped.")
@CONFIG_OPTION
@MONITOR_OPTION
def fuzz(pool: Path, out: Path, minutes: float | None, jobs: int | None, seed: int | None, resume: bool,
         config_path: Path | None, monitor: str) -> None:
    """Fuzz TVM with the models of a seed pool; results go to a campaign directory.

    Example: seedzer fuzz --pool seedpools/basic --out campaigns/basic-1 --minutes 10
    """
    cfg = _apply_overrides(load_config(config_path), minutes, jobs, seed)
    _fuzz(pool, out, cfg, resume, monitor)


@main.command()
@click.option("--minutes", type=float, default=None, help="Fuzzing budget in minutes (default 3).")
@click.option("--jobs", type=int, default=None, help="Worker processes (default 1).")
@click.option("--out", type=click.Path(path_type=Path), default=None,
              help="Campaign directory (default: campaigns/run-<timestamp>).")
@click.option("--count", type=int, default=None, help="Models in the generated pool (default 20).")
@CONFIG_OPTION
@MONITOR_OPTION
def run(minutes: float | None, jobs: int | None, out: Path | None, count: int | None,
        config_path: Path | None, monitor: str) -> None:
    """Generate a small pool (reused if present), then fuzz it and print a summary.

    Example: seedzer run --minutes 3
    """
    from seedzer.generate import generate_pool

    cfg = _apply_overrides(load_config(config_path), minutes, jobs, None)
    if count is not None:
        cfg.generate.count = count
    heuristic = cfg.generate.heuristic
    pool = Path(cfg.generate.pool_dir) / Path(heuristic).stem
    click.echo(f"seedzer: generating {cfg.generate.count} '{heuristic}' models into {pool} ...", err=True)
    generate_pool(heuristic, cfg.generate.count, pool, seed=cfg.generate.seed,
                  max_nodes=cfg.generate.max_nodes, progress=sys.stderr.isatty())
    out = out or Path("campaigns") / time.strftime("run-%Y%m%d-%H%M%S")
    click.echo(f"seedzer: fuzzing for {cfg.fuzz.minutes:g} min into {out} ...", err=True)
    _fuzz(pool, out, cfg, False, monitor)


@main.group()
def config() -> None:
    """Show or check configuration files."""


@config.command("show")
def config_show() -> None:
    """Print every configuration field with its default and meaning."""
    for name, default, doc in reference():
        click.echo(f"{name} = {default}\n    {doc}")


@config.command("check")
@click.argument("path", type=click.Path(path_type=Path))
def config_check(path: Path) -> None:
    """Validate a configuration file.

    Example: seedzer config check my.yaml
    """
    load_config(path)
    click.echo(f"{path}: ok")


@main.command()
@click.argument("campaign", type=click.Path(path_type=Path))
def status(campaign: Path) -> None:
    """Summarize a campaign directory (running or finished) from its campaign.db.

    Example: seedzer status campaigns/basic-1
    """
    from seedzer.campaign.report import campaign_summary

    Console().print(campaign_summary(campaign))


def _register_verbs() -> None:
    from seedzer.coverage.cli import coverage_group
    from seedzer.experiment.cli import experiment_group
    from seedzer.generate.cli import generate_cmd, pool_group
    from seedzer.load.cli import load_cmd
    from seedzer.report.cli import report_cmd
    from seedzer.triage.cli import replay_cmd, triage_cmd

    main.add_command(generate_cmd, "generate")
    main.add_command(pool_group, "pool")
    main.add_command(load_cmd, "load")
    main.add_command(report_cmd, "report")
    main.add_command(experiment_group, "experiment")
    main.add_command(coverage_group, "coverage")
    main.add_command(triage_cmd, "triage")
    main.add_command(replay_cmd, "replay")


_register_verbs()

if __name__ == "__main__":
    main()
