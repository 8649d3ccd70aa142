"""The ``seedzer coverage`` command group: coverage tools (self-test; export/diff are added by others).

Verbs register on :data:`coverage_group`; the main CLI adds the group as ``coverage``.
"""

from __future__ import annotations

import click

from seedzer.cli_group import SeedzerGroup


@click.group("coverage", cls=SeedzerGroup, context_settings={"help_option_names": ["-h", "--help"]})
def coverage_group() -> None:
    """Coverage tools: check the breakpoints instrumentation, build block tables, export and compare."""


def _add_set_verbs() -> None:
    from seedzer.coverage.sets_cli import SET_COMMANDS

    for command in SET_COMMANDS:
        coverage_group.add_command(command)


_add_set_verbs()
