"""The ``seedzer`` command line. Every verb has ``--help``; user errors are one line, exit status 2."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

import click

from seedzer import __version__
from seedzer.cli_group import CONFIG_OPTION, MINUTES, FiniteFloat, SeedzerGroup, bounded_int
from seedzer.config import (
    INT64,
    MAX_JOBS,
    MAX_MINUTES,
    MAX_POOL,
    Config,
    check_value,
    excerpt,
    load_config,
    parse_levels,
    reference,
)
from seedzer.console import SafeConsole, echo, echo_lines
from seedzer.errors import CampaignError, ConfigError, UsageError

MONITOR_OPTION = click.option(
    "--monitor", type=click.Choice(["auto", "live", "plain", "quiet"]), default="auto", show_default=True,
    help="Status display: a live line on a terminal, periodic plain lines, or nothing.",
)
JOBS = bounded_int(1, MAX_JOBS)
SEED = bounded_int(-INT64 - 1, INT64)


@click.group(cls=SeedzerGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="seedzer")
def main() -> None:
    """Seedzer: find bugs in Apache TVM with NNSmith seed pools and Tzer-style TIR/pass fuzzing."""


def _apply_overrides(cfg: Config, minutes: float | None, jobs: int | None, seed: int | None) -> Config:
    """Command-line values over the configuration's, each checked like the configuration field it sets."""
    for option, dotted, value in (("--minutes", "fuzz.minutes", minutes), ("--jobs", "fuzz.jobs", jobs),
                                  ("--seed", "fuzz.seed", seed)):
        if value is not None:
            check_value(dotted, value, option)
            setattr(cfg.fuzz, dotted.split(".")[1], value)
    return cfg


def _check_heuristic(cfg: Config, source: Path | None) -> None:
    """``generate.heuristic`` of the configuration file ``source`` names a shipped heuristic or an
    existing heuristic file (heuristics are the generator's, a layer above the configuration, so the
    commands that generate check it)."""
    from seedzer.generate.heuristics import heuristic_known

    if source is not None and not heuristic_known(cfg.generate.heuristic):
        raise ConfigError(f"{source}: field 'generate.heuristic' must name a shipped heuristic (see `seedzer pool "
                          "heuristics`) or an existing .yaml/.py heuristic file "
                          f"(got {excerpt(cfg.generate.heuristic)})")


def _monitor(style: str) -> Any:
    from seedzer.campaign.monitor import make_monitor

    return make_monitor("auto" if style == "live" and sys.stderr.isatty() else style)


def _resolved(path: Path) -> Path:
    try:
        return path.resolve()
    except (OSError, RuntimeError) as exc:
        raise UsageError(f"{path}: cannot resolve the path ({exc})") from None


def check_campaign_paths(pool: Path, out: Path) -> None:
    """Refuse a campaign directory that is, or lies inside, the seed pool, or that holds a pool or a file."""
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out {out}: exists and is not a directory")
    pool_r, out_r = _resolved(pool), _resolved(out)
    if out_r == pool_r:
        raise UsageError(f"--out {out}: is the seed pool (--pool {pool}); a campaign needs a directory of its own")
    if out_r.is_relative_to(pool_r):
        raise UsageError(f"--out {out}: is inside the seed pool {pool}; a campaign needs a directory of its own")
    if (out / "manifest.json").exists():
        raise UsageError(f"--out {out}: holds a seed pool (manifest.json); a campaign needs a directory of its own")


def check_campaign_state(pool: Path, out: Path, resume: bool) -> None:
    """Read-only checks of ``out``'s campaign.db: resumable (and made from ``pool``), or absent for a new one."""
    from seedzer.campaign.directory import check_layout
    from seedzer.store.corpus import CORPUS_DIR, corpus_lost, lost_corpus_files
    from seedzer.store.reader import CampaignReader, UnreadableCampaign
    from seedzer.store.readonly import open_campaign

    check_layout(out)
    db = out / "campaign.db"
    if not resume:
        if db.exists() or db.is_symlink():
            open_campaign(db).close()  # a file that is not a campaign is named as such, and left alone
            raise CampaignError(f"{out}: a campaign already exists here (use --resume to continue it)")
        return
    if not db.exists():
        raise CampaignError(f"{out}: nothing to resume (no campaign.db)")
    try:
        with CampaignReader.open(db) as reader:
            recorded, paths = reader.meta("pool"), reader.corpus_paths()
    except UnreadableCampaign as exc:
        raise CampaignError(f"{db}: unreadable campaign metadata ({exc.cause})") from None
    if lost_corpus_files(out, paths):
        raise corpus_lost(out / CORPUS_DIR, len(paths))
    if isinstance(recorded, str) and Path(recorded) != _resolved(pool):
        raise UsageError(f"--resume: campaign {out} fuzzes the pool {recorded}, not {_resolved(pool)}; "
                         f"resume it with --pool {recorded}")


