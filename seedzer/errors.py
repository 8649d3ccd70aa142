"""User-facing errors. Each carries a one-line message naming the culprit (file, field, directory)."""

from __future__ import annotations

from pathlib import PurePath

REPORT_BUGS = "the Seedzer issue tracker"
"""Where internal errors (tracebacks) should be reported."""


class SeedzerError(Exception):
    """Base of every error the CLI reports as a single ``error: ...`` line with exit status 2."""


class ConfigError(SeedzerError):
    """A configuration file or value is invalid (message names the file and the field)."""


class PoolError(SeedzerError):
    """A seed pool is missing, empty or unreadable (message names the directory or file)."""


class CampaignError(SeedzerError):
    """A campaign directory cannot be created, written or resumed (message names the path)."""


class ModelError(SeedzerError):
    """An input model is corrupt or unsupported (message names the file)."""


class UsageError(SeedzerError):
    """A command-line value is out of range or inconsistent with another (message names the option)."""


def shown(value: str | PurePath | object) -> str:
    """``value`` as printable text: bytes of a non-UTF-8 file name appear as ``\\xNN`` escapes.

    Paths from the file system may hold lone surrogates (Python's ``surrogateescape``), which no
    terminal or UTF-8 stream can encode; every message naming a path should go through this.
    """
    text = str(value)
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        pass
    try:
        return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    except UnicodeEncodeError:  # surrogates that are not escaped bytes (e.g. from JSON "\ud800")
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
