"""The error boundary of the ``seedzer`` command line, and bounded number types for its options.

Every Seedzer command group uses :class:`SeedzerGroup`. Whatever a user can cause ends as one line
``error: <culprit>: <what is wrong>`` on standard error and exit status 2:

* :class:`~seedzer.errors.SeedzerError` (Seedzer's own user errors, which already name the culprit);
* click's usage errors (a missing option, a bad value, an unknown option) in the same one-line form;
* ``OSError`` from the file system (named after its file), ``UnicodeError`` (undecodable input),
  ``OverflowError`` (a value out of range) and SQLite's errors about a database file.

Anything else is a bug in Seedzer: its traceback is printed, followed by one line asking to report
it, and the exit status is 1. Sub-groups use the class too, so the rule also holds when they are
invoked on their own.
"""

from __future__ import annotations

import errno
import math
import sqlite3
import sys
import traceback
from pathlib import Path
from typing import Any

import click

from seedzer.config import MAX_MINUTES
from seedzer.console import echo
from seedzer.errors import REPORT_BUGS, SeedzerError, shown

USER_ERROR = 2
INTERNAL_ERROR = 1


class OneLineError(click.ClickException):
    """A user error already reduced to its one line; printed as ``error: <message>``, exit status 2."""

    exit_code = USER_ERROR

    def show(self, file: Any = None) -> None:
        """Print ``error: <message>`` (to standard error unless ``file`` is given)."""
        echo(f"error: {self.message}", file=file, err=file is None)


class InternalError(click.ClickException):
    """A bug in Seedzer: its traceback was printed; this adds the request to report it (exit 1)."""

    exit_code = INTERNAL_ERROR

    def show(self, file: Any = None) -> None:
        """Print the one-line request to report the bug."""
        echo(f"internal error: {self.message}", file=file, err=file is None)


def _hint(exc: click.UsageError) -> str:
    """The culprit of a usage error: the option's long name (``--count``) or the argument's (``PATH``)."""
    param = getattr(exc, "param", None)
    hint = getattr(exc, "param_hint", None)
    if hint is None and isinstance(param, click.Option):
        longs = [o for o in param.opts if o.startswith("--")]
        hint = (longs or param.opts)[0]
    elif hint is None and param is not None:
        hint = param.human_readable_name
    if isinstance(hint, list | tuple):
        hint = " / ".join(str(h) for h in hint)
    return str(hint or "").replace("'", "").replace('"', "")


def _strip(text: str) -> str:
    text = " ".join(str(text).split())
    return text[:-1] if text.endswith(".") else text


def usage_message(exc: click.ClickException) -> str:
    """click's exception as ``<option or command>: <what>`` (one line, no "Usage:" block)."""
    command = exc.ctx.command_path if isinstance(exc, click.UsageError) and exc.ctx is not None else "seedzer"
    if isinstance(exc, click.MissingParameter):
        what = exc.param_type or (exc.param.param_type_name if exc.param is not None else "parameter")
        return f"{_hint(exc) or command}: missing {what}"
    if isinstance(exc, click.NoSuchOption):
        close = sorted(exc.possibilities or [])
        maybe = f" (did you mean {' or '.join(close)}?)" if close else ""
        return f"{exc.option_name}: no such option for '{command}'{maybe}"
    if isinstance(exc, click.BadParameter):
        return f"{_hint(exc) or command}: {_strip(exc.message)}"
    if isinstance(exc, click.UsageError):
        return f"{command}: {_strip(exc.message)} (see '{command} --help')"
    return _strip(exc.format_message())


def _os_message(exc: OSError) -> str:
    what = exc.strerror or str(exc)
    if exc.errno == errno.ENOSPC:
        what = "no space left on device"
    elif exc.errno == errno.EROFS:
        what = "read-only file system"
    if exc.filename is not None:
        target = f" -> {shown(exc.filename2)}" if exc.filename2 is not None else ""
        return f"{shown(exc.filename)}{target}: {what}"
    return what


