"""The ``seedzer envs`` verbs: the cache of reproducer environments (:mod:`seedzer.environments.cache`),
listed with sizes and last use, and pruned."""

from __future__ import annotations

import time
from pathlib import Path

import click

from seedzer.cli_group import CONFIG_OPTION, FiniteFloat, SeedzerGroup
from seedzer.config import load_config
from seedzer.console import SafeConsole, SafeTable, echo
from seedzer.environments.cache import GB, CachedEnv, cached_envs, prune

DAY = 86400.0


def _gb(size: int) -> str:
    return f"{size / GB:.2f}"


def _when(seconds: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(seconds))


def _root(config_path: Path | None) -> tuple[Path, float]:
    cfg = load_config(config_path).reproducers
    return Path(cfg.venvs).expanduser(), cfg.venvs_max_gb


def _table(root: Path, envs: list[CachedEnv], bound: float) -> SafeTable:
    total = sum(e.size for e in envs)
    limit = f"bound {bound:g} GiB (reproducers.venvs_max_gb)" if bound > 0 else "no bound"
    table = SafeTable(title=f"Reproducer environments in {root}: {len(envs)}, {_gb(total)} GiB; {limit}")
    for col in ("environment", "TVM", "packages", "GiB", "made", "last used"):
        table.add_column(col, justify="right" if col == "GiB" else "left")
    for e in reversed(envs):  # most recently used first
        table.add_row(e.name, e.tvm or ("half-made" if not e.finished else "?"), ", ".join(e.packages) or "-",
                      _gb(e.size), _when(e.created), _when(e.last_used) if e.finished else "-")
    return table


@click.group("envs", cls=SeedzerGroup, context_settings={"help_option_names": ["-h", "--help"]})
def envs_group() -> None:
    """The virtual environments plain reproducers run in (reproducers.venvs): list and prune them."""


@envs_group.command("list")
@CONFIG_OPTION
def envs_list(config_path: Path | None) -> None:
    """List the environments, most recently used first: what each holds, its size, when it was made and
    last used, and the directory's total against its bound.

    Example: seedzer envs list
    """
    root, bound = _root(config_path)
    SafeConsole(min_width=140).print(_table(root, cached_envs(root), bound))


@envs_group.command("prune")
@click.option("--keep", type=click.IntRange(min=0), default=None, metavar="N",
              help="Keep the N most recently used environments.")
@click.option("--older-than", "older_than", type=FiniteFloat(0, 36500, unit="days"), default=None, metavar="DAYS",
              help="Remove those not used for more than DAYS days.")
@click.option("--max-gb", "max_gb", type=FiniteFloat(0, 1 << 20, unit="GiB"), default=None, metavar="GB",
              help="Remove the least recently used until the directory holds at most GB GiB "
                   "(default, with no other option: reproducers.venvs_max_gb).")
@CONFIG_OPTION
def envs_prune(keep: int | None, older_than: float | None, max_gb: float | None, config_path: Path | None) -> None:
    """Remove environments, least recently used first (a half-made one always). One being made, one a
    program runs in and one used in the last five minutes are kept (and named). A removed environment is
    made again when a reproducer needs it.

    Example: seedzer envs prune --keep 3
    """
    root, bound = _root(config_path)
    if keep is None and older_than is None and max_gb is None and bound > 0:
        max_gb = bound
    pruned = prune(root, keep=keep, older_than=None if older_than is None else older_than * DAY,
                   max_bytes=None if max_gb is None else int(max_gb * GB))
    for e in pruned.removed:
        echo(f"removed {e.path} ({_gb(e.size)} GiB, last used {_when(e.last_used)})")
    for e in pruned.busy:
        echo(f"kept {e.path}: being made, in use or used in the last minutes", err=True)
    left = cached_envs(root)
    echo(f"{root}: {len(pruned.removed)} removed ({_gb(pruned.freed())} GiB freed); {len(left)} left, "
         f"{_gb(sum(e.size for e in left))} GiB")