LOCAL_RAY = "local"
"""``--ray`` without an address: a cluster started on this machine, or a private one (127.0.0.1)."""


def _ray_executor(address: str, pool: Path, jobs: int) -> Any:
    """Join the Ray cluster (one line about it on stderr) and return the campaign's executor factory:
    its workers as Ray actors, the seed pool's path checked on every node they land on."""
    from seedzer.execute.ray_cluster import connect
    from seedzer.execute.ray_pool import RayWorkerPool
    from seedzer.execute.settings import WorkerSettings
    from seedzer.kernel.common import Stage

    info = connect(None if address == LOCAL_RAY else address)
    echo(f"seedzer: {info.describe()}", err=True)
    if info.cpus < jobs:
        echo(f"seedzer: --jobs {jobs} asks for more workers than the cluster's {info.cpus:g} CPU(s); "
                   "the others start when CPUs join", err=True)
    paths = [str(_resolved(pool))]

    def factory(n: int, settings: WorkerSettings, limits: dict[Stage, float]) -> RayWorkerPool:
        return RayWorkerPool(n, settings, limits, paths=paths)

    return factory


def _fuzz(pool: Path, out: Path, cfg: Config, resume: bool, monitor: str, ray: str | None = None,
          recorded_as: str = "campaign") -> None:
    """Check everything that can be checked before a campaign starts, then run it under the campaign lock.

    All checks are read-only and happen before anything is created; they are repeated under the
    lock, which :class:`~seedzer.store.lock.DirLock` holds on ``out`` for the life of the campaign
    (re-entrant, so the campaign may take it too). With ``ray`` (an address, or :data:`LOCAL_RAY`) the
    workers are Ray actors on the cluster's nodes; the campaign, its store and its gate stay here.
    """
    from seedzer.campaign.seeds import list_pool
    from seedzer.store.lock import DirLock

    check_campaign_paths(pool, out)
    list_pool(pool)  # a missing, empty or corrupt pool fails here, before anything is created
    if cfg.epochs.count > 1:
        from seedzer.campaign.epochs import check_epoch_pool

        check_epoch_pool(pool)
    check_campaign_state(pool, out, resume)
    if ray is not None:  # imported before the lock: from the lock on, a SIGTERM must find the handler armed
        from seedzer.execute.ray_cluster import described, disconnect, signals_interrupt
    with DirLock(out, what="campaign"):
        if ray is None:
            check_campaign_state(pool, out, resume)  # again: another process may have been quicker
            from seedzer.campaign.loop import Campaign

            campaign = Campaign(out, pool, cfg, resume=resume, monitor=_monitor(monitor), ledger_source=recorded_as)
            campaign.run()
        else:
            try:
                # from the lock on: the imports and the join take seconds, and a SIGTERM then must still
                # end the campaign with one line and free its lock (the join re-arms the same handler)
                with signals_interrupt(f"--ray {described(None if ray == LOCAL_RAY else ray)}"):
                    check_campaign_state(pool, out, resume)  # again: another process may have been quicker
                    from seedzer.campaign.loop import Campaign

                    executor = _ray_executor(ray, pool, cfg.fuzz.jobs)
                campaign = Campaign(out, pool, cfg, resume=resume, monitor=_monitor(monitor), executor=executor,
                                    ledger_source=recorded_as)
                campaign.run()
            finally:
                disconnect()
    SafeConsole(min_width=160).print(campaign.summary())  # the ledger's marks, as `status` shows them