def user_message(exc: BaseException) -> str | None:
    """The one-line message of a user-caused failure, or None when ``exc`` is a bug in Seedzer."""
    if isinstance(exc, SeedzerError):
        return str(exc)
    if isinstance(exc, click.ClickException):
        return usage_message(exc)
    if isinstance(exc, OSError) and exc.errno != errno.EPIPE:
        return _os_message(exc)
    if isinstance(exc, UnicodeDecodeError):
        return f"input is not UTF-8 text ({exc.reason} at byte {exc.start})"
    if isinstance(exc, UnicodeEncodeError):
        return f"cannot write text in this terminal's encoding ({exc.encoding}); set PYTHONIOENCODING=utf-8"
    if isinstance(exc, OverflowError):
        return f"a value is out of range ({exc})"
    if isinstance(exc, MemoryError):
        return "out of memory"
    if type(exc) in (sqlite3.OperationalError, sqlite3.DatabaseError):
        return f"database: {exc}"
    return None


def _is_help_request(exc: BaseException) -> bool:
    return type(exc).__name__ == "NoArgsIsHelpError"


def convert(exc: Exception) -> click.ClickException:
    """``exc`` as the ClickException the boundary raises (the traceback is printed for bugs)."""
    if isinstance(exc, OneLineError | InternalError):
        return exc
    message = user_message(exc)
    if message is not None:
        return OneLineError(" ".join(message.split()) or type(exc).__name__)
    traceback.print_exception(exc, file=sys.stderr)
    from seedzer import __version__

    return InternalError(f"this is a bug in seedzer {__version__}, not a problem with your input; "
                         f"please report it to {REPORT_BUGS} with the traceback above")


class SeedzerGroup(click.Group):
    """A click group whose errors follow the module's rule: one line and status 2, or a bug report."""

    def make_context(self, info_name: str | None, args: list[str], parent: click.Context | None = None,
                     **extra: Any) -> click.Context:
        """Parse the group's own options; a usage error becomes one line."""
        try:
            return super().make_context(info_name, args, parent=parent, **extra)
        except click.ClickException as exc:
            if _is_help_request(exc):
                raise
            raise convert(exc) from None

    def invoke(self, ctx: click.Context) -> Any:
        """Run the sub-command, turning user errors into ``error: ...`` and bugs into a report request."""
        try:
            return super().invoke(ctx)
        except (click.exceptions.Exit, click.exceptions.Abort, KeyboardInterrupt):
            raise
        except click.ClickException as exc:
            if _is_help_request(exc):
                raise
            raise convert(exc) from None
        except Exception as exc:
            if isinstance(exc, OSError) and exc.errno == errno.EPIPE:
                raise
            raise convert(exc) from None


class FiniteFloat(click.ParamType):
    """A float option that must be finite and within ``[low, high]`` (``low`` excluded if ``open_low``)."""

    name = "number"

    def __init__(self, low: float, high: float, *, open_low: bool = False, unit: str = "") -> None:
        self.low, self.high, self.open_low, self.unit = low, high, open_low, unit

    def describe(self) -> str:
        """The accepted range in words."""
        low = f"> {self.low:g}" if self.open_low else f">= {self.low:g}"
        unit = f" {self.unit}" if self.unit else ""
        return f"must be a finite number {low} and <= {self.high:g}{unit}"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> float:
        """Parse and range-check ``value``."""
        if isinstance(value, float | int) and not isinstance(value, bool):
            number = float(value)
        else:
            try:
                number = float(str(value).strip())
            except ValueError:
                self.fail(f"{value!r} is not a number", param, ctx)
        too_low = number <= self.low if self.open_low else number < self.low
        if not math.isfinite(number) or too_low or number > self.high:
            self.fail(f"{self.describe()} (got {value})", param, ctx)
        return number


CONFIG_OPTION = click.option(
    "--config", "config_path", type=click.Path(path_type=Path), default=None,
    help="YAML configuration file (defaults apply to every field it omits; see `seedzer config show`).",
)
"""The ``--config`` option of every verb that reads the configuration."""
MINUTES = FiniteFloat(0, MAX_MINUTES, open_low=True, unit="minutes (a year)")
"""A budget in minutes (``--minutes`` of every verb): finite, > 0, at most a year."""


def bounded_int(low: int, high: int) -> click.IntRange:
    """An integer option within ``[low, high]``."""
    return click.IntRange(min=low, max=high)
