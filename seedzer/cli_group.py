"""The click group every Seedzer command group uses: user errors become one ``error:`` line, exit 2."""

from __future__ import annotations

from typing import Any

import click

from seedzer.errors import SeedzerError


class SeedzerGroup(click.Group):
    """A click group that prints SeedzerErrors as one line and exits with status 2.

    Sub-groups use it too, so the rule also holds when they are invoked on their own.
    """

    def invoke(self, ctx: click.Context) -> Any:
        """Run the command, turning user errors into ``error: ...``."""
        try:
            return super().invoke(ctx)
        except SeedzerError as exc:
            click.echo(f"error: {exc}", err=True)
            ctx.exit(2)