@main.command()
@click.option("--pool", "pool", type=click.Path(path_type=Path), required=True, help="Seed pool directory.")
@click.option("--out", "out", type=click.Path(path_type=Path), required=True, help="Campaign directory.")
@click.option("--minutes", type=MINUTES, default=None, help="Budget in minutes (total across resumes).")
@click.option("--jobs", type=JOBS, default=None, help="Worker processes.")
@click.option("--seed", type=SEED, default=None, help="Fuzzing rng seed.")
@click.option("--resume", is_flag=True, help="Continue the campaign in --out where it stopped.")
@click.option("--levels", default=None, metavar="LEVELS",
              help="Levels to fuzz, by name (their configured weights: tir,graph) or with weights (tir=3,graph=1); "
                   "the others are off.")
@click.option("--ray", "ray", default=None, is_flag=False, flag_value=LOCAL_RAY, metavar="[ADDRESS]",
              help="Run the workers as Ray actors on the cluster at ADDRESS (host:port; bare --ray: one started "
                   "on this machine, or a private one on 127.0.0.1). Needs the extra seedzer[ray]; the seed pool "
                   "must be at the same path on every node.")
@click.option("--recorded-as", "recorded_as", type=click.Choice(["campaign", "trial"]), default="campaign",
              show_default=True, help="What the ledger of bug roots records this campaign as (experiments: trial).")
@click.option("--epochs", type=int, default=None, metavar="N",
              help="Split the budget into N generation epochs: after the first (the --pool), each fuzzes models a "
                   "niced generator process makes, operators weighted by what earlier models yielded (epochs.*).")
@click.option("--allocation", type=click.Choice(["adaptive", "fixed"]), default=None,
              help="Weights of levels, mutations and seed models: adapted to their yield per worker-second, or "
                   "fixed at the configured ones (allocation.adaptive; default adaptive).")
@CONFIG_OPTION
@MONITOR_OPTION
def fuzz(pool: Path, out: Path, minutes: float | None, jobs: int | None, seed: int | None, resume: bool,
         levels: str | None, ray: str | None, recorded_as: str, epochs: int | None, allocation: str | None,
         config_path: Path | None, monitor: str) -> None:
    """Fuzz TVM with the models of a seed pool; results go to a campaign directory.

    Example: seedzer fuzz --pool seedpools/basic --out campaigns/basic-1 --minutes 10 --levels tir,graph
    (add --ray [ADDRESS] to place the workers on a Ray cluster's nodes)
    """
    cfg = _apply_overrides(load_config(config_path), minutes, jobs, seed)
    if levels is not None:
        cfg.levels = parse_levels(levels, cfg.levels)
    if epochs is not None:
        check_value("epochs.count", epochs, "--epochs")
        cfg.epochs.count = epochs
    if allocation is not None:
        cfg.allocation.adaptive = allocation == "adaptive"
    _fuzz(pool, out, cfg, resume, monitor, ray, recorded_as)


@main.command()
@click.option("--minutes", type=MINUTES, default=None, help="Fuzzing budget in minutes (default 3).")
@click.option("--jobs", type=JOBS, default=None, help="Worker processes (default 1).")
@click.option("--out", type=click.Path(path_type=Path), default=None,
              help="Campaign directory (default: campaigns/run-<timestamp>).")
@click.option("--count", type=bounded_int(1, MAX_POOL), default=None,
              help="Models in the generated pool (default 20).")
@CONFIG_OPTION
@MONITOR_OPTION
def run(minutes: float | None, jobs: int | None, out: Path | None, count: int | None,
        config_path: Path | None, monitor: str) -> None:
    """Generate a small pool (reused if present), then fuzz it and print a summary.

    Example: seedzer run --minutes 3
    """
    from seedzer.generate import generate_pool

    cfg = _apply_overrides(load_config(config_path), minutes, jobs, None)
    _check_heuristic(cfg, config_path)
    if count is not None:
        cfg.generate.count = count
    heuristic = cfg.generate.heuristic
    pool = Path(cfg.generate.pool_dir) / Path(heuristic).stem
    out = out or Path("campaigns") / time.strftime("run-%Y%m%d-%H%M%S")
    check_campaign_paths(pool, out)
    check_campaign_state(pool, out, False)
    echo(f"seedzer: generating {cfg.generate.count} '{heuristic}' models into {pool} ...", err=True)
    generate_pool(heuristic, cfg.generate.count, pool, seed=cfg.generate.seed,
                  max_nodes=cfg.generate.max_nodes, progress=True)
    echo(f"seedzer: fuzzing for {cfg.fuzz.minutes:g} min into {out} ...", err=True)
    _fuzz(pool, out, cfg, False, monitor)


