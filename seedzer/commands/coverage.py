"""The ``seedzer coverage`` command group: coverage tools (self-test; export/diff are added by others).

Verbs register on :data:`coverage_group`; the main CLI adds the group as ``coverage``.
"""

from __future__ import annotations

import click

from seedzer.cli_group import SeedzerGroup
from seedzer.console import echo
from seedzer.coverage.blocktable import DEFAULT_CACHE


@click.group("coverage", cls=SeedzerGroup, context_settings={"help_option_names": ["-h", "--help"]})
def coverage_group() -> None:
    """Coverage tools: check the breakpoints instrumentation, build block tables, export and compare."""


def _add_set_verbs() -> None:
    from seedzer.commands.coverage_sets import SET_COMMANDS

    for command in SET_COMMANDS:
        coverage_group.add_command(command)


_add_set_verbs()


@coverage_group.command("selftest")
@click.option("--cache", "cache_dir", type=click.Path(file_okay=False), default=DEFAULT_CACHE, show_default=True,
              help="Directory of the cached block tables.")
@click.option("--granularity", type=click.Choice(["blocks", "functions"]), default="blocks", show_default=True,
              help="Breakpoints on every basic block or on function entries only.")
@click.option("--rounds", type=click.IntRange(min=1, max=100), default=2, show_default=True,
              help="Workload rounds per process.")
def selftest_cmd(cache_dir: str, granularity: str, rounds: int) -> None:
    """Check that breakpoints do not change TVM: run an import+compile workload with and without them.

    Both runs happen in fresh processes; the IR and output digests of every model must match.
    Exit status 1 on any difference.

    Example: seedzer coverage selftest
    """
    from seedzer.coverage.selftest import selftest

    result = selftest(cache_dir, granularity, rounds)
    plain, armed = result.plain, result.armed
    if "seconds" in plain and "seconds" in armed:
        echo(f"without breakpoints: rounds {plain['seconds']} s")
        echo(f"with breakpoints:    rounds {armed['seconds']} s, {armed.get('armed', 0)} armed, "
                   f"new blocks per round {armed.get('new_blocks')}")
    for line in result.differences:
        echo(f"DIFFERENCE: {line}", err=True)
    if not result.ok:
        raise SystemExit(1)
    echo(f"selftest ok: {len(plain['results'])} models, identical IR and outputs with and without breakpoints")