@main.group()
def config() -> None:
    """Show or check configuration files."""


@config.command("show")
def config_show() -> None:
    """Print every configuration field with its default and meaning."""
    for name, default, doc in reference():
        echo_lines([f"{name} = {default}", f"    {doc}"])


@config.command("check")
@click.argument("path", type=click.Path(path_type=Path))
def config_check(path: Path) -> None:
    """Validate a configuration file.

    Example: seedzer config check my.yaml
    """
    notes: list[str] = []
    _check_heuristic(load_config(path, notes), path)
    for note in notes:
        echo(note, err=True)
    echo(f"{path}: ok")


@main.command()
@click.argument("campaign", type=click.Path(path_type=Path))
@click.option("--all", "show_all", is_flag=True, help="Also list candidates the gate has not judged and not-bugs.")
@click.option("--invalid", "show_invalid", is_flag=True,
              help="List what was turned away before the gate: reasons, counts, samples and re-runs.")
@CONFIG_OPTION
@click.option("--windows", "window_minutes", type=FiniteFloat(0, MAX_MINUTES, unit="minutes"), default=5.0,
              show_default=True,
              metavar="MINUTES", help="Window of the throughput table (shown from two windows on; 0: never).")
def status(campaign: Path, show_all: bool, window_minutes: float, show_invalid: bool,
           config_path: Path | None) -> None:
    """Summarize a campaign directory (running or finished): totals, executions/s and where the
    workers' time went per window of campaign time, then its bugs, one row per root cause (culprit
    passes, one-line message, occurrences, reproducer, and what the ledger knew of it from other
    campaigns), and not-a-bug counts by reason; with --invalid, the test cases turned away before
    the gate by reason and pass, with their samples (replay one with
    `seedzer replay CAMPAIGN/filtered/NAME`) and re-runs at the full limits.

    Example: seedzer status campaigns/basic-1 --all
    """
    from seedzer.campaign.ledger_roots import campaign_ledger, seen_before
    from seedzer.campaign.summary import campaign_summary
    from seedzer.errors import SeedzerError
    from seedzer.store.readonly import open_campaign

    cfg = load_config(config_path)
    seen = None
    if (campaign / "campaign.db").is_file():  # a bad campaign: the campaign's own one-line error, not the ledger's
        open_campaign(campaign / "campaign.db").close()
    try:
        seen = seen_before(campaign_ledger(campaign, cfg), campaign) if (campaign / "campaign.db").is_file() else None
    except SeedzerError as exc:  # a ledger that cannot be read: the summary without its marks
        echo(f"warning: {exc}", err=True)
        seen = None
    SafeConsole(min_width=160).print(campaign_summary(campaign, show_all, window_minutes,
                                                                    show_invalid, seen))


def _register_verbs() -> None:
    from seedzer.commands.bugs import bugs_group
    from seedzer.commands.coverage import coverage_group
    from seedzer.commands.envs import envs_group
    from seedzer.commands.experiment import experiment_group
    from seedzer.commands.generate import generate_cmd, pool_group
    from seedzer.commands.load import load_cmd
    from seedzer.commands.report import report_cmd
    from seedzer.commands.triage import recheck_cmd, replay_cmd, triage_cmd
    from seedzer.commands.versions import versions_cmd

    main.add_command(generate_cmd, "generate")
    main.add_command(pool_group, "pool")
    main.add_command(load_cmd, "load")
    main.add_command(report_cmd, "report")
    main.add_command(experiment_group, "experiment")
    main.add_command(coverage_group, "coverage")
    main.add_command(triage_cmd, "triage")
    main.add_command(replay_cmd, "replay")
    main.add_command(recheck_cmd, "recheck")
    main.add_command(versions_cmd, "versions")
    main.add_command(bugs_group, "bugs")
    main.add_command(envs_group, "envs")


_register_verbs()

if __name__ == "__main__":
    main()
